"""What each viewer is shown, of a battle and of a table.

Pure functions of records already read: nothing here reads the database or speaks Socket.IO. The
authority's sync, the broadcaster's updates (:mod:`webapp.broadcast`) and the heartbeat's stamps all
project through them, so a page that syncs gets exactly what an update gave it. The battle's view is
the rule system's own projection (``view_for``) with the common view shape added
(``rules.engine.project``), each event in the words written for this viewer;
what is hidden from a viewer is decided there, never here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rules import Viewer, engine, get_system
from rules import physical as physical_dice
from rules.chances import HELP as CHANCES_HELP
from rules.core import event_for
from rules.fair import dice_info, undone_versions

from .assets import board_payload
from .fog import hide_fogged
from .models import Battle, GameTable, Seat, display_settings
from .store import BattleRecord, told_version
from .wire import dumps_bytes


def seats_playing(state: Mapping[str, Any]) -> list[str]:
    """The public ids of the seats that play at least one combatant of a battle, sorted.

    >>> seats_playing({"combatants": {"c1": {"controller": "seat", "seat": "s2"}, "c2": {"controller": "gm", "seat": None},
    ...                               "c3": {"controller": "seat", "seat": "s1"}, "c4": {"controller": "seat", "seat": "s2"}}})
    ['s1', 's2']
    """
    return sorted({str(c["seat"]) for c in state.get("combatants", {}).values() if c.get("controller") == "seat" and c.get("seat")})


def project(battle: Battle | BattleRecord, viewer: Viewer, events: Iterable[Mapping[str, Any]],
            undo_offer: dict[str, Any] | None, *, fog: frozenset[tuple[int, int]] = frozenset()) -> dict[str, Any]:
    """One viewer's payload of a battle: its view, the events it may see, the versions those events
    say an undo took back (``undone``: every page marks them in its log), and for the GM the step an
    undo would take back now (``undo_offer``, named for the confirmation; None: nothing to undo).
    ``fog``: the table's fogged squares; nothing standing on one reaches a player (but their own
    combatants) or a spectator (:func:`webapp.fog.hide_fogged`)."""
    viewer = shown_as(battle.state, viewer)
    system = get_system(battle.system_id)
    view = engine.project(system, battle.state, viewer)  # the system's part and the common view shape
    physical = physical_dice.dice_view(battle.state, viewer)  # the roll due from real dice (H9)
    if physical is not None:  # while the battle waits for dice, nobody may declare anything
        view = {**view, "physical": physical, **({"legal": []} if physical["due"] else {})}
    # each event in the words written for this viewer (rules.core.event_for)
    visible = [shown for ev in events if (shown := event_for(ev, viewer, battle.state)) is not None]
    # a player's or spectator's version stays where it was across a GM's secret (see CommandResult.quiet)
    version = battle.version if viewer.is_gm else told_version(battle)
    # the steps taken back, as the undos this viewer may see name them (a GM's secret undone stays one)
    said: dict[int, list[Mapping[str, Any]]] = {}
    for ev in visible:
        if ev.get("type") == "battle.undone" or ev.get("type") == "dice.entropy":
            said.setdefault(int(ev["v"]), []).append(ev)
    payload: dict[str, Any] = {"battle_id": battle.id, "v": version, "system": battle.system_id, "status": battle.status, "view": view, "events": visible,
               "undone": sorted(undone_versions(said)) if said else [], "dice": dice_info(battle.seed, battle.mix, battle.status)}
    # who plays: the GM's console names the seats still waiting for a combatant; a player's
    # page knows whether the GM has given it one yet (a seat that plays nothing gets nothing
    # more than the spectators, so such seats still share the spectators' projection)
    if viewer.is_gm:
        payload["seats_playing"] = seats_playing(battle.state)
        payload["undo"] = undo_offer
    elif (own := viewer.own_combatants(battle.state)):
        payload["yours"] = own
    return hide_fogged(payload, fog, viewer)


def shown_as(state: Mapping[str, Any], viewer: Viewer) -> Viewer:
    """Whom a battle is projected for: a seat that controls no combatant, and that no roll due
    names, is shown what the spectators are (the rules see a seat only through the combatants it
    controls), so the broadcaster sends such seats the spectators' payload without working it out
    again; any other viewer is itself.

    >>> state = {"combatants": {"c1": {"controller": "seat", "seat": "s1"}}}
    >>> [shown_as(state, v).role for v in (Viewer.player("s1"), Viewer.player("s2"), Viewer.gm(), Viewer.spectator())]
    ['player', 'spectator', 'gm', 'spectator']
    >>> shown_as({**state, "physical": {"pending": {"need": {"seats": ["s2"]}, "viewer": {"seat": "s1"}}}}, Viewer.player("s2")).role
    'player'
    """
    if viewer.role == "player" and not physical_dice.names_seat(state, viewer.seat) and not viewer.own_combatants(state):
        return Viewer.spectator()
    return viewer


@dataclass(frozen=True)
class ConsoleShelf:
    """What only the GM's payload of a table carries besides the table row: the roster library of the
    table's rule system (names and sizes), the roster the lineup came from, the paired screens."""

    rosters: list[dict[str, Any]] = field(default_factory=list)
    roster_id: int | None = None
    screens: list[dict[str, Any]] = field(default_factory=list)


