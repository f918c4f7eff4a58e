"""Who's winning, live (issue 37): the chances follow each update as a message of their own.

Never in the command path: the authority answers and broadcasts a command first; then
:meth:`LiveChances.battle_updated` (the app hands it every accepted command after its broadcast)
only notes the battle as the command left it. One worker per process (a background task: a
greenlet under gevent) works the notes out one at a time with :func:`rules.chances.chances`, within
the time the configuration gives (``chances_seconds``, 1 s by default; 0: no live chances), yielding between playouts so that the other tables' commands are answered
meanwhile. At most one computation per battle: a newer version of the same battle supersedes the
note, and stops a computation under way. The playouts are seeded from the battle's seed and the
version, so the replay (webapp/replay_chances.py) shows the same numbers. Where a system has an
exact way (a Phantom's Bane duel's chain), it gets a tenth of the time first: a chain already worked
out answers at once. One that is not leaves the rest to the playouts, and the worker goes on with it
afterwards while no note waits (:meth:`LiveChances.refine`): once whole, the exact chances of that
version replace the estimate, on the pages and where they are kept.

What is sent: ``chances {battle_id, v, sides: [{side, name, p}], draw, none, method, n}``

- to the GM's room, always (the console's bar);
- to the spectators' room (the table display and the spectator page) only while the GM has
  ``show_chances`` on (:data:`webapp.models.DISPLAY_DEFAULTS`; off by default: the chances can hint
  at hidden strength), and never after a GM's secret (the others hold an older version);
- to the seats' rooms only while the GM has ``phones_chances`` on, under the same rule.

With the Redis queue the emits travel through it like every other, so each process's pages get them.
A page that connects or syncs gets the latest chances of the version it holds in the sync's answer
(:func:`for_sync`), worked out now if this process has none (the same numbers: the same seed).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlmodel import select

from rules import Viewer, get_system
from rules import chances as rules_chances

from .broadcast import room_of
from .models import BattleChances, display_settings
from .store import told_version

log = logging.getLogger("battleboard")
#: how many battles' latest chances a process keeps for the pages that sync
KEPT = 256
#: who may see the chances: the display settings that let the spectators' and the seats' rooms have them
SPECTATORS, PHONES = "show_chances", "phones_chances"
#: the share of an update's time the exact way gets first (a duel's chain already worked out answers
#: at once; one that is not leaves the rest to the playouts, for a ±3-point estimate within the time)
EXACT_SHARE = 0.1
#: how many updates' time the worker, with nothing else to do, spends going on with the exact way of
#: the last update that got playouts; once whole, its exact chances replace the estimate
REFINING = 5


@dataclass(frozen=True)
class Note:
    """A battle's version to work out: as the command left it."""

    battle_id: int
    table_id: int
    version: int
    #: whether the players' and spectators' pages hold this version too (not after a GM's secret:
    #: then they hold an older one, and are told nothing of this one)
    public: bool
    system_id: str
    state: dict[str, Any]
    seed: str


def seed_of(seed: str, version: int) -> str:
    """The playouts' seed of a battle's version (the battle's own seed, never sent before its end)."""
    return f"chances/{seed}/{version}"


