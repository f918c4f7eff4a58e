"""Physical dice over the socket: the battle waits, the roller's phone types the faces, bad entries change nothing."""

from __future__ import annotations

from typing import Any

import pytest

from rules.physical import pending
from tests.conftest import Table
from webapp.app import CLIENT_EVENTS
from webapp.sockets import EVENT_HANDLERS, PHYSICAL_DICE_EVENTS


@pytest.fixture
def table(app: Any) -> Table:
    """Alice plays Jharek, Bob the monster; players roll their own dice."""
    t = Table(app, start=False)
    t.service.set_options(t.table.id, {"who_rolls": "players"})
    t.battle_id = t.service.start_battle(t.table.id, seed="fixed-seed").battle_id
    return t


def choose(client: Any, t: Table, combatant: str, option: str) -> dict[str, Any]:
    return client.emit("declare", {"battle_id": t.battle_id, "msg_id": f"{combatant}-{t.version}",
                                   "declaration": {"type": "choose", "combatant": combatant, "option": option}},
                       callback=True)


def enter(client: Any, t: Table, **payload: Any) -> dict[str, Any]:
    return client.emit("dice_enter", {"battle_id": t.battle_id, **payload}, callback=True)


def last_view(client: Any) -> dict[str, Any]:
    views = [p["args"][0]["view"] for p in client.get_received() if p["name"] == "update"]
    return views[-1]


def test_the_events_are_registered() -> None:
    assert PHYSICAL_DICE_EVENTS == ("dice_enter", "dice_physical")
    assert EVENT_HANDLERS["dice_enter"][1] is False and EVENT_HANDLERS["dice_physical"][1] is True
    assert set(PHYSICAL_DICE_EVENTS) <= set(CLIENT_EVENTS)


def test_the_option_is_in_the_gms_form(table: Table) -> None:
    gm = table.gm()
    forms = gm.emit("sync", {"since_v": 0}, callback=True)["table"]["forms"]["options"]
    field = next(f for f in forms if f["name"] == "who_rolls")
    assert field["default"] == "board" and [c[0] for c in field["choices"]] == ["board", "players", "all"]


def test_a_duel_turn_typed_on_both_phones(table: Table) -> None:
    alice, bob, gm, spectator = table.alice(), table.bob(), table.gm(), table.spectator()
    assert choose(alice, table, "jharek", "attack")["ok"]
    assert table.state["physical"]["pending"] is None  # one choice: nothing to roll, the choice stays secret
    ack = choose(bob, table, "monster", "attack")
    assert ack["ok"], ack
    waiting = table.version
    due = last_view(alice)["physical"]["due"]
    assert due["mine"] and due["prompt"] == "Roll 1d6 for Jharek offence die" and (due["low"], due["high"]) == (1, 6)
    assert last_view(bob)["physical"]["due"]["mine"] is False
    public = last_view(spectator)["physical"]["due"]
    assert public["roller_name"] == "Jharek" and "purpose" not in public and "prompt" not in public
    assert last_view(gm)["physical"]["due"]["mine"] is True
    for client, faces in ((alice, [5]), (alice, [2])):
        assert enter(client, table, faces=faces)["ok"]
    assert table.state["physical"]["pending"]["need"]["purpose"] == "Wild Monster offence die"
    assert enter(bob, table, faces=[1])["ok"]
    assert enter(bob, table, faces=[6])["ok"]
    assert table.state["physical"]["pending"] is None and table.version == waiting + 4
    events = table.service.events_since(table.battle_id, waiting)
    rolls = [r for e in events for r in e["rolls"]]
    seat_a, seat_b = table.seat_a.public_id, table.seat_b.public_id
    assert [(r["purpose"], r["faces"], r.get("physical"), r.get("entered_by")) for r in rolls[:4]] == [
        ("Jharek offence die", [5], True, f"seat:{seat_a}"), ("Jharek defence die", [2], True, f"seat:{seat_a}"),
        ("Wild Monster offence die", [1], True, f"seat:{seat_b}"), ("Wild Monster defence die", [6], True, f"seat:{seat_b}"),
    ]
    assert table.state["turn"] == 2 or table.state["status"] == "ended"


