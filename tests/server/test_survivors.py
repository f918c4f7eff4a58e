"""Survivors carry on (issue 18 §5) through the socket events: the GM writes a finished battle's
survivors over the roster the lineup came from (or into a new one), loads it, starts the next battle,
and it starts at the carried values. Wrong roles and bad payloads change nothing."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlmodel import select

from rules import RulesError, Viewer, available_systems, get_system
from rules.carry_over import carry_over
from tests.server.test_leaks import declaration_from
from webapp import cli
from webapp.app import socketio
from webapp.models import Roster, RosterCombatant

#: the systems whose survivors carry on (a system of BATTLEBOARD_SYSTEMS may have no carry-over)
SYSTEM_IDS = [system.id for system in available_systems() if system.traits.carries_over]


def client(app: Any, slug: str, token: str | None) -> Any:
    c = socketio.test_client(app, auth={"table": slug, "token": token}, flask_test_client=app.test_client())
    assert c.is_connected()
    return c


def ack(c: Any, event: str, payload: Any) -> dict[str, Any]:
    return c.emit(event, payload, callback=True)


def fight(service: Any, battle_id: int, system_id: str, steps: int = 120) -> None:
    """The GM plays from ``view["legal"]`` for a while (dice from the battle's seed)."""
    rng = random.Random(f"survivors-{system_id}")
    system = get_system(system_id)
    for _ in range(steps):
        battle = service.battle(battle_id)
        if battle.status == "ended":
            return
        legal = system.view_for(battle.state, Viewer.gm()).get("legal") or []
        if not legal:
            return
        try:
            service.declare(battle_id, Viewer.gm(), declaration_from(rng.choice(legal), rng), actor="gm")
        except RulesError:
            pass


def carried_values(system_id: str, c: dict[str, Any]) -> dict[str, Any]:
    """What must carry over, read from a combatant of a battle state."""
    if system_id == "phantoms-bane":
        return {k: c[k] for k in ("health", "health_max", "offence", "offence_max", "defence", "defence_max")} | {
            "weapon": (c["weapon"] or {}).get("bonus"), "armour": (c["armour"] or {}).get("bonus")}
    if system_id == "eclipse-phase":
        return {"damage": c["damage"], "wounds": c["wounds"], "conditions": [k for k in c["conditions"] if k != "surprised"]}
    if system_id == "adnd":
        return {"hp": c["hp"], "hp_max": c["hp_max"]}
    if system_id == "battles-and-balances":
        return {k: c[k] for k in ("wounds", "armour_wear", "effects", "blessings", "curses", "ammo")}
    return {"troops": {k: n for k, n in c["troops"].items() if n > 0}, "health": c["health"]}


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_survivors_written_over_their_roster_start_the_next_battle_where_this_one_stopped(app: Any, system_id: str) -> None:
    service = app.extensions["battleboard"].service
    table = service.create_table(f"Campaign {system_id}", system_id)
    gm = client(app, table.slug, table.gm_token)
    assert ack(gm, "lineup_set", {"lineup": cli.demo_lineup(system_id)})["ok"]
    saved = ack(gm, "roster_save", {"name": "The company"})
    assert saved["ok"]
    # the lineup came from (was saved as) that roster: the GM's table payload says so
    assert ack(gm, "sync", {})["table"]["roster_id"] == saved["roster_id"]
    assert ack(gm, "roster_load", {"roster_id": saved["roster_id"]})["ok"]
    assert ack(gm, "sync", {})["table"]["roster_id"] == saved["roster_id"]
    started = ack(gm, "battle_start", {})
    battle_id = started["battle_id"]
    if service.battle(battle_id).status == "setup":  # Olympia's deployment
        assert ack(gm, "declare", {"battle_id": battle_id, "declaration": {"type": "begin"}, "msg_id": "begin"})["ok"]
    fight(service, battle_id, system_id)
    if service.battle(battle_id).status != "ended":
        assert ack(gm, "battle_end", {"battle_id": battle_id})["ok"]
    end = service.battle(battle_id).state
    expected, left_out = carry_over(end, service.table(table_id=table.id).lineup)
    if not expected:  # everyone fell (a drawn duel): nothing to write, and nothing is written
        reply = ack(gm, "survivors_save", {"battle_id": battle_id, "roster_id": saved["roster_id"]})
        assert reply["ok"] is False and "nobody is left standing" in reply["error"]
        return

    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "roster_id": saved["roster_id"]})
    assert reply["ok"], reply
    assert reply["roster_id"] == saved["roster_id"] and reply["left_out"] == left_out
    assert reply["survivors"] == [e["name"] for e in expected]
    with service.session() as s:
        assert len(s.exec(select(Roster).where(Roster.library == table.library)).all()) == 1
        members = s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == saved["roster_id"])).all()
    assert [m.name for m in members] == [e["name"] for e in expected]

    # the next battle: the roster loaded again, started; everyone starts at the carried values
    loaded = ack(gm, "roster_load", {"roster_id": saved["roster_id"]})
    assert loaded["ok"]
    # the fallen are replaced by fresh foes of the same kind (a duel needs two)
    # everyone the GM's: a computer-played survivor or foe acting first as the battle starts would
    # spend its action points before the test reads them (the battle's seed, and so who acts first,
    # is random: this failed about one run in ten)
    fresh = [dict(e, id=f"new{i}", name=f"Fresh {e['name']}"[:40], controller="gm") for i, e in enumerate(cli.demo_lineup(system_id))
             if e["name"] in left_out]
    survivors = [dict(e, controller="gm") for e in loaded["lineup"]]
    assert ack(gm, "lineup_set", {"lineup": survivors + fresh})["ok"]
    restarted = ack(gm, "battle_start", {})
    assert restarted["ok"], restarted
    new = service.battle(restarted["battle_id"]).state["combatants"]
    names = {c["name"]: c for c in new.values() if not c["name"].startswith("Fresh ")}
    assert sorted(names) == sorted(e["name"] for e in expected)
    by_name = {c["name"]: c for c in end["combatants"].values()}
    for name, c in names.items():
        assert carried_values(system_id, c) == carried_values(system_id, by_name[name]), name
    if system_id == "battles-and-balances":
        assert all(c["ap"] == c["ap_max"] for c in new.values())
    if system_id == "eclipse-phase":
        assert all(c["pools"] == c["pools_max"] for c in new.values())
    gm.disconnect()


