"""Undo takes back one step, the last command, and is never a free re-roll (issue 33).

Through Flask-SocketIO's test client: AD&D's "Next round" undone alone, the duel's dice fixed once
rolled, undo after the end with the committed-seed proof still sound, the GM's confirmation naming
the step, the undone steps marked for every page, and a GM's secret step undone in secret."""

from __future__ import annotations

import itertools
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from rules import Viewer, available_systems, get_system
from rules.fair import step_name
from tests.conftest import Table, duel_lineup, make_app
from tests.server.test_leaks import FIGHTING, declaration_from, lineup_for
from tests.server.test_sockets import without_menus
from webapp import cli
from webapp.app import socketio
from webapp.export import export_battle, import_document, load_document
from webapp.models import Battle, BattleCommand, BattleSnapshot
from webapp.replay import replay_battle
from webapp.report import build_report
from webapp.verify import AUTHORITY_COMMANDS, verify_document, viewer_of

SYSTEM_IDS = [system.id for system in available_systems()]
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "static" / "verify_dice.py"
#: a database the board wrote before undo took back one step (docs/fixtures.md)
OLD_DATABASE = ROOT / "tests" / "fixtures" / "pre_renovation" / "battleboard.sqlite3"


def ack(client: Any, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    return client.emit(event, payload, callback=True)


def updates(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "update"]


MESSAGES = itertools.count(1)


def choose(client: Any, duel: Table, combatant: str, option: str) -> dict[str, Any]:
    # (with a message id, as the pages send them: the server applies it to the battle as it knows it, unread)
    return ack(client, "declare", {"battle_id": duel.battle_id, "expected_v": duel.version, "msg_id": f"m{next(MESSAGES)}",
                                   "declaration": {"type": "choose", "combatant": combatant, "option": option}})


def undo(gm: Any, duel: Any) -> dict[str, Any]:
    return ack(gm, "undo", {"battle_id": duel.battle_id, "expected_v": duel.version, "msg_id": f"u{next(MESSAGES)}"})


def turn_faces(duel: Table, version: int) -> list[list[int]]:
    """The faces the duel's turn rolled at ``version``."""
    return [roll["faces"] for e in duel.service.events_since(duel.battle_id, version - 1) if e["v"] == version
            for roll in e.get("rolls") or []]


def steps_of(service: Any, battle_id: int) -> list[int]:
    """The step each version's state stands at."""
    with service.session() as s:
        snapshots = s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle_id).order_by(col(BattleSnapshot.version))).all()
    return [snap.version if snap.dice_step is None else snap.dice_step for snap in snapshots]


def tough_duel(app: Any) -> Table:
    """Alice's Jharek against Bob's monster, both tough enough for several turns."""
    duel = Table(app, start=False)
    lineup = duel_lineup(a={"controller": "seat", "seat": duel.seat_a.public_id, "health": 40},
                         b={"controller": "seat", "seat": duel.seat_b.public_id, "health": 40})
    duel.service.set_lineup(duel.table.id, lineup)
    duel.battle_id = duel.service.start_battle(duel.table.id, seed="undo-steps-seed").battle_id
    return duel


# --- one step, not a round ------------------------------------------------------------------------
class Adnd:
    """An AD&D table: the Fighter against the Gnoll, both the DM's, the encounter checks skipped."""

    def __init__(self, app: Any) -> None:
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Orc caves", "adnd")
        presets = {p["name"]: p for p in cli.demo_lineup("adnd")}
        lineup = [{**presets["Fighter (5th level)"], "id": "fighter"}, {**presets["Gnoll"], "id": "gnoll", "controller": "gm"}]
        self.service.set_lineup(self.table.id, lineup)
        self.battle_id = self.service.start_battle(self.table.id, seed="adnd-undo-seed").battle_id
        self.gm = socketio.test_client(app, auth={"table": self.table.slug, "token": self.table.gm_token})
        for kind, extra in (("check_reaction", {}), ("check_surprise", {}), ("check_distance", {"distance": 1}), ("check_morale", {})):
            assert self.declare({"type": kind, "skip": True, "note": "known", **extra})["ok"]

    @property
    def version(self) -> int:
        return self.service.battle(self.battle_id).version

    @property
    def state(self) -> dict[str, Any]:
        return self.service.battle(self.battle_id).state

    def declare(self, declaration: dict[str, Any]) -> dict[str, Any]:
        return ack(self.gm, "declare", {"battle_id": self.battle_id, "expected_v": self.version, "declaration": declaration})


