"""The replay page's data (/t/<slug>/battles/<id>/replay.json) and who may open it.

A Phantom's Bane duel against the computer is played through Socket.IO test clients (the GM and a
seat); its replay is then read over HTTP as the public and as the GM. The public replay is exactly a
spectator's projection of every stored snapshot with only public events: no hidden event (the
computer's secret choice), no GM-only value. The GM's replay has every event, the computer's choice
included. A running battle and a battle the GM has not shared refuse the public.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from sqlmodel import col, select

from rules import Viewer, available_systems, engine, get_system
from rules.core import may_see
from tests.conftest import Table, duel_lineup
from tests.server import test_leaks as leaks
from webapp import replay_view
from webapp.models import Battle, BattleEvent, BattleSnapshot
from webapp.sockets import EVENT_HANDLERS

SEED = "replay-page-seed-4b1e"


def gm_browser(duel: Table) -> Any:
    """A browser holding the GM's session cookie (opened the GM link)."""
    browser = duel.app.test_client()
    assert browser.get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}").status_code == 302
    return browser


def play_duel(duel: Table, *, undo: bool = True, end: bool = True) -> None:
    """Jharek (Alice's seat) against the computer's monster, to the end (or the GM ends it)."""
    alice = duel.alice()
    gm = duel.gm()
    options = ["attack", "press", "defend", "attack", "press"]
    for turn in range(30):
        if duel.state["status"] != "active":
            break
        reply = alice.emit("declare", {"battle_id": duel.battle_id, "expected_v": duel.version,
                                       "declaration": {"type": "choose", "combatant": "jharek", "option": options[turn % len(options)]}}, callback=True)
        assert reply["ok"], reply
        if undo and turn == 1:
            assert gm.emit("undo", {"battle_id": duel.battle_id, "expected_v": duel.version}, callback=True)["ok"]
    if end and duel.state["status"] != "ended":
        assert gm.emit("battle_end", {"battle_id": duel.battle_id, "expected_v": duel.version}, callback=True)["ok"]


def share(duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mark the battle shareable: through the GM's ``battle_share`` event where this build has it."""
    if "battle_share" in EVENT_HANDLERS:
        reply = duel.gm().emit("battle_share", {"battle_id": duel.battle_id, "shareable": True}, callback=True)
        assert reply["ok"], reply
    else:
        monkeypatch.setattr(replay_view, "is_shareable", lambda battle: True)


@pytest.fixture
def computer_duel(app: Any) -> Table:
    duel = Table(app, start=False, foe_controller="computer")
    # both tough enough for a few turns (and an undo) before one falls
    lineup = duel_lineup(a={"controller": "seat", "seat": duel.seat_a.public_id, "health": 16}, b={"controller": "computer", "health": 14})
    duel.service.set_lineup(duel.table.id, lineup)
    duel.battle_id = duel.service.start_battle(duel.table.id, seed=SEED).battle_id
    return duel


def stored(duel: Table) -> tuple[dict[int, dict[str, Any]], list[BattleEvent]]:
    with duel.service.session() as s:
        snaps = {snap.version: snap.state for snap in s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == duel.battle_id))}
        events = list(s.exec(select(BattleEvent).where(BattleEvent.battle_id == duel.battle_id).order_by(col(BattleEvent.version), col(BattleEvent.index))))
    return snaps, events


def as_replayed(view: dict[str, Any]) -> Any:
    """A view as the replay carries it: JSON, without the menus of legal declarations."""
    return json.loads(json.dumps({k: v for k, v in view.items() if k != "legal"}))


def url(duel: Table, suffix: str = ".json") -> str:
    return f"/t/{duel.table.slug}/battles/{duel.battle_id}/replay{suffix}"


