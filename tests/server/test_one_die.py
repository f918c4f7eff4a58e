"""The sixth system, from its own folder (tests/systems/one_die/, registered by BATTLEBOARD_SYSTEMS alone:
tests/conftest.py): the server offers it, starts a table of it and plays a duel to the end over the
sockets, with the battle's seeded dice and the computer rolling for its duellist through the contract's
hook; every page gets the common view shape, the TV's display page and its generic modules serve, and
the first roll of a round stays with its side until the second is in."""

from __future__ import annotations

from typing import Any

from rules import available_systems, get_system
from rules.contract import VIEW_KEYS
from rules.registry import SYSTEM_PACKAGES
from webapp.app import socketio

SEED = "one-die-seed-5e1f"


def client(app: Any, slug: str, token: str | None) -> Any:
    c = socketio.test_client(app, auth={"table": slug, "token": token}, flask_test_client=app.test_client())
    assert c.is_connected()
    return c


def latest(c: Any, into: dict[str, Any]) -> dict[str, Any]:
    """The newest battle payload a client received (kept in ``into`` across calls), and all it got as text."""
    received = c.get_received()
    for message in received:
        if message["name"] == "update":
            payload = message["args"][0]
            into.setdefault("events", []).extend(payload["events"])
            if payload["v"] >= into.get("battle", {}).get("v", -1):
                into["battle"] = payload
    return into.get("battle", {})


def test_the_one_die_duel_is_registered_from_its_folder_alone() -> None:
    assert "one-die" not in SYSTEM_PACKAGES  # not in the one list of rules/registry.py
    assert "one-die" in [system.id for system in available_systems()]
    assert type(get_system("one-die")).__module__ == "tests.systems.one_die.system"


def test_a_one_die_duel_is_played_to_the_end_over_the_sockets(app: Any) -> None:
    front = app.test_client().get("/")
    assert "One-die duel" in front.get_data(as_text=True)  # the GM's form offers it
    service = app.extensions["battleboard"].service
    table = service.create_table("Dice at dawn", "one-die")
    _, alice = service.join(table.join_code, "Alice")
    gm, player, tv = client(app, table.slug, table.gm_token), client(app, table.slug, alice.token), client(app, table.slug, None)

    synced = gm.emit("sync", {}, callback=True)
    assert synced["table"]["traits"]["board_module"] == "generic"
    lineup = [{"name": "Ann the Bold", "id": "ann", "side": "A", "controller": "seat", "seat": alice.public_id},
              {"name": "Bert the Brave", "id": "bert", "side": "B", "controller": "computer", "seat": None}]
    assert gm.emit("lineup_set", {"lineup": lineup}, callback=True)["ok"]
    battle_id = service.start_battle(table.id, seed=SEED).battle_id
    seen: dict[str, dict[str, Any]] = {"gm": {}, "player": {}, "tv": {}}
    for c in (gm, player, tv):
        c.emit("sync", {}, callback=True)

    rounds = 0
    while service.battle(battle_id).status != "ended":
        rounds += 1
        assert rounds < 100, "the duel never ended"
        state = service.battle(battle_id).state
        # the computer rolled for Bert as the round began: Ann's side and the TV know he did, not his face
        bert = state["rolled"]["bert"]
        assert bert is not None
        mine = latest(player, seen["player"])
        assert mine["view"]["acting"]["combatants"] == ["ann"]
        assert [c["roll"] for c in mine["view"]["duel"]["combatants"]] == [None, None]
        assert latest(gm, seen["gm"])["view"]["duel"]["combatants"][1]["roll"] == bert
        on_tv = latest(tv, seen["tv"])["view"]
        assert on_tv["legal"] == [] and on_tv["acting"]["label"] == f"Round {state['round']}, roll the die"
        reply = player.emit("declare", {"battle_id": battle_id, "declaration": {"type": "roll", "combatant": "ann"},
                                        "msg_id": f"r{rounds}"}, callback=True)
        assert reply["ok"], reply

    end = service.battle(battle_id).state
    winner = next(c for c in end["combatants"].values() if c["hits"] == 3)
    assert end["outcome"]["text"] == f"{winner['name']} wins the duel."
    for who, c in (("gm", gm), ("player", player), ("tv", tv)):
        battle = latest(c, seen[who])
        view = battle["view"]
        assert set(VIEW_KEYS) <= set(view) and view["status"] == "ended" and view["acting"]["label"] == "Over"
        assert [f["out"] for f in view["fighters"]] == [c["out"] for c in end["combatants"].values()]
        assert any(e["text"] == end["outcome"]["text"] for e in battle["events"])
    # no face of Bert's reached Ann's phone or the TV before its round was resolved: each of his rolls
    # came to them as "has rolled", without the die (the round's line then tells both faces)
    for who in ("player", "tv"):
        his = [e for e in seen[who]["events"] if e["type"] == "die.rolled" and e.get("text", "").startswith("Bert")]
        assert his and {e["text"] for e in his} == {"Bert the Brave has rolled."} and not any(e.get("rolls") for e in his), who
    assert {e["text"] for e in seen["gm"]["events"] if e["type"] == "die.rolled" and e["text"].startswith("Bert")} != {"Bert the Brave has rolled."}


def test_the_tv_page_and_the_generic_modules_serve(app: Any) -> None:
    service = app.extensions["battleboard"].service
    table = service.create_table("Dice on the TV", "one-die")
    web = app.test_client()
    assert web.get(f"/t/{table.slug}/display").status_code == 200
    for module in ("display/generic.js", "systems/generic.js"):
        assert web.get(f"/static/js/{module}").status_code == 200