def test_adnd_undo_after_next_round_takes_back_next_round_alone(app: Any) -> None:
    t = Adnd(app)
    assert t.declare({"type": "declare", "combatant": "fighter", "kind": "melee", "target": "gnoll"})["ok"]
    assert t.declare({"type": "declare", "combatant": "gnoll", "kind": "melee", "target": "fighter"})["ok"]
    assert t.declare({"type": "roll_initiative"})["ok"]
    for _ in range(10):
        if t.state["phase"] != "resolution":
            break
        assert t.declare({"type": "resolve_next"})["ok"]
    states = [t.state]
    while t.state["phase"] != "recap":
        legal = {item["type"] for item in t.service.project(t.service.battle(t.battle_id), Viewer.gm(), [])["view"]["legal"]}
        assert "bleed" in legal, legal
        assert t.declare({"type": "bleed"})["ok"]
        states.append(t.state)
    round_over = t.state
    assert t.declare({"type": "next_round"})["ok"]
    assert t.state["round"] == 2 and t.state["phase"] == "declarations"
    # one click takes back "Next round", and only it: the round's declarations, initiative,
    # resolution and bleeding stay
    t.gm.get_received()
    assert undo(t.gm, t)["ok"]
    assert t.state == round_over
    assert t.state["round"] == 1 and t.state["queue"], "the round's declared actions are still there"
    # the GM's console names the next step an undo would take back
    offer = updates(t.gm)[-1]["undo"]
    assert offer["v"] < t.version and offer["name"]
    # step by step, back to the start
    assert undo(t.gm, t)["ok"]
    assert t.state == states[-2]
    for _ in range(40):
        if not undo(t.gm, t)["ok"]:
            break
    first = t.service.battle(t.battle_id)
    refused = undo(t.gm, t)
    assert refused["ok"] is False and refused["code"] == "illegal" and "nothing to undo" in refused["error"]
    assert t.service.battle(t.battle_id).version == first.version, "a refused undo changes nothing"
    with t.service.session() as s:
        assert t.state == s.get(BattleSnapshot, (t.battle_id, 1)).state, "back at the start"
    assert replay_battle(t.service, t.battle_id).ok


# --- never a free re-roll -------------------------------------------------------------------------
def test_a_turn_undone_and_made_again_rolls_the_same_faces(app: Any) -> None:
    duel = tough_duel(app)
    alice, bob, gm = duel.alice(), duel.bob(), duel.gm()
    assert choose(alice, duel, "jharek", "attack")["ok"]
    assert choose(bob, duel, "monster", "attack")["ok"]
    first = turn_faces(duel, duel.version)
    assert first and duel.state["turn"] == 2
    after = duel.state
    # taken back (Bob's choice, and the turn it resolved) and made again the same way: the same dice
    assert undo(gm, duel)["ok"]
    assert duel.state["turn"] == 1 and duel.state["choices"]["jharek"] == "attack"
    assert choose(bob, duel, "monster", "attack")["ok"]
    assert turn_faces(duel, duel.version) == first
    assert duel.state == after
    # nor does another choice roll again: the dice of the step are fixed once rolled
    assert undo(gm, duel)["ok"]
    assert choose(bob, duel, "monster", "defend")["ok"]
    assert turn_faces(duel, duel.version) == first
    # the next turn is a step of its own, with dice of its own
    assert choose(alice, duel, "jharek", "attack")["ok"] and choose(bob, duel, "monster", "attack")["ok"]
    second = turn_faces(duel, duel.version)
    assert second and second != first
    # two steps back and the same two steps again: the same dice, step by step
    assert undo(gm, duel)["ok"] and undo(gm, duel)["ok"]
    assert choose(alice, duel, "jharek", "attack")["ok"] and choose(bob, duel, "monster", "attack")["ok"]
    assert turn_faces(duel, duel.version) == second
    # a player's client seed passes over nothing: undo steps back over it, and it stays mixed in
    assert ack(alice, "entropy", {"battle_id": duel.battle_id, "client_seed": "alice-phone-seed-42"})["ok"]
    mix = duel.service.battle(duel.battle_id).mix
    assert undo(gm, duel)["ok"]
    battle = duel.service.battle(duel.battle_id)
    assert battle.mix == mix and battle.state["choices"]["jharek"] == "attack" and battle.state["turn"] == 2
    assert replay_battle(duel.service, duel.battle_id).ok


