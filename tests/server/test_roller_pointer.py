"""The dice roller and the pointer over the socket (webapp/table_tools.py, webapp/table_dice.py): bad
notation, bounds, rate limits, wrong roles, a secret roll that reaches no one but the GM in any event
or log words, rolls in a battle's export, verify and replay, the table's own dice between battles, and
the pointer's ring sent to every page without a hidden name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rules import Viewer
from rules.dice import commitment
from tests.conftest import Table, make_app
from tests.server.test_export import validate
from tests.server.test_fair_dice import SCRIPT, SYSTEM_IDS, play_battle
from webapp import table_dice, table_tools  # noqa: F401  (their handlers register on import, as the app does)
from webapp.export import export_battle, import_document, load_document
from webapp.replay import replay_battle
from webapp.sockets import EVENT_HANDLERS
from webapp.table_dice import check
from webapp.verify import verify_document

SECRET_LABEL = "ambush-in-the-crypt"


def received(client: Any, name: str) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == name]


def test_the_events_are_registered_for_every_role() -> None:
    for name in ("roll", "roll_commit", "point"):
        assert name in EVENT_HANDLERS and EVENT_HANDLERS[name][1] is False


def test_a_players_roll_is_a_command_of_the_battle_with_who_and_why(duel: Table) -> None:
    alice, spectator = duel.alice(), duel.spectator()
    before = duel.version
    spectator.get_received()
    ack = alice.emit("roll", {"notation": "2d6+3", "label": "perception check"}, callback=True)
    assert ack["ok"] is True and ack["v"] == before + 1
    assert ack["text"].startswith("Alice rolled 2d6+3 for perception check: ") and ack["text"].endswith(f"= {ack['total']}.")
    updates = received(spectator, "update")
    rolled = [e for u in updates for e in u["events"] if e["type"] == "dice.rolled"]
    assert len(rolled) == 1 and rolled[0]["text"] == ack["text"] and rolled[0]["rolls"][0]["purpose"] == "Alice: perception check"


@pytest.mark.parametrize(("payload", "code", "words"), [
    ({"notation": "2d"}, "invalid", "cannot read"),
    ({"notation": "101d6"}, "invalid", "100 dice"),
    ({"notation": "1d1001"}, "invalid", "1000 sides"),
    ({"notation": "d6" * 40}, "invalid", "at most 60"),
    ({"notation": 7}, "invalid", "type a roll"),
    ({}, "invalid", "type a roll"),
    ({"notation": "d20", "label": "x" * 61}, "invalid", "label"),
    ({"notation": "d20", "label": 5}, "invalid", "label"),
    ({"notation": "d20", "dice": [6]}, "invalid", "unknown field"),
    ({"notation": "d20", "secret": True}, "forbidden", "only the GM"),
])
def test_bad_rolls_get_a_clear_error_and_change_nothing(duel: Table, payload: dict[str, Any], code: str, words: str) -> None:
    alice = duel.alice()
    before = duel.version
    ack = alice.emit("roll", payload, callback=True)
    assert ack["ok"] is False and words in ack["error"], ack
    assert ack["code"] in (code, "not_permitted", "invalid", "forbidden")
    assert duel.version == before


def test_spectators_cannot_roll_or_point(duel: Table) -> None:
    spectator = duel.spectator()
    for name, payload in (("roll", {"notation": "d20"}), ("point", {"combatant": "jharek"}), ("roll_commit", {})):
        ack = spectator.emit(name, payload, callback=True)
        assert ack["ok"] is False and "spectators" in ack["error"]


def test_rolls_are_rate_limited_per_seat(duel: Table) -> None:
    alice, bob = duel.alice(), duel.bob()
    answers = [alice.emit("roll", {"notation": "d6"}, callback=True) for _ in range(21)]
    assert all(a["ok"] for a in answers[:20])
    assert answers[20]["ok"] is False and answers[20]["code"] == "rate_limited"
    assert bob.emit("roll", {"notation": "d6"}, callback=True)["ok"] is True  # another seat counts apart


def test_a_secret_roll_reaches_only_the_gm(duel: Table) -> None:
    gm, alice, bob, spectator = duel.gm(), duel.alice(), duel.bob(), duel.spectator()
    for c in (gm, alice, bob, spectator):
        c.get_received()
    ack = gm.emit("roll", {"notation": "1d100+7", "label": SECRET_LABEL, "secret": True}, callback=True)
    assert ack["ok"] is True and SECRET_LABEL in ack["text"]
    total = str(ack["total"])
    gm_events = [e for u in received(gm, "update") for e in u["events"] if e["type"] == "dice.rolled"]
    assert gm_events and gm_events[0]["data"]["total"] == ack["total"]
    for page in (alice, bob, spectator):
        frames = page.get_received()
        text = json.dumps(frames)
        assert SECRET_LABEL not in text and "1d100" not in text
        events = [e for m in frames if m["name"] == "update" for e in m["args"][0]["events"]]
        assert [e["text"] for e in events if e["type"] == "dice.rolled"] == ["The GM rolled in secret."]
        assert all(not e["rolls"] and not e["data"] for e in events if e["type"] == "dice.rolled")
    # nor in a sync, nor in the log a page reads later
    for page in (alice, spectator):
        synced = page.emit("sync", {"since_v": 0}, callback=True)
        text = json.dumps(synced)
        assert SECRET_LABEL not in text and f"= {total}" not in text and "The GM rolled in secret." in text


def test_the_gms_undo_of_a_secret_roll_tells_the_others_nothing_more(duel: Table) -> None:
    gm, alice = duel.gm(), duel.alice()
    assert gm.emit("roll", {"notation": "3d6", "label": SECRET_LABEL, "secret": True}, callback=True)["ok"]
    alice.get_received()
    assert gm.emit("undo", {"battle_id": duel.battle_id, "expected_v": duel.version}, callback=True)["ok"]
    frames = json.dumps(alice.get_received())
    assert SECRET_LABEL not in frames and "3d6" not in frames
    assert "The GM took back" in frames


def test_a_roll_does_not_make_another_players_declaration_stale(duel: Table) -> None:
    alice, bob = duel.alice(), duel.bob()
    seen = duel.version
    assert bob.emit("roll", {"notation": "d6"}, callback=True)["ok"]
    ack = alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": seen, "msg_id": "a1",
                                 "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}}, callback=True)
    assert ack["ok"] is True, ack


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_a_battle_with_rolls_exports_verifies_imports_and_replays(tmp_path: Path, system_id: str) -> None:
    source, target = make_app(tmp_path / "here"), make_app(tmp_path / "there")
    try:
        here, there = source.extensions["battleboard"].service, target.extensions["battleboard"].service
        _, battle_id = play_battle(here, system_id, max_accepted=3)
        # the battle has ended: reopen a fresh one and roll in it, then end it
        battle_id = here.start_battle(here.battle(battle_id).table_id, seed="rolls-seed").battle_id
        seat = here.seats(here.battle(battle_id).table_id)[0].public_id
        here.roll_dice(battle_id, Viewer.player(seat), {"notation": "4d6kh3", "label": "stats"}, by="One")
        here.roll_dice(battle_id, Viewer.gm(), {"notation": "d100", "label": SECRET_LABEL, "secret": True}, by="The GM")
        here.end_battle(battle_id, Viewer.gm())
        doc = load_document(json.dumps(export_battle(here, battle_id)).encode())
        validate(doc)
        assert verify_document(doc).ok
        kinds = [c["declaration"]["type"] for c in doc["commands"]]
        assert kinds.count("dice_roll") == 2
        # tampering with a rolled face is caught
        bad = json.loads(json.dumps(doc))
        for ev in bad["events"]:
            if ev["type"] == "dice.rolled":
                ev["rolls"][0]["faces"][0] = 7 - ev["rolls"][0]["faces"][0] if ev["rolls"][0]["faces"][0] != 3 else 4
                break
        assert not verify_document(bad).ok
        # the public copy says the GM rolled in secret, and nothing more
        public = json.dumps(export_battle(here, battle_id, public=True))
        assert SECRET_LABEL not in public and "The GM rolled in secret." in public
        # and so does the public replay
        from webapp.replay_view import ReplayAccess, replay_data

        battle = here.battle(battle_id)
        replay = json.dumps(replay_data(here, here.table(table_id=battle.table_id), ReplayAccess(battle, Viewer.spectator()), {}), default=str)
        assert SECRET_LABEL not in replay and "The GM rolled in secret." in replay
        assert "One rolled 4d6kh3 for stats" in replay
        path = tmp_path / "battle.json"
        path.write_text(json.dumps(doc))
        run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(path)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        _, imported = import_document(there, doc)
        assert replay_battle(there, imported).ok
    finally:
        source.extensions["battleboard"].service.engine.dispose()
        target.extensions["battleboard"].service.engine.dispose()


def test_between_battles_the_table_dice_are_committed_first(app: Any) -> None:
    table = Table(app, start=False)
    alice, gm, spectator = table.alice(), table.gm(), table.spectator()
    ack = alice.emit("roll", {"notation": "d20"}, callback=True)
    assert ack["ok"] is False and "roll_commit" in ack["error"]
    first = alice.emit("roll_commit", {}, callback=True)
    assert first["ok"] and len(first["commitment"]) == 64
    spectator.get_received()
    made = alice.emit("roll", {"notation": "3d8 + 1d6", "label": "loot", "commit_id": first["commit_id"]}, callback=True)
    assert made["ok"] is True and commitment(made["seed"]) == first["commitment"]
    shown = received(spectator, "table_roll")
    assert len(shown) == 1 and shown[0]["text"] == made["text"] and shown[0]["commitment"] == first["commitment"]
    assert check(made["seed"], "3d8+1d6", [r["faces"] for r in shown[0]["rolls"]])
    # a commitment rolls once, and only for its own seat
    again = alice.emit("roll", {"notation": "d20", "commit_id": first["commit_id"]}, callback=True)
    assert again["ok"] is False and "used" in again["error"]
    bob_try = table.bob().emit("roll", {"notation": "d20", "commit_id": made["next"]["commit_id"]}, callback=True)
    assert bob_try["ok"] is False
    # a secret one between battles: only the GM's pages get it
    commit = gm.emit("roll_commit", {}, callback=True)
    alice.get_received()
    spectator.get_received()
    secret = gm.emit("roll", {"notation": "d100", "label": SECRET_LABEL, "secret": True, "commit_id": commit["commit_id"]}, callback=True)
    assert secret["ok"] is True
    for page in (alice, spectator):
        frames = json.dumps(page.get_received())
        assert SECRET_LABEL not in frames and secret["seed"] not in frames and "The GM rolled in secret." in frames


def test_the_pointer_goes_to_every_page_and_names_no_combatant_on_a_grid(app: Any) -> None:
    from rules import get_system
    from tests.server.test_fair_dice import lineup_for

    service = app.extensions["battleboard"].service
    system = get_system("battles-and-balances")
    table = service.create_table("Pointer", system.id)
    _, one = service.join(table.join_code, "One")
    service.set_lineup(table.id, lineup_for(system, [one.public_id, one.public_id]))
    service.start_battle(table.id, seed="pointer-seed")
    from webapp.app import socketio

    def client(token: str | None) -> Any:
        return socketio.test_client(app, auth={"table": table.slug, "token": token}, flask_test_client=app.test_client())

    phone, gm, tv = client(one.token), client(table.gm_token), client(None)
    version = service.battle(service.table(table_id=table.id).battle_id).version
    tv.get_received()
    ack = phone.emit("point", {"square": [1, 2]}, callback=True)
    assert ack["ok"] is True
    shown = received(tv, "pointer")
    assert len(shown) == 1 and shown[0]["square"] == [1, 2] and shown[0]["name"] == "One" and "combatant" not in shown[0]
    assert shown[0]["colour"].startswith("#")
    # a grid system's point is a square: a combatant alone, or a square off the board, is refused
    for bad in ({"combatant": "c1"}, {"square": [999, 0]}, {"square": [1]}, {"square": ["1", 2]}, {"square": [1, 2], "hidden": 1}):
        answer = phone.emit("point", bad, callback=True)
        assert answer["ok"] is False, bad
    # the GM's point at a square where a hidden combatant stands shows the square alone
    assert gm.emit("point", {"square": [0, 0]}, callback=True)["ok"]
    assert all("combatant" not in m for m in received(tv, "pointer"))
    # and the rate limit: per seat
    answers = [phone.emit("point", {"square": [0, 1]}, callback=True) for _ in range(20)]
    assert answers[-1]["ok"] is False and answers[-1]["code"] == "rate_limited"
    assert gm.emit("point", {"square": [0, 1]}, callback=True)["ok"] is True
    # nothing of it is stored: the battle's version did not move
    assert service.battle(service.table(table_id=table.id).battle_id).version == version


def test_a_point_on_a_duel_names_a_combatant_the_tv_shows(duel: Table) -> None:
    alice, tv = duel.alice(), duel.spectator()
    before = duel.version
    tv.get_received()
    assert alice.emit("point", {"combatant": "monster"}, callback=True)["ok"] is True
    shown = received(tv, "pointer")
    assert shown and shown[0]["combatant"] == "monster" and shown[0]["name"] == "Alice"
    assert alice.emit("point", {"combatant": "nobody"}, callback=True)["ok"] is False
    assert alice.emit("point", {"square": [0, 0]}, callback=True)["ok"] is False
    assert duel.version == before  # a point is not a command: nothing stored


def test_broken_characters_and_fuzzed_payloads_change_nothing_and_crash_nothing(duel: Table) -> None:
    """The generic role, payload and fuzz tests list the events of webapp/sockets.py; these three live in
    modules of their own, so they get the same checks here."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.server.test_security import database_dump
    from tests.server.test_trust import BROKEN

    gm, alice = duel.gm(), duel.alice()
    before = database_dump(duel.service)
    for event in ("roll", "roll_commit", "point"):
        for text in BROKEN:
            for field in ("notation", "label", "combatant"):
                ack = gm.emit(event, {field: text}, callback=True)
                assert ack["ok"] is False and ack["code"] == "invalid" and "character" in ack["error"], (event, text, ack)
    assert database_dump(duel.service) == before

    values = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.text(max_size=80),
                       st.lists(st.integers(-5, 50), max_size=4), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
    payloads = st.dictionaries(st.sampled_from(["notation", "label", "secret", "square", "combatant", "commit_id", "msg_id", "x"]),
                               values, max_size=4)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(event=st.sampled_from(["roll", "point", "roll_commit"]), payload=payloads, as_gm=st.booleans())
    def fuzz(event: str, payload: dict[str, Any], as_gm: bool) -> None:
        ack = (gm if as_gm else alice).emit(event, payload, callback=True)
        assert isinstance(ack, dict) and isinstance(ack.get("ok"), bool)
        assert ack.get("code") != "server_error", (event, payload, ack)

    fuzz()