def test_a_running_battle_refuses_the_public_and_waits_for_the_gm(computer_duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    duel = computer_duel
    play_duel(duel, undo=False, end=False)
    if duel.state["status"] == "ended":  # the duel ended by itself: start a fresh one, left running
        duel.battle_id = duel.service.start_battle(duel.table.id, seed=SEED + "-2").battle_id
    share(duel, monkeypatch)
    public = duel.app.test_client()
    for suffix in (".json", ""):
        reply = public.get(url(duel, suffix))
        assert reply.status_code == 403
        assert "still running" in reply.get_data(as_text=True)
    assert public.get(url(duel, "/link")).get_json() == {"available": False, "reason": "This battle is still running: its replay opens when it has ended."}
    reply = gm_browser(duel).get(url(duel))
    assert reply.status_code == 409 and reply.get_json()["ok"] is False
    assert "The computer picks" not in reply.get_data(as_text=True)


def test_a_battle_not_shared_refuses_the_public(computer_duel: Table) -> None:
    duel = computer_duel
    play_duel(duel)
    assert not replay_view.is_shareable(duel.service.battle(duel.battle_id))
    public = duel.app.test_client()
    for suffix in (".json", ""):
        reply = public.get(url(duel, suffix))
        assert reply.status_code == 403
        assert "has not shared" in reply.get_data(as_text=True)
        assert "The computer picks" not in reply.get_data(as_text=True)
    assert public.get(url(duel, "/link")).get_json()["available"] is False
    # the GM's browser opens it all the same, and the page says so
    gm = gm_browser(duel)
    assert gm.get(url(duel)).status_code == 200
    page = gm.get(url(duel, ""))
    assert page.status_code == 200 and 'data-role="gm"' in page.get_data(as_text=True)
    link = gm.get(url(duel, "/link")).get_json()
    assert link["available"] is True and link["public"] is False and link["qr"] is None


def test_the_public_replay_is_the_spectators_projection_of_every_version(computer_duel: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    duel = computer_duel
    play_duel(duel)
    share(duel, monkeypatch)
    reply = duel.app.test_client().get(url(duel))
    assert reply.status_code == 200
    assert reply.headers["Cache-Control"] == "private, no-store"
    body = reply.get_json()
    assert body["ok"] and body["role"] == "spectator" and body["status"] == "ended"
    snaps, events = stored(duel)
    system = get_system("phantoms-bane")
    spectator = Viewer.spectator()
    assert [step["v"] for step in body["steps"]] == sorted(snaps)
    for step in body["steps"]:
        state = snaps[step["v"]]
        assert step["view"] == as_replayed(engine.project(system, state, spectator))
        expected = [
            {"v": e.version, "i": e.index, **e.payload} for e in events if e.version == step["v"] and may_see(e.visibility, spectator, state)
        ]
        assert step["events"] == expected
    text = reply.get_data(as_text=True)
    # no hidden event and no GM-only value: the computer's secret choice and its reasons, the seed
    hidden = [e for e in events if e.visibility != "public"]
    assert any(e.visibility == "hidden" for e in hidden), "the computer's choice is in the log as hidden"
    public_texts = {e.payload.get("text") for e in events if e.visibility == "public"}
    for e in hidden:
        if e.payload.get("text") not in public_texts:
            assert e.payload["text"] not in text
    assert "The computer picks" not in text and '"scores"' not in text and '"visibility"' not in text
    # the seed: revealed by the battle's end (its last step and the dice record), in no step before
    assert all(SEED not in json.dumps(step) for step in body["steps"][:-1])
    assert body["dice"]["seed"] in (SEED, None) and body["dice"]["commitment"] and body["dice"]["commitment"] != SEED
    assert duel.table.gm_token not in text and duel.table.join_code not in text
    assert duel.seat_a.token not in text
    # and the link for the table display carries a QR code of the public page
    link = duel.app.test_client().get(url(duel, "/link")).get_json()
    assert link["available"] and link["public"] and link["url"].endswith(url(duel, "")) and link["qr"].startswith("data:image/svg+xml")


def test_the_gm_replay_shows_the_computers_hidden_choices_and_marks_undone_steps(computer_duel: Table) -> None:
    duel = computer_duel
    play_duel(duel, undo=True)
    body = gm_browser(duel).get(url(duel)).get_json()
    assert body["ok"] and body["role"] == "gm"
    snaps, events = stored(duel)
    all_events = [e for step in body["steps"] for e in step["events"]]
    assert len(all_events) == len(events), "the GM's replay has every event of the log"
    picks = [e for e in all_events if e["visibility"] == "hidden"]
    assert picks and all(e["text"].startswith("The computer picks") and e["data"]["option"] for e in picks)
    system = get_system("phantoms-bane")
    for step in body["steps"]:
        assert step["view"] == as_replayed(engine.project(system, snaps[step["v"]], Viewer.gm()))
    # the undo: a step of its own; the steps it took back are marked undone
    undo_steps = [s for s in body["steps"] if s["kind"] == "undo"]
    assert len(undo_steps) == 1
    undo = undo_steps[0]
    taken = next(e for e in undo["events"] if e["type"] == "battle.undone")["data"]["step"]
    undone = [s["v"] for s in body["steps"] if s["undone"]]
    assert undone == [taken] == [undo["v"] - 1], "one step taken back: the command just before the undo"
    assert body["steps"][0]["kind"] == "start" and not body["steps"][-1]["undone"] and body["steps"][-1]["status"] == "ended"


def test_a_battle_of_another_table_is_not_found(app: Any, computer_duel: Table) -> None:
    duel = computer_duel
    play_duel(duel, undo=False)
    other = Table(app)
    gm = other.app.test_client()
    assert gm.get(f"/t/{other.table.slug}/gm?key={other.table.gm_token}").status_code == 302
    assert gm.get(f"/t/{other.table.slug}/battles/{duel.battle_id}/replay.json").status_code == 404
    assert gm.get(f"/t/{other.table.slug}/battles/999999/replay.json").status_code == 404
    assert gm.get(f"/t/nosuchtable/battles/{duel.battle_id}/replay.json").status_code == 404


def test_the_replay_page_keeps_the_strict_csp(computer_duel: Table) -> None:
    duel = computer_duel
    play_duel(duel, undo=False)
    page = gm_browser(duel).get(url(duel, ""))
    html = page.get_data(as_text=True)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "<script>" not in html and "style=" not in html and "<style" not in html
    assert 'src="/static/js/replay.js"' in html


def test_socket_clients_still_work_after_a_replay_read(computer_duel: Table) -> None:
    """Reading a replay changes nothing: the battle's version and log stay as they were."""
    duel = computer_duel
    play_duel(duel, undo=False)
    before = (duel.version, len(stored(duel)[1]))
    gm_browser(duel).get(url(duel))
    assert (duel.version, len(stored(duel)[1])) == before


# --- every system: the public replay is the spectator's, the GM's has every event ---------------
@pytest.mark.parametrize("system_id", [system.id for system in available_systems()])
def test_every_systems_replay_keeps_hidden_events_from_the_public(app: Any, system_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    table, battle_id, accepted = leaks.play_seated_battle(service, system_id, "Replay of every system", f"{SEED}-{system_id}", 14)
    assert accepted >= 1
    if service.battle(battle_id).status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    duel = type("T", (), {"table": table, "battle_id": battle_id})()
    if hasattr(Battle, "shareable"):
        service.set_shareable(battle_id, table.id, True)
    else:
        monkeypatch.setattr(replay_view, "is_shareable", lambda battle: True)
    public = app.test_client().get(url(duel))
    assert public.status_code == 200, public.get_data(as_text=True)
    body = public.get_json()
    text = public.get_data(as_text=True)
    with service.session() as s:
        snaps = {snap.version: snap.state for snap in s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle_id))}
        log = list(s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id)))
    spectator = Viewer.spectator()
    for step in body["steps"]:
        assert step["view"] == as_replayed(engine.project(system, snaps[step["v"]], spectator))
    public_texts = {e.payload.get("text") for e in log if may_see(e.visibility, spectator, snaps[e.version])}
    for e in log:
        if not may_see(e.visibility, spectator, snaps[e.version]) and e.payload.get("text") not in public_texts:
            assert json.dumps(e.payload["text"])[1:-1] not in text, (system_id, e.visibility, e.payload["text"])
    assert all("visibility" not in e for step in body["steps"] for e in step["events"])
    # the GM's replay: every event of the log
    gm = app.test_client()
    assert gm.get(f"/t/{table.slug}/gm?key={table.gm_token}").status_code == 302
    gm_body = gm.get(url(duel)).get_json()
    assert sum(len(step["events"]) for step in gm_body["steps"]) == len(log)