def test_undo_after_the_end_and_the_committed_seed_still_proves_every_die(app: Any, tmp_path: Path) -> None:
    duel = Table(app, start=False)
    lineup = duel_lineup(a={"controller": "seat", "seat": duel.seat_a.public_id, "health": 4},
                         b={"controller": "seat", "seat": duel.seat_b.public_id, "health": 4})
    duel.service.set_lineup(duel.table.id, lineup)
    duel.battle_id = duel.service.start_battle(duel.table.id, seed="undo-after-the-end").battle_id
    alice, bob, gm, spectator = duel.alice(), duel.bob(), duel.gm(), duel.spectator()
    # (no client seed here: a seed mixed in with a seat's id, which is random, would make the fight's length vary)
    for _turn in range(30):
        if duel.state["status"] == "ended":
            break
        assert choose(alice, duel, "jharek", "attack")["ok"] and choose(bob, duel, "monster", "attack")["ok"]
    battle = duel.service.battle(duel.battle_id)
    assert battle.status == "ended", "the dice ended the duel"
    final, final_faces, revealed = battle.state, turn_faces(duel, battle.version), battle.seed
    # the end reveals the seed; undo is still there, and names the finishing step
    gm.get_received()
    synced = ack(gm, "sync", {})["battle"]
    assert synced["dice"]["seed"] == revealed and synced["undo"]["v"] == battle.version
    assert synced["undo"]["name"].startswith("Turn ")
    assert undo(gm, duel)["ok"]
    battle = duel.service.battle(duel.battle_id)
    assert battle.status == "active" and battle.seed != revealed, "the battle goes on with a new, secret seed"
    shown = ack(spectator, "sync", {})["battle"]
    assert shown["dice"]["seed"] is None and revealed not in json.dumps(shown["dice"])
    # the finishing step made again rolls the dice it rolled (already revealed): not a re-roll
    assert choose(bob, duel, "monster", "attack")["ok"]
    assert turn_faces(duel, duel.version) == final_faces and duel.state == final
    # three steps back, and another fight from there: the steps past the old ones roll the new seed
    assert undo(gm, duel)["ok"] and undo(gm, duel)["ok"] and undo(gm, duel)["ok"]
    for _turn in range(30):
        if duel.state["status"] == "ended":
            break
        assert choose(alice, duel, "jharek", "press")["ok"] and choose(bob, duel, "monster", "defend")["ok"]
    if duel.state["status"] != "ended":
        assert ack(gm, "battle_end", {"battle_id": duel.battle_id})["ok"]
    doc = json.loads(json.dumps(export_battle(duel.service, duel.battle_id)))
    verdict = verify_document(doc)
    assert verdict.ok, verdict.message
    assert len(doc["dice"]["seeds"]) == 3 and all(epoch["seed"] for epoch in doc["dice"]["seeds"])
    step = {entry["version"]: entry.get("step", entry["version"]) for entry in doc["dice"]["draws"]}  # (absent: the version)
    redone = [version for version in step if step[version] != version]
    assert redone, "the steps made again say whose dice they rolled"
    reseeded = doc["dice"]["seeds"][1]["version"]
    new_steps = doc["dice"]["seeds"][1].get("step", reseeded)
    assert any(step[v] < new_steps <= reseeded < v for v in redone), "a step made again after the end: its revealed dice"
    assert any(step[v] >= new_steps for v in step), "the steps never rolled before: the new seed's dice"
    undone = [c["version"] for c in doc["commands"] if c["undone"]]
    undos = [c["version"] for c in doc["commands"] if c["declaration"]["type"] == "undo"]
    assert len(undone) == len(undos)
    # the report tells the battle as it went: without the steps taken back, nor the undos
    report = build_report(duel.service, duel.battle_id, gm=True)
    assert report["versions"] == doc["battle"]["version"] - len(undone) - len(undos)
    path = tmp_path / "battle.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("OK: 3 commitment(s)"), run.stdout + run.stderr
    assert replay_battle(duel.service, duel.battle_id).ok
    # and the file imports as a finished battle, whose replay agrees too
    _table, imported = import_document(duel.service, load_document(path.read_bytes()))
    assert replay_battle(duel.service, imported).ok
    assert steps_of(duel.service, imported) == steps_of(duel.service, duel.battle_id), "each state stands at the same step"
    # the file tampered with: a step claimed to roll another step's dice is caught
    for where in ("draws", "seeds"):
        forged = json.loads(json.dumps(doc))
        entry = forged["dice"][where][-1]
        entry["step"] = entry.get("step", entry["version"]) + 1
        assert not verify_document(forged).ok, where