def test_a_point_into_the_fog_rings_the_square_and_names_nothing_in_it(app: Any) -> None:
    from rules import get_system
    from tests.server.test_fair_dice import lineup_for
    from webapp.app import socketio

    service = app.extensions["battleboard"].service
    system = get_system("eclipse-phase")
    table = service.create_table("Fog point", system.id)
    _, one = service.join(table.join_code, "One")
    service.set_lineup(table.id, lineup_for(system, [one.public_id, one.public_id]))
    battle_id = service.start_battle(table.id, seed="fog-point").battle_id
    state = service.battle(battle_id).state
    foe = next(c for c in state["combatants"].values() if c.get("controller") != "seat" and isinstance(c.get("x"), int))

    def client(token: str | None) -> Any:
        return socketio.test_client(app, auth={"table": table.slug, "token": token}, flask_test_client=app.test_client())

    gm, tv, phone = client(table.gm_token), client(None), client(one.token)
    assert gm.emit("fog_set", {"add": [[foe["x"], foe["y"]]]}, callback=True)["ok"]
    tv.get_received()
    phone.get_received()
    assert gm.emit("point", {"square": [foe["x"], foe["y"]]}, callback=True)["ok"]
    for page in (tv, phone):
        frames = page.get_received()
        rings = [m["args"][0] for m in frames if m["name"] == "pointer"]
        assert rings and rings[0]["square"] == [foe["x"], foe["y"]] and rings[0]["name"] == "The GM"
        text = json.dumps(frames)
        assert foe["name"] not in text and "combatant" not in text
    # a player may point into the fog as well: a dark square, nothing more
    assert phone.emit("point", {"square": [foe["x"], foe["y"]]}, callback=True)["ok"]