BAD = [
    ({"faces": [3, 4]}, "invalid", "needs 1 face, not 2"),
    ({"faces": []}, "invalid", "needs 1 face, not 0"),
    ({"faces": [7]}, "invalid", "a d6 shows 1 to 6, not 7"),
    ({"faces": [0]}, "invalid", "a d6 shows 1 to 6, not 0"),
    ({"faces": "6"}, "invalid", "faces must be a list of whole numbers"),
    ({"faces": [True]}, "invalid", "faces must be a list of whole numbers"),
    ({"faces": [2.5]}, "invalid", "faces must be a list of whole numbers"),
    ({"faces": None}, "invalid", "faces must be a list of whole numbers"),
    ({"board": "yes"}, "invalid", "board must be true or false"),
    ({"board": True}, "forbidden", "only the GM may roll with the board's dice"),
    ({"battle_id": "1", "faces": [3]}, "invalid", "battle_id must be a number"),
]


@pytest.mark.parametrize(("payload", "code", "message"), BAD)
def test_bad_faces_are_refused_and_change_nothing(table: Table, payload: dict[str, Any], code: str, message: str) -> None:
    alice, bob = table.alice(), table.bob()
    choose(alice, table, "jharek", "press")
    choose(bob, table, "monster", "defend")
    version, state = table.version, table.state
    ack = enter(alice, table, **payload)
    assert ack["ok"] is False and ack["code"] == code and message in ack["error"], ack
    assert table.version == version and table.state == state


def test_faces_for_someone_elses_roll_or_when_none_is_due(table: Table) -> None:
    alice, bob, spectator = table.alice(), table.bob(), table.spectator()
    ack = enter(alice, table, faces=[3])
    assert ack["code"] == "illegal" and "no roll is due" in ack["error"]
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "attack")
    version = table.version
    ack = enter(bob, table, faces=[3])
    assert ack["code"] == "forbidden" and ack["error"] == "this roll is Jharek's, not yours"
    ack = enter(spectator, table, faces=[3])
    assert ack["code"] == "forbidden"
    ack = choose(bob, table, "monster", "attack")
    assert ack["code"] == "illegal" and "waits for dice" in ack["error"]
    assert table.version == version


def test_the_gm_types_for_an_absent_player_or_rolls_with_the_board(table: Table) -> None:
    alice, bob, gm = table.alice(), table.bob(), table.gm()
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "attack")
    start = table.version
    assert enter(gm, table, faces=[4])["ok"]
    assert enter(gm, table, board=True)["ok"]
    rolls = {r["purpose"]: r for e in table.service.events_since(table.battle_id, start) for r in e["rolls"]}
    assert table.state["physical"]["pending"]["need"]["purpose"] == "Wild Monster offence die"
    enter(gm, table, board=True)
    enter(gm, table, board=True)
    rolls = {r["purpose"]: r for e in table.service.events_since(table.battle_id, start) for r in e["rolls"]}
    assert rolls["Jharek offence die"]["entered_by"] == "gm" and rolls["Jharek offence die"]["faces"] == [4]
    assert "physical" not in rolls["Jharek defence die"] and "physical" not in rolls["Wild Monster defence die"]


def test_the_gm_switches_a_combatant_to_physical_dice(app: Any) -> None:
    t = Table(app, foe_controller="gm")  # the board rolls everything by default
    gm, alice = t.gm(), t.alice()
    ack = alice.emit("dice_physical", {"battle_id": t.battle_id, "combatant": "jharek", "physical": True}, callback=True)
    assert ack["code"] == "forbidden"
    for bad, message in ((("nobody", True), "name a combatant"), (("jharek", "yes"), "physical must be true or false")):
        ack = gm.emit("dice_physical", {"battle_id": t.battle_id, "combatant": bad[0], "physical": bad[1]}, callback=True)
        assert ack["ok"] is False and message in ack["error"]
    ack = gm.emit("dice_physical", {"battle_id": t.battle_id, "combatant": "jharek", "physical": True}, callback=True)
    assert ack["ok"], ack
    assert last_view(alice)["physical"]["physical"] == ["jharek"]
    choose(alice, t, "jharek", "attack")
    choose(gm, t, "monster", "defend")
    assert t.state["physical"]["pending"]["need"]["purpose"] == "Jharek offence die"
    assert enter(alice, t, faces=[3])["ok"] and enter(alice, t, faces=[3])["ok"]
    assert t.state["physical"]["pending"] is None  # the GM's monster rolled with the board