def test_a_running_battle_of_the_board_before_undos_one_step_and_rolls_it_again_the_same(tmp_path: Path) -> None:
    """The database the board wrote before undo took back one step (its versions stand at their own
    step, its undos went back to a checkpoint): each running battle's last step is taken back, and
    made again the same way it rolls the faces it rolled then."""
    copy = tmp_path / "battleboard.sqlite3"
    shutil.copyfile(OLD_DATABASE, copy)
    app = make_app(tmp_path, database_url=f"sqlite:///{copy}")
    service = app.extensions["battleboard"].service
    try:
        with service.session() as s:
            running = [b for b in s.exec(select(Battle).order_by(col(Battle.id))) if b.status == "active"]
        redone = 0
        for battle in running:
            offer = service.undo_offer(battle.id, battle.version)
            assert offer is not None, battle.system_id
            with service.session() as s:
                command = s.exec(select(BattleCommand).where(BattleCommand.battle_id == battle.id, BattleCommand.version == offer["v"])).one()
            rolled = [r["faces"] for e in service.events_since(battle.id, offer["v"] - 1) if e["v"] == offer["v"] for r in e.get("rolls") or []]
            before = service.battle(battle.id)
            result = service.undo(battle.id, Viewer.gm(), expected_v=before.version)
            assert [e["data"] for e in result.events if e["type"] == "battle.undone"] == [{"step": offer["v"]}]
            if command.declaration.get("type") in AUTHORITY_COMMANDS or command.declaration.get("type") == "dice_enter":
                continue
            again = service.declare(battle.id, viewer_of(command.actor), {k: v for k, v in command.declaration.items() if k != "at"},
                                    actor=command.actor, expected_v=result.version)
            assert [r["faces"] for e in again.events for r in e.get("rolls") or []] == rolled, battle.system_id
            redone += bool(rolled)
            assert replay_battle(service, battle.id).ok
        assert running and redone, "a running battle whose last step rolled dice"
    finally:
        service.engine.dispose()


# --- who may undo, and what there is to undo ------------------------------------------------------
def test_only_the_gm_undoes(duel: Table) -> None:
    alice, spectator, gm = duel.alice(), duel.spectator(), duel.gm()
    assert choose(alice, duel, "jharek", "attack")["ok"]
    before = duel.version
    for client in (alice, spectator):
        refused = undo(client, duel)
        assert refused["ok"] is False and refused["code"] == "forbidden" and "only the GM" in refused["error"]
    assert duel.version == before
    # the players' and the spectators' pages never get the GM's confirmation
    for client in (alice, spectator):
        assert "undo" not in ack(client, "sync", {})["battle"]
    assert ack(gm, "sync", {})["battle"]["undo"]["v"] == before


