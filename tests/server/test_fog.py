"""Fog over the map: the GM's ``fog_set`` (bad payloads, wrong roles), what stands on a fogged square
kept out of every payload a player or the TV gets, line of sight clearing the fog round the players'
combatants (blocked squares stop it), and the fog stored on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rules import get_system
from rules.sight import seen_from
from tests.conftest import make_app
from tests.server import test_maps
from tests.server.test_maps import Board, _declare
from webapp.fog import change_fog, hide_fogged

pg_app = test_maps.pg_app  # a fresh PostgreSQL database for the test (a fixture)


def _lineup(seat: str) -> list[dict[str, Any]]:
    """Battles&Balances on its 12 × 8 grid: Alice's hero at (2, 3), the GM's foe at (9, 3)."""
    fields = {f.name: f.default for f in get_system("battles-and-balances").combatant_fields()}
    hero = {**fields, "name": "Hero", "side": "A", "x": 2, "y": 3, "size": 8, "speed": 4}
    foe = {**fields, "name": "Foe", "side": "B", "x": 9, "y": 3, "size": 8, "speed": 4}
    return [{**hero, "id": "hero", "controller": "seat", "seat": seat}, {**foe, "id": "foe", "controller": "gm", "seat": None}]


@pytest.fixture
def board(app: Any) -> Board:
    b = Board(app)
    b.service.set_lineup(b.table.id, _lineup(b.seat.public_id))
    return b


def _size(board: Board) -> tuple[int, int]:
    options = board.service.table(table_id=board.table.id).options
    return options["grid_width"], options["grid_height"]


def _fog(board: Board) -> list[list[int]]:
    return list((board.service.table(table_id=board.table.id).board or {}).get("fog") or [])


def _tables(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "table"]


def _combatant(view: dict[str, Any], cid: str) -> dict[str, Any]:
    listed = view["combatants"]
    entries = listed.values() if isinstance(listed, dict) else listed
    return next(c for c in entries if c["id"] == cid)


# --- painting -------------------------------------------------------------------------------------


def test_the_gm_fills_paints_erases_and_clears_a_room_and_every_viewer_gets_the_fog(board: Board) -> None:
    width, height = _size(board)
    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    for client in (gm, alice, spectator):
        client.get_received()
    ack = gm.emit("fog_set", {"all": True}, callback=True)
    assert ack["ok"], ack
    assert len(_fog(board)) == width * height
    for client in (gm, alice, spectator):
        tables = _tables(client)
        assert len(tables) == 1 and len(tables[0]["board"]["fog"]) == width * height
    # a room revealed with a drag (corners in any order), a square erased, one painted back
    assert gm.emit("fog_set", {"rect": {"x0": 3, "y0": 2, "x1": 0, "y1": 0, "fog": False}}, callback=True)["ok"]
    assert gm.emit("fog_set", {"remove": [[11, 7]], "add": [[0, 0]]}, callback=True)["ok"]
    fog = {tuple(sq) for sq in _fog(board)}
    room = {(x, y) for x in range(4) for y in range(3)}
    assert fog == ({(x, y) for x in range(width) for y in range(height)} - room - {(11, 7)}) | {(0, 0)}
    assert alice.emit("sync", {}, callback=True)["table"]["board"]["fog"] == _fog(board)
    # cleared in one tap
    assert gm.emit("fog_set", {"all": False}, callback=True)["ok"]
    assert _fog(board) == []


BAD = [
    ({}, "say what to change"),
    ({"colour": "grey"}, "unknown field"),
    ({"all": "yes"}, "true (fog the whole map) or false"),
    ({"add": [[12, 0]]}, "off the 12×8 grid"),
    ({"add": [[-1, 0]]}, "off the 12×8 grid"),
    ({"add": [[1.5, 0]]}, "pair [x, y] of whole numbers"),
    ({"add": [[True, 0]]}, "pair [x, y] of whole numbers"),
    ({"add": [[1, 2, 3]]}, "pair [x, y] of whole numbers"),
    ({"add": "everything"}, "list of [x, y] squares"),
    ({"add": [[0, 0]] * 3601}, "at most 3600 squares"),
    ({"remove": [[0, 99]]}, "off the 12×8 grid"),
    ({"rect": {"x0": 0, "y0": 0, "x1": 2}}, "rect is {x0, y0, x1, y1, fog}"),
    ({"rect": {"x0": 0, "y0": 0, "x1": 2, "y1": 2, "fog": 1}}, "fog must be true"),
    ({"rect": {"x0": 0, "y0": 0, "x1": 20, "y1": 2, "fog": True}}, "off the 12×8 grid"),
    ({"sight": 0}, "from 1 to 20"),
    ({"sight": 21}, "from 1 to 20"),
    ({"sight": "far"}, "from 1 to 20"),
    ({"add": [[0, 0]], "sight": -1}, "from 1 to 20"),  # one bad part: the good one is not applied either
]


@pytest.mark.parametrize(("payload", "words"), BAD)
def test_bad_fog_payloads_get_a_clear_error_and_change_nothing(board: Board, payload: dict[str, Any], words: str) -> None:
    gm = board.gm()
    assert gm.emit("fog_set", {"add": [[5, 5]], "sight": 3}, callback=True)["ok"]
    before = board.service.table(table_id=board.table.id).board
    gm.get_received()
    ack = gm.emit("fog_set", payload, callback=True)
    assert ack["ok"] is False and words in ack["error"], ack
    assert board.service.table(table_id=board.table.id).board == before
    assert _tables(gm) == []  # nothing was sent to anyone


def test_only_the_gm_paints_fog_and_only_on_a_grid_system(app: Any, board: Board) -> None:
    for client in (board.alice(), board.socket(None)):  # a player; the TV and spectators (a table display connects as one)
        for payload in ({"all": True}, {"add": [[0, 0]]}, {"sight": 2}):
            ack = client.emit("fog_set", payload, callback=True)
            assert ack["ok"] is False and ack["code"] == "forbidden", ack
    assert _fog(board) == []
    duel = Board(app, "phantoms-bane")
    ack = duel.gm().emit("fog_set", {"all": True}, callback=True)
    assert ack["ok"] is False and "no grid" in ack["error"]


def test_the_fog_survives_other_board_changes(board: Board) -> None:
    gm = board.gm()
    assert gm.emit("fog_set", {"add": [[5, 5]], "sight": 4}, callback=True)["ok"]
    assert gm.emit("board_set", {"blocked": [[6, 6]]}, callback=True)["ok"]
    stored = board.service.table(table_id=board.table.id).board
    assert stored["fog"] == [[5, 5]] and stored["sight"] == 4 and stored["blocked"] == [[6, 6]]
    assert gm.emit("fog_set", {"sight": None}, callback=True)["ok"]
    assert board.service.table(table_id=board.table.id).board["sight"] is None


# --- nothing on a fogged square reaches a player or the TV ------------------------------------------


def _frames_text(client: Any) -> str:
    return json.dumps(client.get_received())


def test_a_gm_combatant_on_fog_never_reaches_a_player_or_the_tv(board: Board) -> None:
    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    # fog over the right-hand half, where the foe stands; the hero stands in the open
    width, height = _size(board)
    assert gm.emit("fog_set", {"rect": {"x0": 6, "y0": 0, "x1": width - 1, "y1": height - 1, "fog": True}}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    for client, role in ((alice, "player"), (spectator, "spectator")):
        view = client.emit("sync", {}, callback=True)["battle"]["view"]
        foe = _combatant(view, "foe")
        assert foe["x"] is None and foe["y"] is None and foe["unseen"] is True, role
        hero = _combatant(view, "hero")
        assert (hero["x"], hero["y"]) == (2, 3)  # a player's own (and in the open) always shows
    gm_view = gm.emit("sync", {}, callback=True)["battle"]["view"]
    assert (_combatant(gm_view, "foe")["x"], _combatant(gm_view, "foe")["y"]) == (9, 3)
    # the GM moves the foe within the fog: the update and its event say nothing of where
    for client in (gm, alice, spectator):
        client.get_received()
    moved = _declare(gm, board, battle_id, {"type": "place", "combatant": "foe", "x": 8, "y": 6})
    assert moved["ok"], moved
    gm_frames = _frames_text(gm)
    assert "column 9, row 7" in gm_frames
    for client in (alice, spectator):
        frames = client.get_received()
        updates = [m["args"][0] for m in frames if m["name"] == "update"]
        assert updates, "the update still reaches them"
        for update in updates:
            foe = _combatant(update["view"], "foe")
            assert foe["x"] is None and foe["y"] is None
            assert all("column 9" not in ev["text"] and ev.get("data", {}).get("x") is None for ev in update["events"])
            assert any(ev["text"] == "Something stirs in the fog." for ev in update["events"])
        assert "column 9, row 7" not in json.dumps(frames)
    # the fog lifts over the foe: the players see it (their page syncs when the table's fog changes)
    assert gm.emit("fog_set", {"all": False}, callback=True)["ok"]
    view = alice.emit("sync", {"battle_id": battle_id, "since_v": 0}, callback=True)["battle"]["view"]
    assert (_combatant(view, "foe")["x"], _combatant(view, "foe")["y"]) == (8, 6)


def test_a_players_own_combatant_on_fog_still_shows_to_them() -> None:
    from rules import Viewer

    payload = {"view": {"combatants": {"pc": {"id": "pc", "x": 1, "y": 1}, "npc": {"id": "npc", "x": 2, "y": 1}}},
               "yours": ["pc"], "events": []}
    fog = frozenset({(1, 1), (2, 1)})
    mine = hide_fogged(payload, fog, Viewer.player("s1"))["view"]["combatants"]
    assert mine["pc"] == {"id": "pc", "x": 1, "y": 1} and mine["npc"]["x"] is None
    tv = hide_fogged(payload, fog, Viewer.spectator())["view"]["combatants"]
    assert tv["pc"]["x"] is None and tv["npc"]["x"] is None
    assert hide_fogged(payload, fog, Viewer.gm()) is payload


# --- line of sight ----------------------------------------------------------------------------------


def test_line_of_sight_by_hand() -> None:
    """Worked by hand on a 5 × 3 grid, seer at (0, 1), sight 4, one pillar at (2, 1).

    The squares behind the pillar straight along the row, (3, 1) and (4, 1), are hidden. The line to
    (3, 0) falls from y = 1 to y = 0: over the pillar's columns (x from 1.5 to 2.5) it runs from
    y = 0.5 down to 0.17, under the pillar's top edge (y = 0.5): seen. The line to (4, 0) runs there
    from y = 0.625 to 0.375, through the pillar: hidden; (4, 2) likewise. Everything else is within
    4½ squares and in the open."""
    seen = seen_from((0, 1), 4, frozenset({(2, 1)}), 5, 3)
    every = {(x, y) for x in range(5) for y in range(3)}
    assert every - seen == {(3, 1), (4, 1), (4, 0), (4, 2)}
    # a whole wall: nothing beyond it; the wall's own face is seen
    wall = frozenset({(2, 0), (2, 1), (2, 2)})
    assert seen_from((0, 1), 4, wall, 5, 3) == {(x, y) for x in range(3) for y in range(3)}
    # the range is a round patch: sight 2 from the centre of a 7 × 7 grid, corners of the 5 × 5 left out
    patch = seen_from((3, 3), 2, frozenset(), 7, 7)
    assert len(patch) == 21 and (1, 1) not in patch and (1, 2) in patch and (3, 1) in patch


def test_sight_clears_fog_round_a_players_combatant_as_it_moves_and_walls_stop_it(board: Board) -> None:
    gm, alice = board.gm(), board.alice()
    wall = [[5, y] for y in range(8)]
    assert gm.emit("board_set", {"blocked": wall}, callback=True)["ok"]
    assert gm.emit("fog_set", {"all": True}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    # sight switched on mid-battle clears at once round the hero at (2, 3)
    assert gm.emit("fog_set", {"sight": 2}, callback=True)["ok"]
    fog = {tuple(sq) for sq in _fog(board)}
    assert (2, 3) not in fog and (4, 3) not in fog and (2, 1) not in fog and (0, 1) in fog and (4, 5) in fog
    # the GM places the hero by the wall: the fog clears round its new square, but not past the wall
    alice.get_received()
    assert _declare(gm, board, battle_id, {"type": "place", "combatant": "hero", "x": 4, "y": 3})["ok"]
    fog = {tuple(sq) for sq in _fog(board)}
    assert (5, 3) not in fog  # the wall's face
    assert (6, 3) in fog and (6, 2) in fog  # behind it
    assert (4, 5) not in fog and (3, 1) not in fog
    # the players' pages hear of the new fog (their table again)
    tables = _tables(alice)
    assert tables and {tuple(sq) for sq in tables[-1]["board"]["fog"]} == fog
    # the cleared squares stay cleared: fog does not come back by itself (the GM paints it back)
    assert _declare(gm, board, battle_id, {"type": "place", "combatant": "hero", "x": 1, "y": 6})["ok"]
    assert (4, 5) not in {tuple(sq) for sq in _fog(board)}
    # with sight on, fog painted where a player's combatant sees clears at once (what it sees stays clear)
    assert gm.emit("fog_set", {"add": [[1, 5], [9, 0]]}, callback=True)["ok"]
    fog = {tuple(sq) for sq in _fog(board)}
    assert (1, 5) not in fog and (9, 0) in fog


def test_sight_off_clears_nothing(board: Board) -> None:
    gm = board.gm()
    assert gm.emit("fog_set", {"all": True}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    width, height = _size(board)
    assert _declare(gm, board, battle_id, {"type": "place", "combatant": "hero", "x": 4, "y": 3})["ok"]
    assert len(_fog(board)) == width * height


def test_change_fog_leaves_the_board_it_was_given() -> None:
    board = {"fog": [[0, 0]], "blocked": [[1, 1]]}
    new = change_fog(board, {"all": False}, 4, 4)
    assert board == {"fog": [[0, 0]], "blocked": [[1, 1]]} and new["fog"] == [] and new["blocked"] == [[1, 1]]


# --- stored on PostgreSQL, seen by another process ---------------------------------------------------


def test_on_postgresql_the_fog_is_stored_and_another_process_hides_what_stands_in_it(pg_app: Any, tmp_path: Path) -> None:
    board = Board(pg_app, "battles-and-balances")
    board.service.set_lineup(board.table.id, _lineup(board.seat.public_id))
    gm = board.gm()
    assert gm.emit("fog_set", {"rect": {"x0": 6, "y0": 0, "x1": 11, "y1": 7, "fog": True}, "sight": 3}, callback=True)["ok"]
    gm.emit("battle_start", {}, callback=True)
    url = pg_app.extensions["battleboard"].service.engine.url.render_as_string(hide_password=False)
    other = make_app(tmp_path / "other", database_url=url)
    try:
        from webapp.app import socketio

        alice = socketio.test_client(other, auth={"table": board.table.slug, "token": board.seat.token},
                                     flask_test_client=other.test_client())
        sync = alice.emit("sync", {}, callback=True)
        assert sync["table"]["board"]["sight"] == 3 and [9, 3] in sync["table"]["board"]["fog"]
        foe = _combatant(sync["battle"]["view"], "foe")
        assert foe["x"] is None and foe["unseen"] is True
    finally:
        other.extensions["battleboard"].service.engine.dispose()


def test_eclipse_phase_distances_to_or_from_a_combatant_in_the_fog_are_left_out(app: Any) -> None:
    """The distance from the active combatant to each other one would tell where an unseen one stands."""
    board = Board(app, "eclipse-phase")
    fields = {f.name: f.default for f in get_system("eclipse-phase").combatant_fields()}
    board.service.set_lineup(board.table.id, [
        {**fields, "id": "jinx", "name": "Jinx", "side": "A", "x": 2, "y": 3, "controller": "seat", "seat": board.seat.public_id},
        {**fields, "id": "guard", "name": "Guard", "side": "A", "x": 2, "y": 5, "controller": "gm", "seat": None},
        {**fields, "id": "stalker", "name": "Stalker", "side": "B", "x": 9, "y": 3, "controller": "gm", "seat": None},
    ])
    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    assert gm.emit("fog_set", {"rect": {"x0": 6, "y0": 0, "x1": 10, "y1": 7, "fog": True}}, callback=True)["ok"]
    assert gm.emit("battle_start", {}, callback=True)["ok"]
    gm_view = gm.emit("sync", {}, callback=True)["battle"]["view"]
    assert "stalker" in (gm_view["distances"] or {}).get("to", {}) or gm_view["distances"]["from"] == "stalker"
    for client in (alice, spectator):
        view = client.emit("sync", {}, callback=True)["battle"]["view"]
        distances = view.get("distances")
        if distances is not None:
            assert distances["from"] != "stalker" and "stalker" not in distances["to"]
        assert _combatant(view, "stalker")["x"] is None
        assert _combatant(view, "guard")["x"] == 2  # in the open


def test_when_the_fog_cannot_be_read_only_the_gm_is_sent_the_update(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database blip while the fog is read: the players and the TV get nothing rather than an
    update projected without the fog (their pages catch up at the heartbeat)."""
    import webapp.fog_events

    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    assert gm.emit("fog_set", {"rect": {"x0": 6, "y0": 0, "x1": 11, "y1": 7, "fog": True}}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    for client in (gm, alice, spectator):
        client.get_received()

    def broken(*_: Any) -> Any:
        raise RuntimeError("database away")

    monkeypatch.setattr(webapp.fog_events, "read_board", broken)
    assert _declare(gm, board, battle_id, {"type": "place", "combatant": "foe", "x": 8, "y": 6})["ok"]
    assert [m["name"] for m in gm.get_received() if m["name"] == "update"] == ["update"]
    for client in (alice, spectator):
        assert [m for m in client.get_received() if m["name"] == "update"] == []
    monkeypatch.undo()
    view = alice.emit("sync", {"battle_id": battle_id, "since_v": 0}, callback=True)["battle"]["view"]
    assert _combatant(view, "foe")["x"] is None


def _placed_anywhere(node: Any, cids: set[str]) -> list[Any]:
    """Every place in a payload that gives one of ``cids`` a square or a measure."""
    found: list[Any] = []
    if isinstance(node, dict):
        who = node.get("id", node.get("combatant"))
        if str(who) in cids and (isinstance(node.get("x"), int) or isinstance(node.get("y"), int)):
            found.append(node)
        for key, value in node.items():
            if str(key) in cids and isinstance(value, dict) and {"x", "y", "metres", "squares", "distance"} & set(value):
                found.append({key: value})
            if key == "from" and str(value) in cids and isinstance(node.get("to"), dict):
                found.append(node)
            found += _placed_anywhere(value, cids)
    elif isinstance(node, list):
        for value in node:
            found += _placed_anywhere(value, cids)
    return found


@pytest.mark.parametrize("system", ["eclipse-phase", "adnd", "battles-and-balances"])
def test_in_every_grid_system_nothing_places_a_combatant_in_the_fog_for_a_player_or_the_tv(app: Any, system: str) -> None:
    """The whole map fogged but the player's own square: no payload a player or the TV gets gives any
    other combatant a square or a distance, in the view or in the events, also after the GM moves one."""
    board = Board(app, system)
    presets = get_system(system).presets()
    fields = {f.name: f.default for f in get_system(system).combatant_fields()}
    lineup = [{**fields, **presets[i % len(presets)], "id": f"c{i}", "side": "AB"[i % 2], "controller": "gm", "seat": None} for i in range(3)]
    for entry, (x, y) in zip(lineup, ((2, 3), (6, 3), (6, 6)), strict=True):
        if "x" in fields:
            entry.update(x=x, y=y)
    lineup[0].update(controller="seat", seat=board.seat.public_id)
    board.service.set_lineup(board.table.id, lineup)
    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    state = board.service.battle(battle_id).state
    hero = state["combatants"]["c0"]
    assert gm.emit("fog_set", {"all": True, "remove": [[hero["x"], hero["y"]]]}, callback=True)["ok"]
    others = {"c1", "c2"}
    gm_sync = gm.emit("sync", {"battle_id": battle_id, "since_v": 0}, callback=True)["battle"]
    assert _placed_anywhere(gm_sync["view"], others), "the GM sees them all (and the search finds them)"
    for client in (alice, spectator):
        sync = client.emit("sync", {"battle_id": battle_id, "since_v": 0}, callback=True)["battle"]
        assert _placed_anywhere(sync["view"], others) == [] and _placed_anywhere(sync["events"], others) == [], client
    if system in ("adnd", "battles-and-balances"):  # the GM moves a foe within the fog
        other = state["combatants"]["c1"]
        to = {"x": other["x"], "y": other["y"] + 1} if other["y"] + 1 < _size_of(board)[1] else {"x": other["x"], "y": other["y"] - 1}
        kind = "move" if system == "adnd" else "place"
        for client in (gm, alice, spectator):
            client.get_received()
        moved = _declare(gm, board, battle_id, {"type": kind, "combatant": "c1", **to})
        assert moved["ok"], moved
        assert _placed_anywhere(gm.get_received(), others)
        for client in (alice, spectator):
            frames = client.get_received()
            assert any(m["name"] == "update" for m in frames)
            assert _placed_anywhere(frames, others) == []


def _size_of(board: Board) -> tuple[int, int]:
    options = board.service.table(table_id=board.table.id).options
    return options.get("width", options.get("grid_width")), options.get("height", options.get("grid_height"))