def work_out(note: Note, stop: Callable[[], bool] | None = None,
             exact_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """The ``chances`` message of a note (``stop``, ``exact_stop``: :func:`rules.chances.chances`'s)."""
    system = get_system(note.system_id)
    found = rules_chances.chances(system, note.state, seed=seed_of(note.seed, note.version), stop=stop,
                                  exact_stop=exact_stop)
    return message_of(note, found)


def message_of(note: Note, found: rules_chances.Chances) -> dict[str, Any]:
    """The ``chances`` message of a note's version."""
    return {"battle_id": note.battle_id, "v": note.version, **found.to_dict()}


def may_see(viewer: Viewer, display: Any) -> bool:
    """Whether a viewer may be sent a battle's chances at a table with these display settings."""
    if viewer.is_gm:
        return True
    settings = display_settings(display)
    return settings[SPECTATORS] if viewer.role == "spectator" else settings[PHONES] if viewer.role == "player" else False


class LiveChances:
    """This process's worker and the latest chances it worked out (see the module's docstring)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        #: the time one update's chances may take (then the playouts made so far are counted); 0: none
        self.budget = float(getattr(hub.config, "chances_seconds", 1.0))
        self._notes: OrderedDict[int, Note] = OrderedDict()
        self._latest: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._running = False
        #: what the worker is working out now (its battle and version)
        self.busy: tuple[int, int] | None = None
        #: how many computations a newer version stopped (the tests read it)
        self.superseded = 0
        #: the last note that got playouts where its system has an exact way: worked on when idle
        self._refine: Note | None = None
        #: set by :meth:`close`: the worker stops
        self._closed = False

    # --- the notes ------------------------------------------------------------------------------
    def battle_updated(self, result: Any) -> None:
        """After an accepted command's broadcast: note its battle (never works anything out here)."""
        battle = result.battle
        if battle is None or result.duplicate or getattr(result, "resent", False):
            return
        public = not result.quiet and told_version(battle) == result.version
        self.note(Note(result.battle_id, result.table_id, result.version, public, battle.system_id,
                       battle.state, battle.seed))

    def note(self, note: Note) -> None:
        if self.budget <= 0 or self._closed:
            return
        with self._guard:
            self._notes.pop(note.battle_id, None)
            self._notes[note.battle_id] = note  # the newest version supersedes an older note
        self._start()
        self._wake.set()

    def _start(self) -> None:
        with self._guard:
            if self._running:
                return
            self._running = True
        self.hub.socketio.start_background_task(self._loop)

    def _next(self) -> Note | None:
        with self._guard:
            if not self._notes:
                self._wake.clear()
                return None
            _battle, note = self._notes.popitem(last=False)
            self.busy = (note.battle_id, note.version)
            return note

    def close(self) -> None:
        """Stop the worker (the app is done with it): a computation under way stops at its next
        check and sends nothing, and no note is taken up after. The tests close each app's worker
        at their end, so that no exact chances of a finished test go on being worked out beside the
        next ones."""
        self._closed = True
        with self._guard:
            self._notes.clear()
        self._wake.set()

    def _loop(self) -> None:
        while not self._closed:
            note = self._next()
            if note is None:
                if self._closed:
                    return
                refine, self._refine = self._refine, None
                if refine is not None:
                    try:
                        self.refine(refine)
                    except Exception:  # (as below)
                        log.exception("could not work out the exact chances of battle %s", refine.battle_id)
                    continue
                self._wake.wait()
                continue
            try:
                self.run(note)
            except Exception:  # one battle's trouble never stops the others' chances
                log.exception("could not work out the chances of battle %s", note.battle_id)
            finally:
                self.busy = None

    def newer(self, note: Note) -> bool:
        """Whether a newer version of the note's battle is waiting (the note is superseded)."""
        with self._guard:
            waiting = self._notes.get(note.battle_id)
        return waiting is not None and waiting.version > note.version

    def run(self, note: Note) -> dict[str, Any] | None:
        """Work a note out within the budget and send it; None if a newer version stopped it."""
        began = time.monotonic()
        deadline, exact_deadline = began + self.budget, began + self.budget * EXACT_SHARE
        sleep = self.hub.socketio.sleep

        def stop() -> bool:
            sleep(0)  # let the other greenlets (the tables' commands) run between playouts
            return time.monotonic() > deadline or self.newer(note) or self._closed

        def exact_stop() -> bool:
            # an exact answer that takes longer leaves the rest of the time to playouts (what it
            # worked out is kept: the next update of the same duel goes on from there)
            sleep(0)
            return time.monotonic() > exact_deadline or self.newer(note) or self._closed

        message = work_out(note, stop, exact_stop)
        if self._closed:
            return None
        if self.newer(note):
            self.superseded += 1
            return None
        self.remember(note, message)
        self.send(note, message)
        self.keep(note, message)
        if message.get("method") == "playouts" and rules_chances.has_exact(get_system(note.system_id)):
            self._refine = note
        return message

    def refine(self, note: Note) -> dict[str, Any] | None:
        """With nothing else to do: go on with the note's exact way for up to :data:`REFINING`
        updates' time, stopping as soon as a note comes in. Once whole (and the note still the
        battle's latest), its exact chances are sent and kept in place of the estimate; a note that
        came in first leaves it to be taken up again after."""
        began = time.monotonic()
        sleep = self.hub.socketio.sleep

        def stop() -> bool:
            sleep(0)
            return time.monotonic() > began + self.budget * REFINING or self.waiting() or self._closed

        found = rules_chances.exact_only(get_system(note.system_id), note.state, stop)
        if found is None or self._closed:
            if self.waiting() and not self.newer(note):
                self._refine = note
            return None
        latest = self.latest(note.battle_id)
        if self.newer(note) or latest is None or latest[0]["v"] != note.version:
            return None
        message = message_of(note, found)
        self.remember(note, message)
        self.send(note, message)
        self.keep(note, message)
        return message

    def waiting(self) -> bool:
        """Whether a note waits to be worked out."""
        with self._guard:
            return bool(self._notes)

    def keep(self, note: Note, message: dict[str, Any]) -> None:
        """Store the chances of the note's version (the replay and the report read them back); tried
        three times (another process keeping the same version meanwhile, the database busy a moment)."""
        for attempt in range(3):
            try:
                with self.hub.service.session() as s:
                    found = s.exec(select(BattleChances).where(BattleChances.battle_id == note.battle_id,
                                                               BattleChances.version == note.version)).first()
                    if found is None:
                        s.add(BattleChances(battle_id=note.battle_id, version=note.version, payload=message))
                    else:
                        found.payload = message
                        s.add(found)
                    s.commit()
                return
            except Exception as exc:  # noqa: BLE001  (the chances are kept at best: never the worker's end)
                if attempt == 2:
                    log.warning("could not keep the chances of battle %s, version %s: %s", note.battle_id, note.version, exc)
                    return
                self.hub.socketio.sleep(0.1 * (attempt + 1))

    def remember(self, note: Note, message: dict[str, Any]) -> None:
        with self._guard:
            self._latest.pop(note.battle_id, None)
            self._latest[note.battle_id] = {"message": message, "public": note.public}
            while len(self._latest) > KEPT:
                self._latest.popitem(last=False)

    def latest(self, battle_id: int) -> tuple[dict[str, Any], bool] | None:
        """The latest chances worked out here for a battle, and whether its version is public."""
        with self._guard:
            found = self._latest.get(battle_id)
        return (found["message"], found["public"]) if found else None

    # --- who gets it ------------------------------------------------------------------------------
    def rooms(self, note: Note) -> list[str]:
        """The rooms the note's chances go to."""
        rooms = [room_of(note.table_id, Viewer.gm())]
        if not note.public:
            return rooms  # a GM's secret: the others hold an older version, and are told nothing
        table = self.hub.service.table(table_id=note.table_id)
        if table.battle_id != note.battle_id:
            return rooms
        settings = display_settings(table.display)
        if settings[SPECTATORS]:
            rooms.append(room_of(note.table_id, Viewer.spectator()))
        if settings[PHONES]:
            rooms += [room_of(note.table_id, Viewer.player(seat)) for seat in self.hub.seat_ids(note.table_id)]
        return rooms

    def send(self, note: Note, message: dict[str, Any]) -> None:
        """One emit to all the note's rooms (one queue message with Redis)."""
        rooms = self.rooms(note)
        self.hub.broadcast.emit_all([("chances", message, rooms[0] if len(rooms) == 1 else rooms)])


def live(hub: Any) -> LiveChances:
    """The hub's live chances (made the first time)."""
    found = hub.app.extensions.get("battleboard_chances")
    if found is None:
        found = hub.app.extensions["battleboard_chances"] = LiveChances(hub)
    assert isinstance(found, LiveChances)
    return found


def follow(hub: Any) -> Callable[[Any], None]:
    """The authority's broadcaster: the hub's broadcast of a command, then its chances noted."""

    def broadcaster(result: Any) -> None:
        hub.battle_updated(result)
        live(hub).battle_updated(result)

    return broadcaster


def for_sync(hub: Any, viewer: Viewer, table: Any, battle: dict[str, Any] | None) -> dict[str, Any] | None:
    """The chances a syncing page gets with its battle: the latest of the version it holds, if it may
    see them and this process has them; else None, and if the battle's current version is the one
    the page holds, it is noted (the page's room gets it once worked out)."""
    if battle is None or not may_see(viewer, table.display):
        return None
    battle_id, v = battle.get("battle_id"), battle.get("v")
    if not isinstance(battle_id, int) or not isinstance(v, int):
        return None
    chances = live(hub)
    found = chances.latest(battle_id)
    if found is not None:
        message, public = found
        if message["v"] == v and (public or viewer.is_gm):
            return message
    record = hub.service.battle(battle_id)
    if record.version == v:  # (a page behind a GM's secret waits for the next update it is told of)
        chances.note(Note(battle_id, record.table_id, record.version, told_version(record) == record.version,
                          record.system_id, record.state, record.seed))
    return None