def test_undo_takes_back_a_typed_die_then_the_choice_that_asked_for_it(table: Table) -> None:
    alice, bob, gm = table.alice(), table.bob(), table.gm()
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "attack")
    asked = pending(table.state)
    enter(alice, table, faces=[6])
    ack = gm.emit("undo", {"battle_id": table.battle_id}, callback=True)
    assert ack["ok"], ack
    assert pending(table.state) == asked, "the die typed is taken back: the battle waits for it again"
    assert gm.emit("undo", {"battle_id": table.battle_id}, callback=True)["ok"]
    assert pending(table.state) is None and table.state["turn"] == 1


def test_a_battle_with_typed_dice_replays_from_its_log(table: Table) -> None:
    from webapp.replay import replay_battle

    alice, bob, gm = table.alice(), table.bob(), table.gm()
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "defend")
    enter(alice, table, faces=[6])
    enter(gm, table, board=True)
    gm.emit("dice_physical", {"battle_id": table.battle_id, "combatant": "jharek", "physical": False}, callback=True)
    enter(bob, table, faces=[1])
    enter(bob, table, faces=[4])
    assert table.state["physical"]["pending"] is None
    report = replay_battle(table.service, table.battle_id)
    assert report.ok, report.mismatches


def test_ending_a_waiting_battle_asks_for_nothing_more(table: Table) -> None:
    alice, bob, gm = table.alice(), table.bob(), table.gm()
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "attack")
    assert gm.emit("battle_end", {"battle_id": table.battle_id}, callback=True)["ok"]
    alice.get_received()
    view = alice.emit("sync", {"battle_id": table.battle_id, "since_v": 0}, callback=True)["battle"]["view"]
    assert view["physical"]["due"] is None
    ack = enter(alice, table, faces=[3])
    assert ack["ok"] is False and "no roll is due" in ack["error"]


def test_a_phone_that_reloads_gets_the_roll_due_again(table: Table) -> None:
    alice, bob = table.alice(), table.bob()
    choose(alice, table, "jharek", "attack")
    choose(bob, table, "monster", "attack")
    alice.disconnect()
    again = table.alice()
    view = again.emit("sync", {"battle_id": table.battle_id, "since_v": 0}, callback=True)["battle"]["view"]
    assert view["physical"]["due"]["prompt"] == "Roll 1d6 for Jharek offence die" and view["legal"] == []
    assert enter(again, table, faces=[2])["ok"]


def test_everyone_rolls_and_the_gm_types_for_the_gms_monster(app: Any) -> None:
    t = Table(app, start=False, foe_controller="gm")
    t.service.set_options(t.table.id, {"who_rolls": "all"})
    t.battle_id = t.service.start_battle(t.table.id, seed="fixed-seed").battle_id
    alice, gm = t.alice(), t.gm()
    choose(alice, t, "jharek", "defend")
    choose(gm, t, "monster", "defend")
    for client, face in ((alice, 3), (alice, 3)):
        assert enter(client, t, faces=[face])["ok"]
    need = pending(t.state)["need"]
    assert need["purpose"] == "Wild Monster offence die" and need["seats"] == []
    assert enter(alice, t, faces=[3])["code"] == "forbidden"  # the GM's monster: only the GM types it
    assert enter(gm, t, faces=[3])["ok"] and enter(gm, t, faces=[3])["ok"]
    assert pending(t.state) is None