def test_the_replay_is_gzipped_for_a_browser_that_takes_it(computer_duel: Table) -> None:
    duel = computer_duel
    play_duel(duel, undo=False)
    gm = gm_browser(duel)
    plain = gm.get(url(duel))
    zipped = gm.get(url(duel), headers={"Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain.headers
    assert json.loads(gzip.decompress(zipped.data)) == plain.get_json()
    assert len(zipped.data) * 3 < len(plain.data)


def test_an_imported_battle_replays_as_the_original(app: Any, tmp_path: Any, computer_duel: Table) -> None:
    """Export, import on another board, replay there: the same steps, views and events."""
    from tests.conftest import make_app
    from webapp.export import export_json, import_document, load_document

    duel = computer_duel
    play_duel(duel, undo=True)
    original = gm_browser(duel).get(url(duel)).get_json()
    other = make_app(tmp_path / "other")
    try:
        service = other.extensions["battleboard"].service
        table, battle_id = import_document(service, load_document(export_json(duel.service, duel.battle_id)))
        browser = other.test_client()
        assert browser.get(f"/t/{table.slug}/gm?key={table.gm_token}").status_code == 302
        imported = browser.get(f"/t/{table.slug}/battles/{battle_id}/replay.json").get_json()
        assert imported["ok"] and [s["v"] for s in imported["steps"]] == [s["v"] for s in original["steps"]]
        for mine, theirs in zip(imported["steps"], original["steps"], strict=True):
            assert (mine["view"], mine["events"], mine["undone"], mine["kind"]) == (theirs["view"], theirs["events"], theirs["undone"], theirs["kind"])
        assert imported["dice"] == original["dice"]
        # an imported battle is not shared until its new GM says so
        assert other.test_client().get(f"/t/{table.slug}/battles/{battle_id}/replay.json").status_code == 403
    finally:
        other.extensions["battleboard"].service.engine.dispose()
