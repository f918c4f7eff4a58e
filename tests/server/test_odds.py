"""The ``odds`` socket event: roles, bad payloads, someone else's combatant, and the leak contract."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session

from tests.conftest import Table
from webapp.app import CLIENT_EVENTS, GM_EVENTS
from webapp.models import GameTable
from webapp.sockets import EVENT_HANDLERS, ODDS_EVENTS


def ask(client: Any, duel: Table, declaration: Any, **extra: Any) -> dict[str, Any]:
    return client.emit("odds", {"battle_id": duel.battle_id, "declaration": declaration, **extra}, callback=True)


def test_odds_is_a_registered_client_event_for_every_role() -> None:
    assert ODDS_EVENTS == ("odds",) and "odds" in EVENT_HANDLERS
    assert EVENT_HANDLERS["odds"][1] is False, "players ask too: not a GM-only event"
    assert "odds" in CLIENT_EVENTS and "odds" not in GM_EVENTS


def test_a_player_gets_the_odds_of_its_own_combatant(duel: Table) -> None:
    alice = duel.alice()
    before = duel.version
    ack = ask(alice, duel, {"type": "choose", "combatant": "jharek", "option": "attack"})
    assert ack["ok"] is True, ack
    assert ack["v"] == before and duel.version == before, "asking changes nothing"
    choice = ack["odds"]["choices"][0]
    assert choice["option"] == "attack" and len(choice["cases"]) == 4
    assert all(o["exact"] and "/" in o["fraction"] for o in choice["outcomes"])


def test_the_gm_gets_odds_for_any_combatant(duel: Table) -> None:
    gm = duel.gm()
    for combatant in ("jharek", "monster"):
        ack = ask(gm, duel, {"type": "choose", "combatant": combatant})
        assert ack["ok"] and [c["option"] for c in ack["odds"]["choices"]] == ["press", "attack", "defend", "run_away"]


def test_someone_elses_combatant_is_refused(duel: Table) -> None:
    alice, bob = duel.alice(), duel.bob()
    assert ask(alice, duel, {"combatant": "monster", "option": "attack"})["code"] == "forbidden"
    assert ask(bob, duel, {"combatant": "jharek", "option": "attack"})["code"] == "forbidden"


def test_spectators_are_refused_unless_the_gm_shows_odds(duel: Table) -> None:
    spectator = duel.spectator()
    ack = ask(spectator, duel, {"combatant": "jharek", "option": "attack"})
    assert ack["ok"] is False and ack["code"] == "forbidden"
    service = duel.service
    with Session(service.engine) as s:
        table = s.get(GameTable, duel.table.id)
        if not hasattr(table, "display"):
            pytest.skip("the table display's settings are not built yet")
        table.display = {"show_join": False, "show_odds": True}
        s.add(table)
        s.commit()
    ack = ask(spectator, duel, {"combatant": "jharek", "option": "attack"})
    assert ack["ok"] is True, ack
    gm_ack = ask(duel.gm(), duel, {"combatant": "jharek", "option": "attack"})
    alice_ack = ask(duel.alice(), duel, {"combatant": "jharek", "option": "attack"})
    assert ack["odds"] == alice_ack["odds"] == gm_ack["odds"], "the stats are open: the same odds for all"


@pytest.mark.parametrize(
    "payload",
    [
        "nonsense",
        {"battle_id": [], "declaration": {"combatant": "jharek"}},
        {"battle_id": "1", "declaration": {"combatant": "jharek"}},
        {"battle_id": True, "declaration": {"combatant": "jharek"}},
        {"battle_id": 999999, "declaration": {"combatant": "jharek"}},
        {"battle_id": None, "declaration": {"combatant": "jharek"}},
        {"declaration": "jharek"},
        {"declaration": ["jharek"]},
        {"declaration": None},
        {"declaration": {"combatant": "jharek", "option": "dance"}},
        {"declaration": {"combatant": 5}},
        {"declaration": {"combatant": "nobody"}},
        {"declaration": {"combatant": "jharek", "option": float("nan")}},
    ],
)
def test_bad_payloads_get_a_clear_error_and_change_nothing(duel: Table, payload: Any) -> None:
    gm = duel.gm()
    before, state = duel.version, duel.state
    if isinstance(payload, dict) and "battle_id" not in payload:
        payload = {"battle_id": duel.battle_id, **payload}
    ack = gm.emit("odds", payload, callback=True)
    assert ack["ok"] is False and ack["code"] in ("invalid", "forbidden", "not_found"), ack
    assert ack["error"]
    assert duel.version == before and duel.state == state


def test_a_missing_battle_id_is_refused(duel: Table) -> None:
    ack = duel.alice().emit("odds", {"declaration": {"combatant": "jharek"}}, callback=True)
    assert ack["ok"] is False and ack["code"] == "invalid"


def test_a_battle_of_another_table_is_refused(app: Any, duel: Table) -> None:
    other = Table(app)
    ack = duel.gm().emit("odds", {"battle_id": other.battle_id, "declaration": {"combatant": "jharek"}}, callback=True)
    assert ack["ok"] is False and ack["code"] == "forbidden"


def test_an_ended_duel_has_no_odds(duel: Table) -> None:
    gm = duel.gm()
    assert gm.emit("battle_end", {"battle_id": duel.battle_id, "expected_v": duel.version}, callback=True)["ok"]
    ack = ask(gm, duel, {"combatant": "jharek"})
    assert ack["ok"] is False and ack["code"] == "illegal"


def test_leak_contract_over_the_socket(duel: Table) -> None:
    """Bob's pending choice and the GM's hidden escape ruling do not move Alice's odds."""
    alice, bob, gm = duel.alice(), duel.bob(), duel.gm()
    question = {"type": "choose", "combatant": "jharek", "option": "run_away"}
    first = ask(alice, duel, question)["odds"]
    for option in ("press", "defend", "run_away"):
        ack = bob.emit(
            "declare",
            {"battle_id": duel.battle_id, "expected_v": duel.version, "declaration": {"type": "choose", "combatant": "monster", "option": option}},
            callback=True,
        )
        assert ack["ok"], ack
        assert ask(alice, duel, question)["odds"] == first
    ack = gm.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": duel.version, "declaration": {"type": "set_escape", "possible": False}},
        callback=True,
    )
    assert ack["ok"], ack
    seen = ask(alice, duel, question)
    assert seen["odds"] == first
    text = json.dumps(seen)
    assert "escape_possible" not in text and "fixed-seed" not in text
    # the GM, who made the ruling, sees running fail
    gm_odds = ask(gm, duel, question)["odds"]
    escape = [o for c in gm_odds["choices"][0]["cases"] for o in c["outcomes"] if o["key"] == "escape"]
    assert escape and all(o["p"] == 0 for o in escape)