def test_only_those_still_standing_carry_on_and_the_gm_is_told_who_is_left_behind(app: Any) -> None:
    """The defeated do not carry on unseen (issue 33): by default only those still standing are
    written; the preview names who carries on and who is left behind before anything is written;
    the fallen who live carry on only when the GM asks (``fallen``), still down."""
    service = app.extensions["battleboard"].service
    table = service.create_table("Orc caves", "adnd")
    service.set_lineup(table.id, cli.demo_lineup("adnd"))
    battle_id = service.start_battle(table.id, seed="caves").battle_id
    names = {e["id"]: e["name"] for e in service.table(table_id=table.id).lineup}
    # the thief is down at -3 (alive), the orc and the gnoll are dead
    for cid, hp in (("c3", -3), ("c4", -20), ("c5", -20)):
        service.declare(battle_id, Viewer.gm(), {"type": "set_hp", "combatant": cid, "hp": hp}, actor="gm")
    service.end_battle(battle_id, Viewer.gm())
    gm = client(app, table.slug, table.gm_token)
    standing = [names[c] for c in ("c1", "c2", "c6")]
    behind = [names[c] for c in ("c3", "c4", "c5")]

    preview = ack(gm, "survivors_preview", {"battle_id": battle_id})
    assert preview == {"ok": True, "survivors": standing, "left_out": behind, "fallen": [names["c3"]]}
    with service.session() as s:
        assert s.exec(select(Roster)).all() == []  # a preview writes nothing
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "After the caves"})
    assert reply["ok"] and reply["survivors"] == standing and reply["left_out"] == behind
    assert [e["name"] for e in service.table(table_id=table.id).lineup] == standing

    # asked for, the thief who fell but lives carries on too, still down; the dead never
    service.set_lineup(table.id, cli.demo_lineup("adnd"))  # (survivors are written from the lineup the battle began with)
    preview = ack(gm, "survivors_preview", {"battle_id": battle_id, "fallen": True})
    assert preview["survivors"] == [names[c] for c in ("c1", "c2", "c3", "c6")] and preview["left_out"] == behind[1:]
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "With the thief", "fallen": True})
    assert reply["ok"] and reply["survivors"] == preview["survivors"]
    thief = next(e for e in service.table(table_id=table.id).lineup if e["id"] == "c3")
    assert thief["hp"] == -3

    for bad in ({"battle_id": battle_id, "fallen": "yes"}, {"battle_id": "x"}, {}):
        assert ack(gm, "survivors_preview", bad)["code"] == "invalid"
    assert ack(gm, "survivors_save", {"battle_id": battle_id, "name": "x", "fallen": 1})["code"] == "invalid"


