"""A battle as one JSON document (export), and such a document loaded as a finished battle (import).

The document (``docs/battle-export.schema.json``, schema version 1) holds the rule system and the
board's version, the lineup and options, every command with its actor's role, every event with its
rolls, every die drawn (:mod:`rules.fair`'s derivation), the commitment, the client seeds and, once
the battle has ended, the revealed seed. It never holds a seat key, the GM key or a roster library
key. An import is checked whole before anything is written: the schema, then the commitment, every
die and every command re-applied (:func:`webapp.verify.verify_document`); a file that fails changes
nothing.

The GM's export holds everything (``"audience": "gm"``). Anyone else, once the GM shared the
finished battle, gets the public copy (``"audience": "public"``, :func:`public_copy`): the battle as
a spectator saw it, with every die drawn, so the dice still verify; it holds no value the
spectator's view hides and no private note, so it cannot be re-applied or imported.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from sqlmodel import col, select

from rules import RulesError, Viewer, get_system
from rules.core import PUBLIC, event_for
from rules.dice import commitment
from rules.fair import ALGORITHM, ENTROPY, epoch_steps, seed_epochs
from rules.hiding import hidden_names, visible_names
from rules.hiding import scrub as scrub_hidden

from .models import (
    Battle,
    BattleCommand,
    BattleEvent,
    BattleSnapshot,
    GameTable,
    Seat,
    new_library_key,
    row_id,
    table_of,
    utcnow,
)
from .service import BattleService, _join_code, _token
from .store import event_rows, told_version
from .text import read_payload, scrub
from .verify import Mismatch, reapply, undone_versions, verify_document

FORMAT = "battleboard-battle"
SCHEMA_VERSION = 1
#: the largest document an import takes
MAX_BYTES = 20 * 1024 * 1024
#: the deepest nesting an export may have (a battle's state needs about ten levels)
DOCUMENT_DEPTH = 64


class ImportRefused(RulesError):
    """A document that cannot be imported (nothing was written)."""

    code = "bad_import"


def board_version() -> str:
    try:
        return metadata.version("battleboard")
    except metadata.PackageNotFoundError:  # a checkout that was never installed
        return "0"


def export_battle(service: BattleService, battle_id: int, *, public: bool = False) -> dict[str, Any]:
    """The battle as one JSON-ready document (the seed only once the battle has ended); ``public``:
    the copy for anyone but the GM (:func:`public_copy`)."""
    battle = service.battle(battle_id)
    system = get_system(battle.system_id)
    with service.session() as s:
        table = s.get(GameTable, battle.table_id)
        seats = list(s.exec(select(Seat).where(Seat.table_id == battle.table_id).order_by(col(Seat.id))))
        first = s.get(BattleSnapshot, (battle.id, 1))
        rows = s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle.id).order_by(col(BattleCommand.version))).all()
        event_list = s.exec(
            select(BattleEvent).where(BattleEvent.battle_id == battle.id).order_by(col(BattleEvent.version), col(BattleEvent.index))
        ).all()
    by_version: dict[int, list[dict[str, Any]]] = {}
    for row in event_list:
        by_version.setdefault(row.version, []).append({**row.payload, "visibility": row.visibility})
    commands: list[dict[str, Any]] = [{"version": c.version, "actor": c.actor, "declaration": c.declaration, "at": _time(c.created_at)} for c in rows]
    undone = undone_versions(commands, by_version)
    for command in commands:
        command["undone"] = command["version"] in undone
    ended = battle.status == "ended"
    epochs = seed_epochs(by_version, battle.seed)
    first_steps = epoch_steps(by_version)
    # (a seed's first step, and a command's step, only where it is not the version: an export of a
    # battle without undos reads as it always did)
    seeds = [{"version": v, **({"step": first_steps[v]} if first_steps.get(v, v) != v else {}), "commitment": commitment(seed),
              "seed": seed if ended or seed != battle.seed else None} for v, seed in sorted(epochs.items())]
    draws: list[dict[str, Any]] = []
    if ended:  # every die drawn, version by version, as the seed gives them
        try:
            for step in reapply(battle.system_id, epochs, battle.setup, first.state if first else {}, commands):
                if step.draws:  # (the step whose dice they are: a step taken back and made again rolls them again)
                    rolled = step.rolled or step.version
                    draws.append({"version": step.version, **({"step": rolled} if rolled != step.version else {}), "draws": step.draws})
        except (Mismatch, RulesError):
            pass  # the verifier will say where; the export still carries the log
    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "audience": "gm",
        "exported_at": _time(utcnow()),
        "board": {"software": "battleboard", "version": board_version()},
        "system": {"id": system.id, "name": system.name, "version": board_version()},
        "table": {"name": table.name if table else "", "seats": [{"id": seat.public_id, "name": seat.name} for seat in seats]},
        "battle": {"id": battle.id, "status": battle.status, "version": battle.version, "created_at": _time(battle.created_at),
                   "outcome": battle.state.get("outcome")},
        "setup": battle.setup,
        "initial_state": first.state if first else {},
        "commands": commands,
        "events": [{"v": row.version, "i": row.index, "visibility": row.visibility, **row.payload, "undone": row.version in undone}
                   for row in event_list],
        "final_state": battle.state,
        "dice": {
            "algorithm": ALGORITHM,
            "commitment": seeds[0]["commitment"],
            "seed": seeds[0]["seed"],
            "seeds": seeds,
            "client_seeds": [{"version": c["version"], "seat": c["declaration"].get("seat"), "client_seed": c["declaration"].get("client_seed")}
                             for c in commands if c["declaration"].get("type") == ENTROPY],
            "draws": draws,
        },
    }
    return public_copy(doc, told_version(battle)) if public else doc


#: whom the public copy is written for
SPECTATOR = Viewer.spectator()


def public_copy(doc: dict[str, Any], told: int) -> dict[str, Any]:
    """The export as a spectator saw the battle: each event in the words written for the others
    (none that reached only the GM), the commands those events came from (their type, never their
    details), the start and the end as the spectator's view shows them, no setup (the lineup's
    stats and the options hold the GM's secrets), and every die drawn (the revealed seed gives them
    all anyway): enough for verify_dice.py, not for an import. ``told``: the battle's last version
    the spectators were told of."""
    system = get_system(doc["system"]["id"])
    events = []
    for ev in doc["events"]:
        shown = event_for(ev, SPECTATOR, {})  # a spectator sees no seat's or combatant's own events
        if shown is not None:
            events.append({**shown, "visibility": PUBLIC})
    told_versions = {ev["v"] for ev in events}
    commands = [{**c, "declaration": {"type": c["declaration"].get("type")}} for c in doc["commands"] if c["version"] in told_versions]

    def seen(state: dict[str, Any]) -> dict[str, Any]:  # (a combatant hidden then is in none of it: rules/hiding.py)
        shown = scrub_hidden(system.view_for(state, SPECTATOR), hidden_names(state), visible_names(state)) if state else {}
        return {k: v for k, v in shown.items() if k != "legal"}

    return {**doc, "audience": "public", "battle": {**doc["battle"], "version": told}, "setup": None,
            "initial_state": seen(doc["initial_state"]), "commands": commands, "events": events, "final_state": seen(doc["final_state"])}


def export_json(service: BattleService, battle_id: int, *, public: bool = False) -> bytes:
    """The export (``public``: the public copy) as UTF-8 JSON. Text stored before the board read every
    field (a lone surrogate, a control character) is written as U+FFFD, the same everywhere, so the
    file is valid UTF-8 and its commands still re-apply to its events."""
    return json.dumps(scrub(export_battle(service, battle_id, public=public)), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _time(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


# --- reading and checking a document -------------------------------------------------------------
def load_document(raw: bytes | str) -> dict[str, Any]:
    """Parse and check a document's shape; :class:`ImportRefused` with a clear reason otherwise."""
    size = len(raw.encode("utf-8") if isinstance(raw, str) else raw)
    if size > MAX_BYTES:
        raise ImportRefused(f"the file is too large ({size / 1048576:.1f} MB; at most 20 MB)")
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise ImportRefused(f"the file is nested too deeply to be a battle export (at most {DOCUMENT_DEPTH} levels)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImportRefused(f"the file is not a whole JSON document (truncated or damaged: {str(exc)[:80]})") from None
    try:  # the board's one reader of outside text: no broken or control characters, bounded nesting
        doc = read_payload(doc, "the file", max_depth=DOCUMENT_DEPTH, browser_numbers=False)
    except RulesError as exc:
        raise ImportRefused(str(exc)) from None
    check_shape(doc)
    assert isinstance(doc, dict)  # check_shape refused anything else
    return doc


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ImportRefused(message)


def check_shape(doc: Any) -> None:
    """The checks of ``docs/battle-export.schema.json`` that an import relies on."""
    _need(isinstance(doc, dict), "the file is not a battle export (not a JSON object)")
    _need(doc.get("format") == FORMAT, f"the file is not a battle export (its format is not {FORMAT!r})")
    _need(doc.get("schema_version") == SCHEMA_VERSION,
          f"the file's schema version {doc.get('schema_version')!r} is not one this board reads (it reads {SCHEMA_VERSION})")
    for key, kind in (("system", dict), ("battle", dict), ("initial_state", dict), ("commands", list), ("events", list),
                      ("final_state", dict), ("dice", dict), ("table", dict)):
        _need(isinstance(doc.get(key), kind), f"the file's {key!r} is missing or not a{'n object' if kind is dict else ' list'}")
    _need(doc["setup"] is None or (isinstance(doc.get("setup"), dict) and isinstance(doc["setup"].get("lineup"), list)
                                   and isinstance(doc["setup"].get("options"), dict)), "the file's 'setup' needs a lineup and options")
    _need(isinstance(doc["system"].get("id"), str), "the file does not name its rule system")
    try:
        get_system(doc["system"]["id"])
    except RulesError:
        raise ImportRefused(f"this board has no rule system {str(doc['system']['id'])[:40]!r}") from None
    battle = doc["battle"]
    _need(isinstance(battle.get("version"), int) and battle["version"] >= 1, "the file's battle has no version")
    for command in doc["commands"]:
        _need(isinstance(command, dict) and isinstance(command.get("version"), int) and isinstance(command.get("actor"), str)
              and isinstance(command.get("declaration"), dict), "a command of the file lacks its version, actor or declaration")
    for ev in doc["events"]:
        _need(isinstance(ev, dict) and isinstance(ev.get("v"), int) and isinstance(ev.get("i"), int)
              and isinstance(ev.get("type"), str) and isinstance(ev.get("visibility"), str), "an event of the file lacks its v, i, type or visibility")
    dice = doc["dice"]
    _need(dice.get("algorithm") == ALGORITHM, f"the file's dice use {dice.get('algorithm')!r}, not {ALGORITHM!r}")
    _need(isinstance(dice.get("commitment"), str) and len(dice["commitment"]) == 64, "the file has no commitment")
    _need(dice.get("seed") is None or isinstance(dice.get("seed"), str), "the file's seed is not text")
    _need(isinstance(dice.get("seeds"), list) and bool(dice["seeds"]) and all(
        isinstance(e, dict) and isinstance(e.get("version"), int) and isinstance(e.get("commitment"), str)
        and (e.get("seed") is None or isinstance(e.get("seed"), str)) for e in dice["seeds"]), "the file lacks its list of seeds")
    _need(isinstance(dice.get("client_seeds"), list) and isinstance(dice.get("draws"), list), "the file lacks its client seeds or draws")


# --- import --------------------------------------------------------------------------------------
def import_document(service: BattleService, doc: dict[str, Any], *, library: Any = None) -> tuple[GameTable, int]:
    """Load a checked document as a finished battle of a new table (whose GM is whoever imported it):
    the table and the battle's id. The document is verified first; nothing is written if it fails."""
    _need(doc.get("audience", "gm") == "gm", "this is the public copy of a battle: it leaves out what only the GM saw, so it "
          "cannot be re-checked and imported (its dice still verify with verify_dice.py); import the GM's export")
    _need(doc["battle"].get("status") == "ended" and all(isinstance(e["seed"], str) for e in doc["dice"]["seeds"]),
          "only a finished battle can be imported (this one has not ended: its dice seed is not revealed)")
    verdict = verify_document(doc)
    _need(verdict.ok, f"the battle does not verify, nothing was imported: {verdict.message}")
    system = get_system(doc["system"]["id"])
    steps = verdict.steps
    setup = doc.get("setup")
    lineup = []
    for entry in (setup or {}).get("lineup", []):
        entry = dict(entry)
        if entry.get("controller") == "seat":
            entry["controller"], entry["seat"] = "gm", None
        lineup.append(entry)
    name = str(doc["table"].get("name") or system.name)[:60] + " (imported)"
    if not (isinstance(library, str) and 6 <= len(library) <= 64):
        library = new_library_key()
    final = steps[-1]
    at = utcnow()
    commands = {c["version"]: c for c in doc["commands"]}
    with service.session() as s:
        for _ in range(20):
            table = GameTable(slug=secrets.token_urlsafe(6).replace("-", "x").replace("_", "y"), name=name, system_id=system.id,
                              join_code=_join_code(), gm_token=_token(), lineup=lineup,
                              options=dict((setup or {}).get("options", {})), library=library)
            s.add(table)
            try:
                s.flush()
                break
            except Exception:  # a slug or join code taken: draw again
                s.rollback()
        battle = Battle(table_id=row_id(table), system_id=system.id, version=final.version, state=final.state, seed=doc["dice"]["seeds"][-1]["seed"],
                        status=final.status, mix=final.mix, setup=setup, shareable=False)
        s.add(battle)
        s.flush()
        assert battle.id is not None
        conn = s.connection()
        conn.execute(table_of(BattleSnapshot).insert(), [
            {"battle_id": battle.id, "version": step.version, "state": step.state, "prev_version": step.prev_version,
             "checkpoint": step.checkpoint, "dice_step": step.at_step} for step in steps])
        rows = [row for step in steps for row in event_rows(battle.id, step.version, step.events, at)]
        if rows:
            conn.execute(table_of(BattleEvent).insert(), rows)
        if len(steps) > 1:
            conn.execute(table_of(BattleCommand).insert(), [
                {"battle_id": battle.id, "version": step.version, "msg_id": f"import-{step.version}",
                 "actor": str(commands[step.version]["actor"])[:80], "declaration": commands[step.version]["declaration"], "created_at": at}
                for step in steps[1:]])
        table.battle_id = battle.id
        s.add(table)
        s.commit()
        s.refresh(table)
        return table, battle.id