def test_eclipse_phase_odds_over_the_socket_leak_nothing_of_the_target(app: Any) -> None:
    """Alice's odds of shooting the guard (Bob's) do not move when the GM hurts the guard off the board or
    gives it a defence modifier; the GM, who sees the guard's numbers, gets the full answer."""
    from tests.server.test_eclipse_phase_sockets import EpTable

    t = EpTable(app)
    gm, alice = t.client(t.table.gm_token), t.client(t.alice_seat.token)
    if t.battle.state["active"] == "guard":
        bob = t.client(t.bob_seat.token)
        assert t.declare(bob, {"type": "end_turn", "combatant": "guard"})["ok"]
    question = {"type": "attack", "combatant": "jinx", "target": "guard", "weapon": 0}

    def odds(client: Any) -> dict[str, Any]:
        ack = client.emit("odds", {"battle_id": t.battle_id, "declaration": question}, callback=True)
        assert ack["ok"], ack
        return ack["odds"]

    before, gm_before = odds(alice), odds(gm)
    assert before["numbers_known"] is False and gm_before["numbers_known"] is True and gm_before["cases"]
    assert t.declare(gm, {"type": "adjust", "combatant": "guard", "damage": 30, "wounds": 0})["ok"]
    assert t.declare(gm, {"type": "modifier", "combatant": "guard", "label": "hidden cover", "value": 30,
                          "applies": "defence", "lasting": True})["ok"]
    assert odds(alice) == before
    assert odds(gm) != gm_before, "the GM's answer does see the guard's numbers"
    assert "hidden cover" not in json.dumps(odds(alice))
    # and the guard's own player may not ask for Jinx's attack
    bob = t.client(t.bob_seat.token)
    ack = bob.emit("odds", {"battle_id": t.battle_id, "declaration": question}, callback=True)
    assert ack["ok"] is False and ack["code"] == "forbidden"