def finished_duel(app: Any) -> tuple[Any, Any, int]:
    service = app.extensions["battleboard"].service
    table = service.create_table("Duel", "phantoms-bane")
    service.set_lineup(table.id, cli.demo_lineup("phantoms-bane"))
    battle_id = service.start_battle(table.id, seed="carry").battle_id
    service.end_battle(battle_id, Viewer.gm())
    return service, service.table(table_id=table.id), battle_id


def test_survivors_into_a_new_roster_by_name_without_touching_the_lineup(app: Any) -> None:
    service, table, battle_id = finished_duel(app)
    gm = client(app, table.slug, table.gm_token)
    before = service.table(table_id=table.id).lineup
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "  After the duel ", "load": False})
    assert reply["ok"] and reply["name"] == "After the duel" and reply["left_out"] == []
    assert service.table(table_id=table.id).lineup == before
    table_payload = ack(gm, "sync", {})["table"]
    assert [r["name"] for r in table_payload["rosters"]] == ["After the duel"]
    assert table_payload["roster_id"] is None  # the lineup did not come from it
    # with load (the default) the lineup becomes the survivors, and points at the new roster
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "Second"})
    assert reply["ok"] and ack(gm, "sync", {})["table"]["roster_id"] == reply["roster_id"]


BAD_PAYLOADS = [
    ({}, "invalid"),
    ({"battle_id": "1"}, "invalid"),
    ({"battle_id": 99999, "name": "x"}, "not_found"),
    ({"battle_id": None, "name": "x"}, "invalid"),
    ("BATTLE", "invalid"),
    ({"battle_id": 0}, "invalid"),  # neither roster_id nor name
    ({"battle_id": 0, "name": "x", "roster_id": 1}, "invalid"),
    ({"battle_id": 0, "name": ""}, "invalid"),
    ({"battle_id": 0, "name": "x" * 81}, "invalid"),
    ({"battle_id": 0, "name": 7}, "invalid"),
    ({"battle_id": 0, "roster_id": "1"}, "invalid"),
    ({"battle_id": 0, "roster_id": True}, "invalid"),
    ({"battle_id": 0, "roster_id": 424242}, "not_found"),
    ({"battle_id": 0, "name": "x", "load": "yes"}, "invalid"),
]


@pytest.mark.parametrize(("payload", "code"), BAD_PAYLOADS)
def test_bad_payloads_get_a_clear_error_and_change_nothing(app: Any, payload: Any, code: str) -> None:
    service, table, battle_id = finished_duel(app)
    gm = client(app, table.slug, table.gm_token)
    if isinstance(payload, dict) and payload.get("battle_id") == 0:
        payload = {**payload, "battle_id": battle_id}
    lineup = service.table(table_id=table.id).lineup
    reply = ack(gm, "survivors_save", payload)
    assert reply["ok"] is False and reply["code"] == code and reply["error"], reply
    with service.session() as s:
        assert s.exec(select(Roster)).all() == []
    assert service.table(table_id=table.id).lineup == lineup


def test_players_and_spectators_may_not_write_survivors(app: Any) -> None:
    service, table, battle_id = finished_duel(app)
    _, seat = service.join(table.join_code, "Alice")
    for token in (seat.token, None):
        reply = ack(client(app, table.slug, token), "survivors_save", {"battle_id": battle_id, "name": "Mine"})
        assert reply == {"ok": False, "error": "only the GM may survivors save", "code": "forbidden"}
    with service.session() as s:
        assert s.exec(select(Roster)).all() == []
    # nor does a spectator's or player's table payload say where the lineup came from
    assert "roster_id" not in ack(client(app, table.slug, None), "sync", {})["table"]


def test_a_running_battle_another_tables_battle_and_another_library_are_refused(app: Any) -> None:
    service = app.extensions["battleboard"].service
    table = service.create_table("Running", "phantoms-bane")
    service.set_lineup(table.id, cli.demo_lineup("phantoms-bane"))
    running = service.start_battle(table.id).battle_id
    gm = client(app, table.slug, table.gm_token)
    reply = ack(gm, "survivors_save", {"battle_id": running, "name": "Too soon"})
    assert reply["code"] == "illegal" and "end it first" in reply["error"]
    _, other, other_battle = finished_duel(app)
    reply = ack(gm, "survivors_save", {"battle_id": other_battle, "name": "Theirs"})
    assert reply["code"] == "forbidden"
    # a roster of another GM's library answers as a missing one
    other_gm = client(app, other.slug, other.gm_token)
    theirs = ack(other_gm, "survivors_save", {"battle_id": other_battle, "name": "Theirs"})
    assert theirs["ok"]
    service.end_battle(running, Viewer.gm())
    reply = ack(gm, "survivors_save", {"battle_id": running, "roster_id": theirs["roster_id"]})
    assert reply["code"] == "not_found"
    with service.session() as s:
        members = s.exec(select(RosterCombatant).where(RosterCombatant.roster_id == theirs["roster_id"])).all()
    assert len(members) == 2


