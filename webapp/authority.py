"""The authority: one owner per battle that validates, locks, persists and hands results to the broadcaster.

Every command follows the one path of :meth:`Authority._command` (boardgame.io's master, lichess's
round actor):

1. take the battle's in-process lock (Flask-SocketIO may run two handlers at once);
2. open one store connection, read the battle and check the expected version (a battle whose last
   version this process knows, because it wrote it or another process's queue message brought it,
   is taken as it is kept, unread: the compare-and-set in step 4 catches a battle moved on meanwhile,
   and the command then starts again from a fresh read);
3. make the command's step (:meth:`Authority._make`): a rules command through
   :func:`rules.engine.step` with the dice derived for it (the code the verifier re-applies the log
   with); the board's own commands, undo and a player's client seed, from what they read of the
   battle's log through the same store connection (:class:`webapp.store.CommandStore`);
4. write the new snapshot with a compare-and-set on the version, the events and the command record;
5. remember the battle as the command left it, then hand the result to the broadcaster, which sends
   each viewer its own projection.

The compare-and-set decides across processes: two processes can never both apply a command to the
same version of a battle. Nothing here imports Flask or Socket.IO.
"""

from __future__ import annotations

import copy
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from rules import IllegalDeclaration, InvalidDeclaration, NotPermitted, RulesError, Viewer, engine, get_system
from rules.core import event as make_event
from rules.dice import mix_entropy
from rules.fair import (
    ENTROPY,
    clean_client_seed,
    command_dice,
    committed_event,
    entropy_declaration,
    entropy_event,
    secret_step,
    seed_at,
    seeds_by_step,
    undone_event,
)
from rules.hiding import hidden_names

from .config import fixed_for_tests
from .desk import UNKNOWN, CommandResult, Desk, NotFound, clean_id, offer, require_seats, rules_guard
from .models import GameTable, Seat, utcnow
from .store import BattleRecord, CommandWrite, NewBattle, record_fields, told_version
from .tables import board_settings

MSG_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
#: how many battles a process keeps as the last command it knows of left them (its own, or another
#: process's sent through the message queue): a command on one of them needs no read first
RECENT_BATTLES = 512
#: a battle record's fields in order, as another process sends it (see Authority.learn_battle)
_RECORD_FIELDS = tuple(f.name for f in fields(BattleRecord))
#: what a crash of the rules on each kind of command is called in the refusal (:func:`rules_guard`)
_GUARDED = {engine.ASSIGN: "assignment", engine.DICE_ENTER: "roll", engine.DICE_ROLL: "roll", engine.END: "end", engine.DICE_PHYSICAL: "switch",
            engine.HIDE: "hiding", engine.REVEAL: "reveal"}
#: the board's own commands, which the engine does not run: they read the battle's log
UNDO = "undo"


class StaleVersion(RulesError):
    """The client acted on an old version of the battle."""

    code = "stale"

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


def gm_secret(actor: str, events: list[dict[str, Any]], state: Mapping[str, Any]) -> bool:
    """Whether a command is a GM's secret: the GM's, and none of its events (it has some) reaches
    anyone but the GM. The players' and spectators' pages are told nothing of it (nor of its undo:
    :func:`rules.fair.undone_event` asks the same)."""
    return secret_step(actor, events, state)


def actor_of(viewer: Viewer) -> str:
    """How a command's record names who sent it (``gm``, ``seat:<public id>``, ``spectator``)."""
    if viewer.role == "player":
        return f"seat:{viewer.seat}"
    return viewer.role


@dataclass(frozen=True)
class Order:
    """One command as the authority runs it: a rules command (``command``, run by the engine), or one
    of the board's own, an undo (``kind`` :data:`UNDO`) or a seat's client seed (``kind`` ENTROPY)."""

    actor: str
    #: the command's record (a rules command's, or the board's own as the log keeps it)
    record: dict[str, Any]
    command: engine.Command | None = None
    kind: str = ""
    #: a client seed's seat and seed
    entropy: tuple[str, str] = ("", "")