def test_nothing_to_undo_at_the_start(duel: Table) -> None:
    gm = duel.gm()
    assert ack(gm, "sync", {})["battle"]["undo"] is None
    refused = undo(gm, duel)
    assert refused == {"ok": False, "error": "there is nothing to undo: the battle is back at its start", "code": "illegal"}
    assert duel.version == 1
    for bad in ({"battle_id": "x"}, {"battle_id": duel.battle_id, "expected_v": "x"}, {"battle_id": duel.battle_id, "msg_id": "bad id!"}):
        reply = ack(gm, "undo", bad)
        assert reply["ok"] is False and reply["code"] == "invalid", reply
    # made on an old version: refused, so the GM never undoes a step other than the one named
    assert choose(gm, duel, "jharek", "attack")["ok"]
    stale = ack(gm, "undo", {"battle_id": duel.battle_id, "expected_v": 1})
    assert stale["ok"] is False and stale["code"] == "stale" and duel.version == 2


# --- the step named, and marked undone on every page ----------------------------------------------
def test_the_confirmation_names_the_step_and_every_page_marks_it_undone(duel: Table) -> None:
    alice, bob, gm, spectator = duel.alice(), duel.bob(), duel.gm(), duel.spectator()
    assert choose(alice, duel, "jharek", "defend")["ok"]
    assert choose(bob, duel, "monster", "attack")["ok"]
    resolved = duel.version
    offer = updates(gm)[-1]["undo"]
    assert offer["v"] == resolved and offer["name"].startswith("Turn 1: dice ")
    assert offer["name"] == offer["name"].split(".")[0], "the first sentence names it"
    assert offer["lines"][0] == "Wild Monster has chosen." and any(line.startswith(offer["name"] + ". ") for line in offer["lines"])
    for client in (alice, bob, spectator):
        client.get_received()
    assert undo(gm, duel)["ok"]
    for client in (gm, alice, bob, spectator):
        update = updates(client)[-1]
        assert update["undone"] == [resolved]
        said = [e for e in update["events"] if e["type"] == "battle.undone"]
        assert said and said[0]["text"] == f"The GM took back “{offer['name']}”." and said[0]["data"] == {"step": resolved}
    # a page that (re)loads gets the marks with the events they mark
    for client in (gm, alice, spectator):
        synced = ack(client, "sync", {})["battle"]
        assert synced["undone"] == [resolved] and any(e["v"] == resolved for e in synced["events"])
    # the next undo names Alice's sealed choice in the words everyone had: "has chosen", never what
    name = ack(gm, "sync", {})["battle"]["undo"]
    assert name["v"] == resolved - 1 and name["name"] == "Jharek has chosen" and "defend" not in json.dumps(name)
    for client in (bob, spectator):
        client.get_received()
    assert undo(gm, duel)["ok"]
    for client in (bob, spectator):
        text = without_menus(client.get_received())  # (the menus name every option)
        assert "jharek has chosen" in text and "defend" not in text
    assert ack(spectator, "sync", {})["battle"]["undone"] == [resolved - 1, resolved]


def test_a_gms_secret_step_is_undone_in_secret(duel: Table) -> None:
    alice, gm, spectator = duel.alice(), duel.gm(), duel.spectator()
    assert choose(alice, duel, "jharek", "attack")["ok"]
    told = ack(spectator, "sync", {})["battle"]["v"]
    assert ack(gm, "declare", {"battle_id": duel.battle_id, "expected_v": duel.version,
                               "declaration": {"type": "set_escape", "possible": False}})["ok"]
    secret = duel.version
    assert ack(gm, "sync", {})["battle"]["undo"]["name"] == "The GM rules that running away cannot succeed"
    for client in (alice, spectator):
        client.get_received()
    assert undo(gm, duel)["ok"]
    assert duel.state["escape_possible"] is True
    gm_update = updates(gm)[-1]
    assert gm_update["undone"] == [secret] and "running away" in gm_update["events"][0]["text"]
    for client in (alice, spectator):
        assert updates(client) == [], "the others are told nothing: neither the step nor its undo"
        synced = ack(client, "sync", {})["battle"]
        assert synced["v"] == told and synced["undone"] == []
        assert "running away" not in json.dumps(synced) and "took back" not in json.dumps(synced)
    # the others' next command still fits the version they hold
    assert ack(alice, "declare", {"battle_id": duel.battle_id, "expected_v": told,
                                  "declaration": {"type": "choose", "combatant": "jharek", "option": "defend"}})["ok"]