def test_the_same_question_is_answered_from_the_cache_until_the_battle_moves(duel: Table) -> None:
    from webapp import sockets

    alice, bob = duel.alice(), duel.bob()
    question = {"type": "choose", "combatant": "jharek", "option": "press"}
    first = ask(alice, duel, question)
    assert ask(alice, duel, question) == first
    key = next(k for k in sockets._ODDS_CACHE if k[0] == duel.battle_id and k[1] == first["v"])
    assert key[2].role == "player"
    # a new version (both chose: the turn resolved) asks afresh
    assert alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": duel.version,
                                  "declaration": {"type": "choose", "combatant": "jharek", "option": "attack"}}, callback=True)["ok"]
    assert bob.emit("declare", {"battle_id": duel.battle_id, "expected_v": duel.version,
                                "declaration": {"type": "choose", "combatant": "monster", "option": "attack"}}, callback=True)["ok"]
    later = ask(alice, duel, question)
    if later["ok"]:
        assert later["v"] == duel.version != first["v"]


# --- every system over the socket: the contract of test_leaks.py for the odds ------------------------


def _questions(system_id: str, state: dict[str, Any], cid: str) -> list[dict[str, Any]]:
    foes = [o for o, c in state["combatants"].items() if c["side"] != state["combatants"][cid]["side"]]
    if system_id == "phantoms-bane":
        return [{"type": "choose", "combatant": cid}]
    if system_id == "eclipse-phase":
        return [{"type": "attack", "combatant": cid, "target": foe, "weapon": 0} for foe in foes]
    if system_id == "battles-and-balances":
        return [{"combatant": cid}] + [{"type": "attack", "combatant": cid, "target": foe} for foe in foes]
    if system_id == "adnd":
        return [{"combatant": cid, "kind": kind, "target": foe} for foe in foes for kind in ("melee", "charge")]
    return [{"battles": 20}]  # Olympia: the whole battle, the same public answer for everyone


