"""Committed dice: the commitment on every screen, players' client seeds mixed in, the reveal at the
end (never before), and the verifier and the standalone script on exports of every system."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rules import RulesError, Viewer, available_systems, get_system
from rules.dice import SeededDice, command_seed, commitment, mix_entropy
from tests.conftest import Table
from tests.server.test_leaks import declaration_from, lineup_for
from webapp.export import export_battle
from webapp.replay import replay_battle
from webapp.verify import verify_document

SYSTEM_IDS = [system.id for system in available_systems()]
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "static" / "verify_dice.py"
SEED = "fair-dice-seed-0001"


def play_battle(service: Any, system_id: str, *, seed: str = SEED, entropy: bool = True, undo: bool = True,
                max_accepted: int = 14) -> tuple[Any, int]:
    """A seeded battle of a system played from its legal menus by two seats and the GM (client
    seeds from both phones, one undo), then ended by the GM if the rules did not end it."""
    system = get_system(system_id)
    table = service.create_table("Fair dice", system_id)
    _, one = service.join(table.join_code, "One")
    _, two = service.join(table.join_code, "Two")
    service.set_lineup(table.id, lineup_for(system, [one.public_id, two.public_id]))
    battle_id = service.start_battle(table.id, seed=seed).battle_id
    viewers = [(Viewer.gm(), "gm"), (Viewer.player(one.public_id), f"seat:{one.public_id}"),
               (Viewer.player(two.public_id), f"seat:{two.public_id}")]
    if entropy:
        service.add_entropy(battle_id, Viewer.player(one.public_id), "phone-one-client-seed")
    rng = random.Random(system_id)
    accepted = 0
    for attempt in range(80):
        battle = service.battle(battle_id)
        if battle.status == "ended" or accepted >= max_accepted:
            break
        if entropy and attempt == 2:
            service.add_entropy(battle_id, Viewer.player(two.public_id), "phone-two-client-seed")
        menu = [(v, a, item) for v, a in viewers for item in system.view_for(battle.state, v).get("legal") or []]
        if not menu:
            break
        viewer, actor, item = rng.choice(menu)
        try:
            service.declare(battle_id, viewer, declaration_from(item, rng), actor=actor)
        except RulesError:
            continue
        accepted += 1
        if undo and accepted == 4:
            try:
                service.undo(battle_id, Viewer.gm())
            except RulesError:
                pass
    if service.battle(battle_id).status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    return table, battle_id


def exported(service: Any, battle_id: int) -> dict[str, Any]:
    return json.loads(json.dumps(export_battle(service, battle_id)))  # as a file holds it


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_the_verifier_accepts_a_seeded_battle_of_every_system(service: Any, system_id: str, tmp_path: Path) -> None:
    _, battle_id = play_battle(service, system_id)
    doc = exported(service, battle_id)
    verdict = verify_document(doc)
    assert verdict.ok, verdict.message
    assert verdict.message.startswith("OK:")
    undos = [c for c in doc["commands"] if c["declaration"]["type"] == "undo"]
    for undo in undos:  # an undone command's dice stay in the log, marked undone
        step = next(e["data"]["step"] for e in doc["events"] if e["v"] == undo["version"] and e["type"] == "battle.undone")
        assert step == undo["declaration"]["step"]
        taken = [c for c in doc["commands"] if c["version"] == step and c["declaration"]["type"] not in ("entropy", "undo")]
        assert taken and all(c["undone"] for c in taken)
        assert all(e["undone"] for e in doc["events"] if e["v"] == step)
    assert sum(c["undone"] for c in doc["commands"]) == len(undos), "each undo took back one step"
    kinds = {c["declaration"]["type"] for c in doc["commands"]}
    assert "entropy" in kinds and "end" in kinds or doc["battle"]["outcome"]
    assert [c["seat"] for c in doc["dice"]["client_seeds"]] == [
        c["declaration"]["seat"] for c in doc["commands"] if c["declaration"]["type"] == "entropy"]
    # the CLI says the same, with exit status 0 and one line
    path = tmp_path / "battle.json"
    path.write_text(json.dumps(doc))
    from webapp.cli import main

    assert main(["verify", str(path)]) == 0
    # and the standalone script re-derives every die with the standard library alone
    run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("OK:")
    # the replay of the stored log agrees
    assert replay_battle(service, battle_id).ok


def _first_rolled(doc: dict[str, Any]) -> dict[str, Any]:
    for ev in doc["events"]:
        if ev["v"] > 1 and any(r.get("faces") for r in ev.get("rolls") or []):
            return ev
    raise AssertionError("no roll in the battle")


def test_the_verifier_rejects_each_kind_of_tampering(service: Any, tmp_path: Path) -> None:
    _, battle_id = play_battle(service, "phantoms-bane", undo=False)
    doc = exported(service, battle_id)
    assert verify_document(doc).ok

    # a die face changed in an event
    forged = copy.deepcopy(doc)
    ev = _first_rolled(forged)
    roll = next(r for r in ev["rolls"] if r.get("faces"))
    sides = int(roll["dice"].split("d")[1].split("+")[0].split("-")[0]) if "d" in roll["dice"] else 100
    roll["faces"][0] = roll["faces"][0] % sides + 1
    verdict = verify_document(forged)
    assert not verdict.ok and f"version {ev['v']}" in verdict.message and "events differ" in verdict.message

    # a declaration changed
    forged = copy.deepcopy(doc)
    command = next(c for c in forged["commands"] if c["declaration"]["type"] == "choose")
    options = ["press", "attack", "defend", "run_away"]
    command["declaration"]["option"] = options[(options.index(command["declaration"]["option"]) + 1) % 4]
    verdict = verify_document(forged)
    assert not verdict.ok and "mismatch at version" in verdict.message

    # a seed that does not match the commitment
    forged = copy.deepcopy(doc)
    forged["dice"]["seed"] = forged["dice"]["seeds"][0]["seed"] = "0" * 32
    verdict = verify_document(forged)
    assert not verdict.ok and "commitment" in verdict.message

    # a die listed for the standalone script changed: the script and the verifier both refuse it
    forged = copy.deepcopy(doc)
    draw = next(d for entry in forged["dice"]["draws"] for d in entry["draws"] if d.get("faces"))
    draw["faces"][0] = draw["low"] if draw["faces"][0] != draw["low"] else draw["high"]
    assert not verify_document(forged).ok
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "FAIL" in run.stdout + run.stderr

    # the CLI names the first command that does not match and exits 1
    forged = copy.deepcopy(doc)
    _first_rolled(forged)["text"] = "forged"
    path.write_text(json.dumps(forged))
    from webapp.cli import main

    assert main(["verify", str(path)]) == 1


def test_olympia_mass_dice_are_rederived_by_the_script(service: Any, tmp_path: Path) -> None:
    """Olympia's mass dice (NumPy batches on the board) come from the same stdlib stream."""
    _, battle_id = play_battle(service, "olympia", entropy=True, undo=False, max_accepted=6)
    doc = exported(service, battle_id)
    assert verify_document(doc).ok
    sizes = [d["size"] for entry in doc["dice"]["draws"] for d in entry["draws"] if "size" in d]
    assert sizes and sum(sizes) > 0
    path = tmp_path / "olympia.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_derivation_is_the_documented_one() -> None:
    """The derivation of docs/provable-dice.md, written out with hashlib and random alone, gives the board's dice."""
    seed = "00112233445566778899aabbccddeeff"
    mix = hashlib.sha256(f"|s1|{'phone-seed-1'}".encode()).hexdigest()
    assert mix == mix_entropy("", "s1", "phone-seed-1")
    derived = hashlib.sha256(f"{seed}/{mix}/7".encode()).hexdigest()[:32]
    assert derived == command_seed(seed, mix, 7)
    assert hashlib.sha256(f"{seed}/7".encode()).hexdigest()[:32] == command_seed(seed, "", 7)
    stream = random.Random(int.from_bytes(hashlib.sha256(derived.encode()).digest()[:8], "big"))
    expected_faces = [stream.randint(1, 6) for _ in range(3)]
    bits = stream.getrandbits(32 * 4)
    expected_mass = [1 + ((bits >> (32 * i) & 0xFFFFFFFF) * 10 >> 32) for i in range(4)]
    dice = SeededDice(derived)
    assert list(dice.roll(3, 6, "x").faces) == expected_faces
    assert [int(v) for v in dice.integers(1, 10, 4, "mass")] == expected_mass
    assert commitment(seed) == hashlib.sha256(seed.encode()).hexdigest()