# --- every system: one step back, named, and the same dice again ----------------------------------
@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_every_system_undoes_one_step_named_and_rolls_it_again_the_same(app: Any, system_id: str) -> None:
    system = get_system(system_id)
    service = app.extensions["battleboard"].service
    table = service.create_table(f"Undo {system_id}", system_id)
    seats = [service.join(table.join_code, name)[1] for name in ("One", "Two")]
    service.set_lineup(table.id, lineup_for(system, [seat.public_id for seat in seats]))
    battle_id = service.start_battle(table.id, seed=f"undo-{system_id}").battle_id
    gm = socketio.test_client(app, auth={"table": table.slug, "token": table.gm_token})
    if service.battle(battle_id).status == "setup":  # Olympia's deployment
        assert ack(gm, "declare", {"battle_id": battle_id, "declaration": {"type": "begin"}})["ok"]
    rng = random.Random(system_id)
    made: list[tuple[dict[str, Any], dict[str, Any], list[Any], str]] = []  # (declaration, state before, faces, name)
    for _attempt in range(60):
        battle = service.battle(battle_id)
        if battle.status != "active" or len(made) >= 4:
            break
        legal = [item for item in system.view_for(battle.state, Viewer.gm()).get("legal") or [] if item.get("type") in FIGHTING]
        if not legal:
            break
        declaration = declaration_from(rng.choice(legal), rng)
        reply = ack(gm, "declare", {"battle_id": battle_id, "expected_v": battle.version, "declaration": declaration})
        if not reply["ok"]:
            continue
        offer = ack(gm, "sync", {})["battle"]["undo"]
        said = [e for e in service.events_since(battle_id, battle.version) if e["v"] == reply["v"]]
        assert offer["v"] == reply["v"] and offer["name"] == (step_name(said, Viewer.gm(), {}) or "the last step")
        made.append((declaration, battle.state, [r["faces"] for e in said for r in e.get("rolls") or []], offer["name"]))
    assert len(made) >= 2, f"{system_id}: too few steps to undo"
    # back one step at a time, each named in the GM's undo and in the undo's own words
    for declaration, before, _faces, name in reversed(made):
        reply = ack(gm, "undo", {"battle_id": battle_id, "expected_v": service.battle(battle_id).version})
        assert reply["ok"], reply
        assert service.battle(battle_id).state == before, f"{system_id}: undo took back more or less than {declaration}"
        words = [e for e in service.events_since(battle_id, reply["v"] - 1) if e["type"] == "battle.undone"][-1]
        assert words["text"] == f"The GM took back “{name}”."
    # and forward again the same way: the same faces, step by step (AD&D's states hold the time of
    # each declaration, so the states past the first may differ in that alone)
    assert service.battle(battle_id).state == made[0][1]
    for declaration, _before, faces, _name in made:
        battle = service.battle(battle_id)
        reply = ack(gm, "declare", {"battle_id": battle_id, "expected_v": battle.version, "declaration": declaration})
        assert reply["ok"], reply
        said = [e for e in service.events_since(battle_id, battle.version) if e["v"] == reply["v"]]
        assert [r["faces"] for e in said for r in e.get("rolls") or []] == faces, f"{system_id}: {declaration} rolled again"
    if service.battle(battle_id).status != "ended":
        assert ack(gm, "battle_end", {"battle_id": battle_id})["ok"]
    verdict = verify_document(json.loads(json.dumps(export_battle(service, battle_id))))
    assert verdict.ok, verdict.message
    assert replay_battle(service, battle_id).ok