@dataclass
class Made:
    """What a command made: its step, and where the new version stands in the battle's history."""

    step: engine.Step
    #: the version an undo of the new one goes back to (UNKNOWN: the version it was applied to)
    prev: Any = UNKNOWN
    #: the step an undo would take back after it (UNKNOWN: this command itself)
    offer: Any = UNKNOWN
    #: the battle's new client-seed mix, or dice seed (None: unchanged)
    mix: str | None = None
    seed: str | None = None
    #: the step the new state stands at (None: this command's)
    dice_step: int | None = None


class Authority(Desk):
    """The battles' commands: new battles, declarations, the GM's and the board's own commands."""

    #: how many versions a command may be behind when only commands beside it came in between
    #: (client seeds, one per seat; the other side's secret choice)
    BESIDE_GAP = 16

    def _lock(self, battle_id: int) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(battle_id, threading.Lock())

    # --- a new battle -------------------------------------------------------------------------
    def start_battle(self, table_id: int, *, seed: str | None = None) -> CommandResult:
        """Start a new battle from the table's lineup and options; it becomes the table's battle."""
        with self._writer:
            started = self._store.start(table_id, lambda table, seats: self._setup_battle(table, seats, seed))
        if started is None:
            raise NotFound("no such table")
        new = started.new
        battle = BattleRecord(started.battle_id, table_id, new.system_id, 1, new.state, new.seed, new.status)
        # this process knows the battle's first version (its first command needs no read, and the
        # broadcast carries it to the other processes), and every room gets it
        self._remember_battle(battle)
        result = CommandResult(
            battle.id, battle.table_id, 1, 0, self._wire_events(1, new.events), battle=battle,
            seat_ids=[seat.public_id for seat in started.seats], table=started.table, seats=started.seats, undo_offer=None,
        )
        self._broadcast(result)
        return result

    def _setup_battle(self, table: GameTable, seats: list[Seat], seed: str | None) -> NewBattle:
        """A new battle of the table's lineup and options: its system, first state, events (the dice
        commitment last), seed, and the lineup and options it started from."""
        system = get_system(table.system_id)
        with rules_guard("lineup"):
            lineup = system.validate_lineup(table.lineup)
        require_seats(lineup, seats)
        if len(lineup) < system.min_combatants:
            raise IllegalDeclaration(f"{system.name} needs at least {system.min_combatants} combatants in the lineup")
        options = system.validate_options(table.options)
        blocked = board_settings(table.board)["blocked"]
        if blocked and system.traits.grid:  # the table's blocked squares, enforced by the rules
            options = {**options, "blocked": blocked}
        battle_seed = seed or fixed_for_tests(self.test_seed, 32, "battle", table.id, table.battle_id) or secrets.token_hex(16)
        setup = {"lineup": copy.deepcopy(lineup), "options": copy.deepcopy(options)}
        with rules_guard("lineup"):
            state, events = engine.start(system, lineup, options, command_dice(battle_seed, "", 1))
        events = list(events) or [make_event("battle.started", f"A {system.name} battle begins.")]
        return NewBattle(system.id, state, [*events, committed_event(battle_seed)], battle_seed, setup)

    # --- the commands -------------------------------------------------------------------------
    def declare(
        self,
        battle_id: int,
        viewer: Viewer,
        declaration: Any,
        *,
        expected_v: Any = None,
        msg_id: Any = None,
        actor: str = "",
        table_id: int | None = None,
    ) -> CommandResult:
        """Apply one declaration of a viewer to a battle (of the table ``table_id``, when given)."""
        if not isinstance(declaration, dict):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        if not isinstance(kind, str):
            raise InvalidDeclaration("a declaration needs a type")
        if kind in engine.RESERVED:  # the board's own commands have their own doors
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        # the time it arrived: the engine records it with the command, and only the systems that keep
        # a clock read it (a time the client wrote into its declaration is never taken)
        payload = {key: value for key, value in declaration.items() if key not in ("type", engine.AT)}
        command = engine.Command(kind, payload, viewer, now=time.time())
        order = Order(actor or actor_of(viewer), command.record(), command)
        return self._command(battle_id, expected_v, msg_id, order, table_id=table_id)

    def undo(self, battle_id: int, viewer: Viewer, *, expected_v: Any = None, msg_id: Any = None) -> CommandResult:
        """Take back one step, the last command: the battle goes back to the state that command was
        applied to (a client seed stays mixed in: undo passes over it). Again and again, back to the
        start, after the end too. The state brought back stands at its step again, so the same
        command made again rolls the same dice (:mod:`rules.fair`)."""
        if not viewer.is_gm:
            raise NotPermitted("only the GM may undo")
        return self._command(battle_id, expected_v, msg_id, Order("gm", {"type": UNDO}, kind=UNDO))

    def assign(self, battle_id: int, viewer: Viewer, combatant: Any, controller: Any, seat: Any = None, *, expected_v: Any = None) -> CommandResult:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may hand combatants to players")
        if not isinstance(combatant, str):
            raise InvalidDeclaration("name the combatant to assign")
        if controller not in ("gm", "computer", "seat"):
            raise InvalidDeclaration("controller must be gm, computer or seat")
        battle = self.battle(battle_id)
        if controller == "seat":
            if not isinstance(seat, str) or seat not in {x.public_id for x in self.seats(battle.table_id)}:
                raise InvalidDeclaration("that player seat is not at this table")
        else:
            seat = None

        command = engine.Command(engine.ASSIGN, {"combatant": combatant, "controller": controller, "seat": seat}, viewer)
        result = self._command(battle_id, expected_v, None, Order("gm", command.record(), command))
        with self.session() as s:  # the lineup follows, so a restart keeps the assignment
            table = self._get_table(s, battle.table_id)
            lineup = [dict(e) for e in table.lineup]
            for entry in lineup:
                if entry.get("id") == combatant:
                    entry["controller"], entry["seat"] = controller, seat
            table.lineup = lineup
            s.add(table)
            s.commit()
        return result

    def end_battle(self, battle_id: int, viewer: Viewer, *, expected_v: Any = None) -> CommandResult:
        if not viewer.is_gm:
            raise NotPermitted("only the GM may end the battle")
        command = engine.Command(engine.END, {}, viewer)
        return self._command(battle_id, expected_v, None, Order("gm", command.record(), command))

    def add_entropy(self, battle_id: int, viewer: Viewer, client_seed: Any, *, table_id: int | None = None) -> CommandResult:
        """Mix a seat's client seed into the battle's dice (H7): a command of its own (a public event
        with the seat and the seed), once per seat and battle (its message id ``entropy-<seat>``:
        a second one is answered as a duplicate and changes nothing). Undo passes over it."""
        if viewer.role != "player" or not viewer.seat:
            raise NotPermitted("only a player's phone adds a client seed")
        seed = clean_client_seed(client_seed)
        seat = viewer.seat
        order = Order(f"seat:{seat}", entropy_declaration(seat, seed), kind=ENTROPY, entropy=(seat, seed))
        return self._command(battle_id, None, f"entropy-{seat}", order, table_id=table_id)

    def roll_dice(self, battle_id: int, viewer: Viewer, request: Mapping[str, Any], *, by: str = "",
                  msg_id: Any = None, table_id: int | None = None) -> CommandResult:
        """A roll for anything (:mod:`rules.roller`) in a running battle: a command of the log with the
        battle's committed dice, which leaves the board as it was (so, like a client seed, it makes no
        other command out of date). ``by``: the roller's name as the table knows it."""
        payload = {"notation": request.get("notation"), "label": request.get("label") or "",
                   "secret": request.get("secret", False), "by": by}
        command = engine.Command(engine.DICE_ROLL, payload, viewer)
        return self._command(battle_id, None, msg_id, Order(actor_of(viewer), command.record(), command), table_id=table_id)

    # --- physical dice: the battle waits for faces typed on a phone or the GM console (H9) --------
    def enter_dice(self, battle_id: int, viewer: Viewer, faces: Any = None, *, board: bool = False,
                   expected_v: Any = None, msg_id: Any = None, table_id: int | None = None) -> CommandResult:
        """Faces typed for the roll due (by its roller's seat or the GM), or the GM's override
        (``board``: the board's dice roll it); the pending declaration then resolves, or asks for
        the next roll. A bad entry is refused and nothing changes."""
        if board and not viewer.is_gm:
            raise NotPermitted("only the GM may roll with the board's dice for a player")
        if viewer.role == "spectator":
            raise NotPermitted("spectators watch; they cannot roll")
        # the command's record is the entry it made (replay and the verifier re-apply that)
        command = engine.Command(engine.DICE_ENTER, {"board": True} if board else {"faces": faces}, viewer)
        return self._command(battle_id, expected_v, msg_id, Order(actor_of(viewer), {"type": engine.DICE_ENTER}, command),
                             table_id=table_id)

    def set_physical(self, battle_id: int, viewer: Viewer, combatant: Any, on: Any, *, expected_v: Any = None) -> CommandResult:
        """The GM switches one combatant to physical dice (or back to the board's) mid-battle."""
        if not viewer.is_gm:
            raise NotPermitted("only the GM may switch a combatant to real dice")
        command = engine.Command(engine.DICE_PHYSICAL, {"combatant": combatant, "physical": on}, viewer)
        return self._command(battle_id, expected_v, None, Order("gm", command.record(), command))

    def set_hidden(self, battle_id: int, viewer: Viewer, combatant: Any, hidden: bool, *, expected_v: Any = None) -> CommandResult:
        """The GM hides a combatant from the table or reveals it (rules/hiding.py)."""
        if not viewer.is_gm:
            raise NotPermitted("only the GM may hide or reveal a combatant")
        command = engine.Command(engine.HIDE if hidden else engine.REVEAL, {"combatant": combatant}, viewer)
        return self._command(battle_id, expected_v, None, Order("gm", command.record(), command))

    # --- the one path of a command ----------------------------------------------------------
    def _command(
        self,
        battle_id: Any,
        expected_v: Any,
        msg_id: Any,
        order: Order,
        table_id: int | None = None,
    ) -> CommandResult:
        """Run one command: lock -> read -> step -> compare-and-set write -> remember -> publish."""
        actor = order.actor
        battle_id = clean_id(battle_id, "battle_id")
        if expected_v is not None and (not isinstance(expected_v, int) or isinstance(expected_v, bool)):
            raise InvalidDeclaration("expected_v must be a whole number")
        if msg_id is not None and (not isinstance(msg_id, str) or not MSG_ID_RE.match(msg_id)):
            raise InvalidDeclaration("msg_id must be a short string of letters, digits and -_.:")
        resend: BattleRecord | None = None
        with self._lock(battle_id), self._writer, self._store.connection() as conn:
            result = None
            recent = self._recent_battle(battle_id) if msg_id is not None else None
            if recent is not None and self._current(recent, expected_v, actor) and table_id in (None, recent.table_id):
                # This process knows the last version of the battle (it wrote it, or another process
                # sent it along with its update): apply to that without reading it. When the battle
                # has moved on meanwhile, or this message was applied already, the compare-and-set
                # or the message id refuses the write, and the command goes the long way below,
                # from a fresh read. So does a refusal by the rules
                # (it may come from the old state) and a dead connection (the message id tells,
                # after the read, whether the write landed before the connection died).
                battle = recent  # (the engine copies the state it applies a command to)
                try:
                    result = self._apply(conn, battle, None, msg_id, order)
                except RulesError:
                    result = None
                if result is None:
                    self._forget_battle(battle_id)
            if result is None:
                found = self._store.read(conn, battle_id, msg_id)
                if found is None:
                    raise NotFound("no such battle")
                battle, seen_version = found.battle, found.seen_version
                if table_id is not None and battle.table_id != table_id:
                    raise NotPermitted("that battle is not at your table")
                if seen_version is not None:
                    resend = battle if seen_version == battle.version else None
                    result = CommandResult(battle.id, battle.table_id, seen_version, seen_version - 1, [], duplicate=True)
                elif not self._current(battle, expected_v, actor) and not self._moved_on_beside(conn, battle, expected_v, order.record, actor):
                    now = battle.version if actor == "gm" else told_version(battle)
                    raise StaleVersion(
                        f"the battle has moved on (you saw version {expected_v}, it is now at {now}); look again and retry", now,
                    )
                else:
                    # the state was decoded from the row just now: the rules may have this copy
                    result = self._apply(conn, battle, found.seat_ids, msg_id, order)
                    if result is None:
                        raise StaleVersion("another command was applied at the same moment; look again and retry", battle.version + 1)
            if isinstance(result.battle, BattleRecord):  # (a command of this path leaves the store's record)
                self._remember_battle(result.battle)
        if resend is not None:  # the update of a message applied already may never have gone out (a process died)
            self._resend(resend, actor)
        self._broadcast(result)
        return result

    @staticmethod
    def _current(battle: BattleRecord, expected_v: Any, actor: str) -> bool:
        """Whether a command made on version ``expected_v`` was made on the battle as it is: the
        version itself, or for a player or spectator the last version they were told of (a GM's
        secret since then changed nothing they see, and their command must not tell them of it)."""
        return expected_v is None or expected_v == battle.version or (actor != "gm" and expected_v == told_version(battle))

    def _resend(self, battle: BattleRecord, actor: str) -> None:
        """Send the battle's last update again, to every page: the reply to a message that was
        applied already (its sender did not get the answer, so pages may lack the update too; the
        process that applied it may have died before broadcasting it). Pages that have it ignore it."""
        events = [dict(ev) for ev in self.events_since(battle.id, battle.version - 1) if ev["v"] == battle.version]
        quiet = gm_secret(actor, events, battle.state)
        self._broadcast(CommandResult(battle.id, battle.table_id, battle.version, battle.version - 1, events, battle=battle,
                                      quiet=quiet, resent=True))

    def _moved_on_beside(self, conn: Any, battle: BattleRecord, seen: Any, declaration: dict[str, Any], actor: str = "gm") -> bool:
        """Whether every command since version ``seen`` left what ``declaration`` was made on as it was,
        so that it still reads the same board and is applied rather than refused as out of date:

        - a player's client seed leaves the battle's state as it was (a player's first tap often
          races their own phone's seed);
        - when ``declaration`` is one of the system's simultaneous declarations (Phantom's Bane's
          secret choice), another combatant's simultaneous declaration: the two sides choose at the
          same moment, blind to each other, and the turn cannot have resolved without this
          combatant's own choice. A choice for the same combatant, or any other command, in between
          still makes it out of date;
        - for a player's or a spectator's command, a GM's secret (a command whose events reach only
          the GM): it changed nothing they see, and refusing would tell them it happened.
        """
        current = battle.version
        if not isinstance(seen, int) or not 0 <= seen < current or current - seen > self.BESIDE_GAP:
            return False
        system = get_system(battle.system_id)
        commands = self._store.commands_after(conn, battle.id, seen, current)
        said = self._store.events_after(conn, battle.id, seen) if actor != "gm" else {}
        secret = {version for version, by, _d in commands if gm_secret(by, said.get(version, []), battle.state)}
        return len(commands) == current - seen and all(
            isinstance(d, dict) and (d.get("type") in (ENTROPY, engine.DICE_ROLL) or system.made_beside(declaration, d) or version in secret)
            for version, _by, d in commands)

    def _apply(
        self,
        conn: Any,
        battle: BattleRecord,
        seat_ids: list[str] | None,
        msg_id: str | None,
        order: Order,
    ) -> CommandResult | None:
        """Apply a command to ``battle`` (whose state the rules may change) and write it; None if the
        compare-and-set or the message id refused the write (nothing was written)."""
        current = battle.version
        new_version = current + 1
        # the step this command is (its dice): one past the step of the state it is applied to
        key = battle.at_step + 1
        made = self._make(conn, battle, order, new_version, key)
        # (the events include the dice seed's reveal, once the battle ends)
        step = made.step
        new_state, events, checkpoint, declaration = step.state, step.events, step.checkpoint, step.record or order.record
        actor = order.actor
        status = new_state.get("status", battle.status)
        # a GM's secret (Phantom's Bane's "block escape", a hidden NPC's hit points): the others'
        # pages get nothing, and their version stays where it was
        quiet = gm_secret(actor, events, new_state)
        told = told_version(battle)
        mix, new_seed = made.mix, made.seed
        # the new state stands at this command's step (an undo's at the step of the state it brings back)
        dice_step = key if made.dice_step is None else made.dice_step
        prev_version = current if made.prev is UNKNOWN else made.prev
        write = CommandWrite(
            battle_id=battle.id,
            table_id=battle.table_id,
            current=current,
            new_version=new_version,
            state=new_state,
            status=status,
            prev_version=prev_version,
            checkpoint=checkpoint,
            events=events,
            msg_id=msg_id or f"auto-{new_version}-{secrets.token_hex(4)}",
            actor=actor[:80],
            declaration=declaration,
            at=utcnow(),
            mix=mix,
            seed=new_seed,
            public_version=told if quiet else new_version,
            dice_step=dice_step,
        )
        written = self._store.write(conn, write)
        if written is None:
            return None
        after = BattleRecord(battle.id, battle.table_id, battle.system_id, new_version, new_state, new_seed or battle.seed, status,
                             battle.mix if mix is None else mix, write.public_version, dice_step)
        # what an undo would take back now: this command itself, unless it was an undo or a client seed
        if made.offer is not UNKNOWN:
            offered = made.offer
        else:
            offered = offer(new_version, events) if prev_version == current else UNKNOWN
        return CommandResult(
            battle.id, battle.table_id, new_version, current, self._wire_events(new_version, events), battle=after,
            seat_ids=written.seat_ids if written.seat_ids is not None else seat_ids, quiet=quiet, prev_told=told, undo_offer=offered,
            hiding_changed=hidden_names(battle.state) != hidden_names(new_state),
        )

    def _make(self, conn: Any, battle: BattleRecord, order: Order, version: int, key: int) -> Made:
        """The step of a command applied to ``battle`` (its state is never changed), making ``version``
        with the dice of step ``key``. What the board's own commands read of the battle's log, they
        read on the command's store connection ``conn``."""
        store = self._store
        state = battle.state
        if order.kind == UNDO:
            current = store.snapshot(conn, battle.id, version - 1)
            back_to = current.prev_version if current is not None else None
            target = store.snapshot(conn, battle.id, back_to) if back_to is not None else None
            if back_to is None or target is None:
                raise IllegalDeclaration("there is nothing to undo: the battle is back at its start")
            taken = back_to + 1  # the command applied to that state: the last step
            said = store.events_at(conn, battle.id, taken)
            made_by = store.actor_at(conn, battle.id, taken)
            before = target.prev_version
            offered = offer(before + 1, store.events_at(conn, battle.id, before + 1)) if before is not None else None
            events = [undone_event(taken, said, made_by or "", state)]
            new_seed = None
            if battle.status == "ended":
                # taking back the end of a battle, whose seed the end revealed: the battle goes on with
                # a fresh seed, committed to in the undo's own events (a running battle's seed stays
                # secret), for every step not rolled yet; a step made again rolls its revealed dice
                new_seed = secrets.token_hex(16)
                events.append(committed_event(new_seed, store.last_step_rolled(conn, battle.id) + 1))
            # the command's record: replay and the verifier take back the same step
            made = engine.settle(state, copy.deepcopy(target.state), events, target.checkpoint, seed=battle.seed,
                                 record={**order.record, "step": taken})
            return Made(made, prev=before, offer=offered, seed=new_seed,
                        dice_step=target.version if target.dice_step is None else target.dice_step)
        if order.kind == ENTROPY:
            if battle.status == "ended":
                raise IllegalDeclaration("this battle has ended: its dice are all rolled")
            seat, seed = order.entropy
            current = store.snapshot(conn, battle.id, version - 1)  # undo looks through this version as if it were not there
            prev = current.prev_version if current is not None else version - 1
            offered = offer(prev + 1, store.events_at(conn, battle.id, prev + 1)) if prev is not None else None
            checkpoint = current.checkpoint if current is not None else False
            made = engine.settle(state, state, [entropy_event(seat, seed)], checkpoint, seed=battle.seed, record=order.record)
            return Made(made, prev=prev, offer=offered, mix=mix_entropy(battle.mix, seat, seed))
        command = order.command
        assert command is not None

        def board_dice(kept: Mapping[str, Any]) -> Any:
            # the board's dice of the command that first asked for the dice typed now (the same at
            # every resumption, so the rolls around the typed ones never change while the battle waits)
            first_step = int(kept.get("version", 0))
            return command_dice(self._seed_for(conn, battle, first_step), kept.get("mix", ""), first_step)

        system = get_system(battle.system_id)
        with rules_guard(_GUARDED.get(command.kind, "declaration")):
            return Made(engine.step(system, state, command, command_dice(self._seed_for(conn, battle, key), battle.mix, key),
                                    seed=battle.seed, board={"version": key, "mix": battle.mix or ""}, board_dice=board_dice))

    def _seed_for(self, conn: Any, battle: BattleRecord, key: int) -> str:
        """The seed step ``key`` rolls from: the battle's own, unless an undo took the battle back to a
        step rolled before its end was taken back (that step rolls its revealed dice again)."""
        if key > battle.version:  # the usual: no step this high was rolled before the battle's seed
            return battle.seed
        return seed_at(seeds_by_step(self._store.seed_events(conn, battle.id), battle.seed), key)


    # --- the battles as the last command this process knows of left them --------------------

    def _recent_battle(self, battle_id: int) -> BattleRecord | None:
        with self._recent_guard:
            return self._recent.get(battle_id)

    def _remember_battle(self, battle: BattleRecord, *, only_newer: bool = False) -> bool:
        """Keep the battle as a command left it (its state is not changed afterwards:
        projections only read it, and the next command applies to a copy). ``only_newer``: keep it
        only if no version as new is kept already; True if it was kept."""
        with self._recent_guard:
            known = self._recent.get(battle.id)
            if only_newer and known is not None and known.version >= battle.version:
                return False
            self._recent.pop(battle.id, None)
            self._recent[battle.id] = battle
            while len(self._recent) > RECENT_BATTLES:
                del self._recent[next(iter(self._recent))]
        return True

    def learn_battle(self, sent: Mapping[str, Any]) -> bool:
        """Keep a battle as another process's command left it: its update came through the message
        queue, after that process's write was committed. The next command here then needs no read
        either (the compare-and-set still decides: a version this process has not seen yet refuses
        the write and the command reads). An older version than the one kept is ignored, and so is a
        message that does not have the shape :meth:`battle_fields` gives; True if it was kept."""
        try:
            battle = BattleRecord(*(sent[name] for name in _RECORD_FIELDS))
        except (KeyError, TypeError):
            return False
        if not (
            all(type(getattr(battle, name)) is int for name in ("id", "table_id", "version"))
            and all(type(getattr(battle, name)) is str for name in ("system_id", "seed", "status", "mix"))
            and type(battle.state) is dict
            and (battle.public_version is None or type(battle.public_version) is int)
            and (battle.dice_step is None or type(battle.dice_step) is int)
        ):
            return False
        return self._remember_battle(battle, only_newer=True)

    @staticmethod
    def battle_fields(battle: BattleRecord) -> dict[str, Any]:
        """A battle as :meth:`learn_battle` takes it from another process (JSON-shaped, shallow)."""
        return record_fields(battle)

    def _note_hidden(self, table_id: int, battle_id: int, state: Mapping[str, Any]) -> None:
        """A command hid or revealed combatants (a hide, a reveal, an undo of one): the table's board
        remembers who is hidden now, so that the table payload gives their token looks to the GM
        alone (:func:`webapp.projection.hidden_tokens`); the broadcaster sends every room its table."""
        with self.session() as s:
            table = self._get_table(s, table_id)
            if table.battle_id != battle_id:
                return
            table.board = {**(table.board or {}), "hidden": {"battle": battle_id, "ids": sorted(hidden_names(state))}}
            s.add(table)
            s.commit()

    def _forget_battle(self, battle_id: int) -> None:
        with self._recent_guard:
            self._recent.pop(battle_id, None)

    @staticmethod
    def _wire_events(version: int, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"v": version, "i": i, **ev} for i, ev in enumerate(events)]

    def _broadcast(self, result: CommandResult) -> None:
        """Hand an accepted command to the broadcaster, complete: the battle as it left it and the step
        an undo would take back now (the broadcaster projects from these and reads nothing)."""
        if result.hiding_changed and result.battle is not None:
            self._note_hidden(result.table_id, result.battle_id, result.battle.state)
        if self.broadcaster is not None and not result.duplicate:
            if result.undo_offer is UNKNOWN:
                result = replace(result, undo_offer=self.undo_offer(result.battle_id, result.version))
            self.broadcaster(result)