def test_every_screen_shows_the_commitment_and_the_seed_only_after_the_end(app: Any) -> None:
    duel = Table(app)
    battle = duel.service.battle(duel.battle_id)
    digest = hashlib.sha256(battle.seed.encode()).hexdigest()
    clients = [duel.gm(), duel.alice(), duel.spectator()]
    for client in clients:
        ack = client.emit("sync", {}, callback=True)
        dice = ack["battle"]["dice"]
        assert dice["commitment"] == digest and dice["seed"] is None
        assert any(e["type"] == "dice.committed" and e["data"]["commitment"] == digest for e in ack["battle"]["events"])
        assert battle.seed not in json.dumps(ack)
    # the GM has no way to reveal a running battle's seed: ending it is the only way
    gm = clients[0]
    assert gm.emit("battle_share", {"battle_id": duel.battle_id, "shareable": True}, callback=True)["ok"]
    assert battle.seed not in json.dumps(gm.emit("sync", {}, callback=True))
    assert gm.emit("battle_end", {"battle_id": duel.battle_id}, callback=True)["ok"]
    for client in clients:
        ack = client.emit("sync", {}, callback=True)
        assert ack["battle"]["dice"]["seed"] == battle.seed
        assert any(e["type"] == "dice.revealed" and e["data"]["seed"] == battle.seed for e in ack["battle"]["events"])
    # the GM takes the end back: the battle goes on with a new seed, committed to at once and secret again
    ack = gm.emit("undo", {"battle_id": duel.battle_id}, callback=True)
    assert ack["ok"], ack
    second = duel.service.battle(duel.battle_id)
    assert second.status == "active" and second.seed != battle.seed
    for client in clients:
        synced = client.emit("sync", {}, callback=True)["battle"]
        assert synced["dice"] == {**synced["dice"], "commitment": commitment(second.seed), "seed": None}
        assert second.seed not in json.dumps(synced) and second.seed not in json.dumps(client.get_received())
        assert any(e["type"] == "dice.committed" and e["data"]["commitment"] == commitment(second.seed) for e in synced["events"])
    alice = clients[1]
    assert alice.emit("declare", {"battle_id": duel.battle_id, "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}},
                      callback=True)["ok"]
    assert duel.bob().emit("declare", {"battle_id": duel.battle_id, "declaration": {"type": "choose", "combatant": "monster", "option": "press"}},
                           callback=True)["ok"]
    assert duel.version > second.version + 1  # the turn rolled its dice from the new seed
    if duel.state["status"] != "ended":
        assert gm.emit("battle_end", {"battle_id": duel.battle_id}, callback=True)["ok"]
    doc = exported(duel.service, duel.battle_id)
    assert [e["seed"] for e in doc["dice"]["seeds"]] == [battle.seed, second.seed]
    assert verify_document(doc).ok
    assert replay_battle(duel.service, duel.battle_id).ok
    path = Path(app.instance_path) / "reseeded.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "2 commitment(s)" in run.stdout, run.stdout + run.stderr


def test_client_seeds_from_phones_are_mixed_in(app: Any) -> None:
    duel = Table(app)
    alice, bob, gm, spectator = duel.alice(), duel.bob(), duel.gm(), duel.spectator()
    before = duel.version
    ack = alice.emit("entropy", {"battle_id": duel.battle_id, "client_seed": "alice-phone-seed-42"}, callback=True)
    assert ack["ok"] and ack["v"] == before + 1 and not ack["duplicate"]
    battle = duel.service.battle(duel.battle_id)
    assert battle.mix == mix_entropy("", duel.seat_a.public_id, "alice-phone-seed-42")
    # everyone sees the client seed in the log (the verifier needs the order)
    seen = [m for m in spectator.get_received() if m["name"] == "update"]
    assert any(e["type"] == "dice.entropy" and e["data"]["client_seed"] == "alice-phone-seed-42" and e["data"]["seat"] == duel.seat_a.public_id
               for m in seen for e in m["args"][0]["events"])
    # a seat adds one seed per battle: a second is a duplicate that changes nothing
    again = alice.emit("entropy", {"battle_id": duel.battle_id, "client_seed": "alice-other-seed-43"}, callback=True)
    assert again["ok"] and again["duplicate"] and duel.service.battle(duel.battle_id).mix == battle.mix
    # wrong roles and bad payloads: a clear error, nothing changes
    version = duel.version
    for client, payload, code in [
        (gm, {"battle_id": duel.battle_id, "client_seed": "gm-tries-a-seed-1"}, "forbidden"),
        (spectator, {"battle_id": duel.battle_id, "client_seed": "spectator-seed-1"}, "forbidden"),
        (bob, {"battle_id": duel.battle_id, "client_seed": "short"}, "invalid"),
        (bob, {"battle_id": duel.battle_id, "client_seed": 12345678}, "invalid"),
        (bob, {"battle_id": duel.battle_id, "client_seed": "has spaces in it"}, "invalid"),
        (bob, {"battle_id": duel.battle_id}, "invalid"),
        (bob, {"battle_id": "x", "client_seed": "bob-phone-seed-00"}, "invalid"),
        (bob, {"battle_id": 999999, "client_seed": "bob-phone-seed-00"}, "not_found"),
    ]:
        reply = client.emit("entropy", payload, callback=True)
        assert reply["ok"] is False and reply["error"], (payload, reply)
        assert reply["code"] == code, reply
    assert duel.version == version
    # the next command's dice come from the mixed seed
    ack = bob.emit("entropy", {"battle_id": duel.battle_id, "client_seed": "bob-phone-seed-00"}, callback=True)
    assert ack["ok"]
    mix = duel.service.battle(duel.battle_id).mix
    assert mix == mix_entropy(battle.mix, duel.seat_b.public_id, "bob-phone-seed-00")
    v = duel.version + 1
    assert command_seed(battle.seed, mix, v) != command_seed(battle.seed, "", v)
    # undo passes over client seeds: it goes back to the start of the turn, and the mix stays
    alice.emit("declare", {"battle_id": duel.battle_id, "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}}, callback=True)
    assert gm.emit("undo", {"battle_id": duel.battle_id}, callback=True)["ok"]
    assert duel.state["choices"]["jharek"] is None and duel.service.battle(duel.battle_id).mix == mix
    # only the GM shares a battle
    reply = alice.emit("battle_share", {"battle_id": duel.battle_id, "shareable": True}, callback=True)
    assert reply["ok"] is False and reply["code"] == "forbidden"
    reply = gm.emit("battle_share", {"battle_id": duel.battle_id, "shareable": "yes"}, callback=True)
    assert reply["ok"] is False


def test_a_declaration_made_before_a_client_seed_landed_is_not_stale(app: Any) -> None:
    """A phone's client seed moves the version on but not the board: a tap made on the version just
    before it (often the phone's own seed, sent as the battle started) is applied, while a tap behind
    a real command is still refused as stale and changes nothing."""
    duel = Table(app)
    alice, bob, gm = duel.alice(), duel.bob(), duel.gm()
    seen = duel.version
    assert alice.emit("entropy", {"battle_id": duel.battle_id, "client_seed": "alice-phone-seed-42"}, callback=True)["ok"]
    assert bob.emit("entropy", {"battle_id": duel.battle_id, "client_seed": "bob-phone-seed-00"}, callback=True)["ok"]
    assert duel.version == seen + 2
    ack = alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": seen,
                                 "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}}, callback=True)
    assert ack["ok"], ack
    assert duel.state["choices"]["jharek"] == "attack"
    # behind a real command (Alice's choice, and Alice changes it from the old version): stale, nothing changes
    version = duel.version
    reply = alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": seen,
                                   "declaration": {"type": "choose", "combatant": "jharek", "option": "press"}}, callback=True)
    assert reply["ok"] is False and reply["code"] == "stale", reply
    assert duel.version == version and duel.state["choices"]["jharek"] == "attack" and duel.state["choices"]["monster"] is None
    # a version from the future is stale too
    reply = gm.emit("declare", {"battle_id": duel.battle_id, "expected_v": version + 5,
                                "declaration": {"type": "choose", "combatant": "monster", "option": "press"}}, callback=True)
    assert reply["ok"] is False and reply["code"] == "stale", reply
    assert duel.version == version


def test_a_restart_is_a_new_battle_with_a_new_commitment(app: Any) -> None:
    duel = Table(app)
    gm = duel.gm()
    first = duel.service.battle(duel.battle_id)
    ack = gm.emit("battle_restart", {}, callback=True)
    assert ack["ok"] and ack["battle_id"] != duel.battle_id
    second = duel.service.battle(ack["battle_id"])
    assert commitment(second.seed) != commitment(first.seed) and second.mix == ""