def test_a_lineup_changed_since_the_battle_is_refused(app: Any) -> None:
    service, table, battle_id = finished_duel(app)
    gm = client(app, table.slug, table.gm_token)
    lineup = [dict(e) for e in service.table(table_id=table.id).lineup]
    lineup[1]["id"] = "someone-else"
    assert ack(gm, "lineup_set", {"lineup": lineup})["ok"]
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "Late"})
    assert reply["ok"] is False and "lineup has changed" in reply["error"]


def test_on_postgresql_the_survivors_go_back_and_the_report_reads_the_battle(tmp_path: Any) -> None:
    """The same round trip on PostgreSQL (the command path there reads the table in its own way)."""
    from tests.conftest import make_app
    from tests.services.conftest import PG_ADMIN_URL, _pg_connect, create_database, drop_database, missing
    from webapp.report import build_report

    try:
        _pg_connect(PG_ADMIN_URL).close()
    except Exception as exc:  # noqa: BLE001
        missing(f"no PostgreSQL at {PG_ADMIN_URL}: {exc}")
    url = create_database(PG_ADMIN_URL)
    app = make_app(tmp_path, database_url=url)
    try:
        service = app.extensions["battleboard"].service
        table = service.create_table("On PostgreSQL", "adnd")
        gm = client(app, table.slug, table.gm_token)
        assert ack(gm, "lineup_set", {"lineup": cli.demo_lineup("adnd")})["ok"]
        saved = ack(gm, "roster_save", {"name": "Party"})
        battle_id = ack(gm, "battle_start", {})["battle_id"]
        assert ack(gm, "sync", {})["table"]["roster_id"] == saved["roster_id"]  # after a start, too
        fight(service, battle_id, "adnd", steps=80)
        if service.battle(battle_id).status != "ended":
            assert ack(gm, "battle_end", {"battle_id": battle_id})["ok"]
        end = service.battle(battle_id).state
        report = build_report(service, battle_id, gm=True)
        assert report["charts"] and report["dice"]["commitment"]
        reply = ack(gm, "survivors_save", {"battle_id": battle_id, "roster_id": saved["roster_id"]})
        assert reply["ok"], reply
        lineup = ack(gm, "sync", {})["table"]["lineup"]
        fresh = [dict(e, id=f"new{i}", name=f"Fresh {e['name']}"[:40]) for i, e in enumerate(cli.demo_lineup("adnd"))
                 if e["name"] in reply["left_out"]]
        assert ack(gm, "lineup_set", {"lineup": lineup + fresh})["ok"]
        restarted = ack(gm, "battle_start", {})
        assert restarted["ok"], restarted
        new = service.battle(restarted["battle_id"]).state["combatants"]
        by_name = {c["name"]: c for c in end["combatants"].values()}
        for c in new.values():
            if not c["name"].startswith("Fresh "):
                assert carried_values("adnd", c) == carried_values("adnd", by_name[c["name"]])
        gm.disconnect()
    finally:
        app.extensions["battleboard"].service.engine.dispose()
        drop_database(PG_ADMIN_URL, url)


def test_when_nobody_survived_nothing_is_written(app: Any) -> None:
    service = app.extensions["battleboard"].service
    table = service.create_table("Draw", "phantoms-bane")
    service.set_lineup(table.id, cli.demo_lineup("phantoms-bane"))
    battle_id = service.start_battle(table.id, seed="draw").battle_id
    service.end_battle(battle_id, Viewer.gm())
    with service.session() as s:  # both fell in the same turn
        from webapp.models import Battle

        battle = s.get(Battle, battle_id)
        state = dict(battle.state)
        state["combatants"] = {cid: {**c, "health": 0, "defeated": True} for cid, c in state["combatants"].items()}
        battle.state = state
        s.add(battle)
        s.commit()
    gm = client(app, table.slug, table.gm_token)
    reply = ack(gm, "survivors_save", {"battle_id": battle_id, "name": "Nobody"})
    assert reply["ok"] is False and reply["code"] == "illegal" and "nobody is left standing" in reply["error"]
    with service.session() as s:
        assert s.exec(select(Roster)).all() == []