def table_payload(table: GameTable, viewer: Viewer, seats: list[Seat], *, join: dict[str, str] | None,
                  shelf: ConsoleShelf | None = None) -> dict[str, Any]:
    """What a viewer's page shows of the table itself. ``join``: the join corner while it shows (to
    everyone), else None; ``shelf``: the GM's extras, needed for the GM's payload only."""
    system = get_system(table.system_id)
    payload: dict[str, Any] = {
        "slug": table.slug,
        "name": table.name,
        "system": {"id": system.id, "name": system.name, "summary": system.summary},
        # what the pages read of the system instead of its id: grid, round word, and what the TV's
        # odds panel asks (only while the GM shows odds on the TV)
        "traits": system.traits.to_dict(odds=display_settings(table.display).get("show_odds") is True),
        "battle_id": table.battle_id,
        "role": viewer.role,
        "help": [*system.help(), CHANCES_HELP],  # (who's winning: rules/chances.py)
        # the map under the grid, token colours and portraits, blocked squares (every viewer; a
        # hidden combatant's token look only to the GM)
        "board": board_payload(table.board, () if viewer.is_gm else hidden_tokens(table)),
        # the names the players typed are public: the display says "Now: Jinx (Alice)"
        "seat_names": {s.public_id: s.name for s in seats},
        "display": display_settings(table.display),
        "join": join,
        # the table's revision (:attr:`webapp.models.GameTable.revision`): a page keeps the newest
        "revision": table.revision,
    }
    if viewer.role == "player":
        mine = next((s for s in seats if s.public_id == viewer.seat), None)
        payload["seat"] = {"id": viewer.seat, "name": mine.name if mine else ""}
    if viewer.is_gm:
        if shelf is None:
            raise ValueError("the GM's table payload needs the GM's shelf (rosters, screens)")
        payload.update(
            join_code=table.join_code,
            seats=[{"id": s.public_id, "name": s.name} for s in seats],
            lineup=table.lineup,
            options=table.options,
            gm_notes=table.gm_notes,
            forms={
                "combatant": [f.to_dict() for f in system.combatant_fields()],
                "options": [f.to_dict() for f in system.battle_option_fields()],  # with who rolls
                "sides": list(system.sides),
                "min_combatants": system.min_combatants,
                "max_combatants": system.max_combatants,
            },
            presets=system.presets(),
            rosters=shelf.rosters,
            # the roster the lineup came from (survivors may be written back over it), or None
            roster_id=shelf.roster_id,
            screens=shelf.screens,
        )
    payload["stamp"] = stamp_of(payload)
    return payload


def hidden_tokens(table: GameTable) -> list[str]:
    """The combatants of the table's battle hidden from the table (their token looks reach only the
    GM): as the last hide or reveal of that battle left them (``board["hidden"]``, written by
    webapp/hiding.py), else as its lineup began it.

    >>> from webapp.models import GameTable
    >>> hidden_tokens(GameTable(battle_id=3, lineup=[{"id": "g", "hidden": True}, {"id": "j"}], board={}))
    ['g']
    >>> hidden_tokens(GameTable(battle_id=3, lineup=[{"id": "g", "hidden": True}], board={"hidden": {"battle": 3, "ids": []}}))
    []
    """
    kept = (table.board or {}).get("hidden") if isinstance(table.board, dict) else None
    if isinstance(kept, dict) and kept.get("battle") == table.battle_id and table.battle_id is not None:
        return [str(cid) for cid in kept.get("ids") or []]
    return [str(e.get("id")) for e in table.lineup or [] if isinstance(e, dict) and e.get("hidden") is True]


def stamp_of(payload: dict[str, Any]) -> str:
    """A short digest of a table payload: a page compares its table's with the heartbeat's.

    >>> stamp_of({"name": "Keep"}) == stamp_of({"name": "Keep"}) != stamp_of({"name": "Tower"})
    True
    """
    return hashlib.blake2b(dumps_bytes(payload), digest_size=8).hexdigest()