@pytest.mark.parametrize("system_id", ["phantoms-bane", "eclipse-phase", "battles-and-balances", "adnd", "olympia"])
def test_every_system_answers_each_seat_for_its_own_and_leaks_nothing(tmp_path: Any, system_id: str) -> None:
    from rules import Viewer, derive_seed, engine, get_system
    from tests.conftest import make_app
    from tests.server.test_leaks import GM_NOTES, Recorder, lineup_for

    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    try:
        table = service.create_table("Odds leak test", system_id)
        _, seat_one = service.join(table.join_code, "Seat One")
        _, seat_two = service.join(table.join_code, "Seat Two")
        lineup = lineup_for(system, [seat_one.public_id, seat_two.public_id])
        for entry in lineup:
            if "notes" in {f.name for f in system.combatant_fields()}:
                entry["notes"] = "zq-odds-secret-5521"
        service.set_lineup(table.id, lineup)
        service.set_notes(table.id, GM_NOTES)
        battle_id = service.start_battle(table.id, seed="odds-leak-seed").battle_id
        battle = service.battle(battle_id)
        state = battle.state
        seats = {seat_one.public_id: Recorder(app, table.slug, seat_one.token), seat_two.public_id: Recorder(app, table.slug, seat_two.token)}
        spectator = Recorder(app, table.slug, None)
        secrets = [GM_NOTES, "zq-notes-7731", "zq-odds-secret-5521", battle.seed, table.join_code, table.gm_token,
                   seat_one.token, seat_two.token, derive_seed(battle.seed, battle.version)]
        answered = 0
        for seat, client in seats.items():
            viewer = Viewer.player(seat)
            for cid, c in state["combatants"].items():
                for question in _questions(system_id, state, cid):
                    ack = client.call("odds", {"battle_id": battle_id, "declaration": question})
                    assert ack.get("code") != "server_error", (question, ack)
                    if system_id != "olympia" and (c.get("controller") != "seat" or c.get("seat") != seat):
                        assert ack["ok"] is False and ack["code"] == "forbidden", (cid, question, ack)
                        continue
                    if ack["ok"]:
                        answered += 1
                        assert json.loads(json.dumps(engine.odds(system, state, viewer, question))) == ack["odds"]
                    else:
                        assert ack["code"] in ("invalid", "illegal"), ack
            text = json.dumps(client.transcript)
            for secret in secrets:
                assert secret not in text, (system_id, secret)
        ack = spectator.call("odds", {"battle_id": battle_id, "declaration": _questions(system_id, state, next(iter(state["combatants"])))[0]})
        assert ack["ok"] is False and ack["code"] == "forbidden"
        assert answered >= 1, f"{system_id}: no seat got any odds"
    finally:
        service.engine.dispose()


# --- random questions in every system: a clear answer or a clear refusal, nothing changed, nothing leaked --

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rules.systems.olympia import odds as olympia_odds  # noqa: E402
from tests.server.test_fuzz import IN_CI, KNOWN_CODES, check_answer, fuzzed, json_values  # noqa: E402,F401

ODDS_KEYS = ["type", "combatant", "target", "option", "kind", "weapon", "mode", "battles", "attribute", "difficulty",
             "a_combatant", "b_combatant", "a_attribute", "b_attribute", "visibility", "pool", "bonus", "called_shot"]


#: Olympia's odds simulate the battle over and over (about 1,000 battles an answer, seconds each): this
#: test checks the answers' shape, not their precision (tests/rules/test_odds_olympia.py does that), so
#: its answers get a budget of a few dozen battles (the 128 men of its lineup: 23 battles; a question
#: for 10 battles still gets all 10, one for more gets the note saying fewer were fought)
FUZZ_OLYMPIA_BUDGET = 3_000


@pytest.fixture
def proportionate_odds(fuzzed: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    if fuzzed.table.system_id == "olympia":
        monkeypatch.setattr(olympia_odds, "WORK_BUDGET", FUZZ_OLYMPIA_BUDGET)


@settings(max_examples=30, deadline=None, derandomize=IN_CI, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_odds_questions(fuzzed: Any, proportionate_odds: None, data: Any) -> None:  # noqa: F811 - the fixture of test_fuzz
    role = data.draw(st.sampled_from(["gm", "player", "spectator"]), label="role")
    plausible_values = st.sampled_from(fuzzed.combatants + ["press", "attack", "melee", "charge", "single", "muscle", 0, 1, 20, None, True, -1])
    declaration = data.draw(st.dictionaries(st.sampled_from(ODDS_KEYS), plausible_values | json_values, max_size=5), label="declaration")
    payload = data.draw(st.sampled_from([{"battle_id": fuzzed.battle_id, "declaration": declaration},
                                         {"battle_id": fuzzed.battle_id, "declaration": json.loads(json.dumps(declaration))},
                                         {"declaration": declaration}, declaration]), label="payload")
    before = fuzzed.dump()
    ack = fuzzed.clients[role].emit("odds", payload, callback=True)
    check_answer(fuzzed, role, "odds", payload, ack, before)
    assert ack["ok"] or ack["code"] in KNOWN_CODES
    assert fuzzed.dump() == before, "a question changed the database"
