"""Maps and tokens: uploads (and bad ones), serving by content hash, the board through ``board_set``, and
blocked squares enforced in a running battle of each grid system through the socket ``declare``."""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, PngImagePlugin

from rules import get_system
from tests.conftest import make_app
from webapp.app import socketio
from webapp.models import StoredImage, utcnow
from webapp.replay import replay_battle

WALL = [[4, y] for y in range(0, 8)]  # a wall from top to bottom of an 8-row grid: nobody passes


def png(width: int = 140, height: int = 70, mode: str = "RGB", **info: str) -> bytes:
    img = Image.new(mode, (width, height), "white" if mode != "1" else 1)
    meta = PngImagePlugin.PngInfo()
    for key, value in info.items():
        meta.add_text(key, value)
    out = io.BytesIO()
    img.save(out, "PNG", pnginfo=meta)
    return out.getvalue()


def jpeg_with_exif() -> bytes:
    img = Image.new("RGB", (80, 40), "red")
    exif = Image.Exif()
    exif[0x010F] = "SpyCam 3000"  # Make
    exif[0x8298] = "secret owner"  # Copyright
    out = io.BytesIO()
    img.save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


class Board:
    """A grid-system table, its GM's browser (cookie) and sockets."""

    def __init__(self, app: Any, system: str = "battles-and-balances") -> None:
        self.app = app
        self.service = app.extensions["battleboard"].service
        self.table = self.service.create_table("Map table", system)
        _, self.seat = self.service.join(self.table.join_code, "Alice")
        self.http = app.test_client()
        assert self.http.get(f"/t/{self.table.slug}/gm?key={self.table.gm_token}").status_code == 302

    def upload(self, data: bytes, content_type: str = "image/png", *, key: str | None = None,
               client: Any = None, headers: dict[str, str] | None = None) -> Any:
        client = client or self.http
        return client.post(f"/t/{self.table.slug}/images", data=data, content_type=content_type,
                           headers={"X-Battleboard-Key": self.table.gm_token if key is None else key, **(headers or {})})

    def socket(self, token: str | None) -> Any:
        client = socketio.test_client(self.app, auth={"table": self.table.slug, "token": token},
                                      flask_test_client=self.app.test_client())
        assert client.is_connected()
        return client

    def gm(self) -> Any:
        return self.socket(self.table.gm_token)

    def alice(self) -> Any:
        return self.socket(self.seat.token)

    def images(self) -> int:
        with self.service.session() as s:
            return len(s.exec(__import__("sqlmodel").select(StoredImage)).all())


@pytest.fixture
def board(app: Any) -> Board:
    return Board(app)


# --- uploads --------------------------------------------------------------------------------------


def test_the_gm_uploads_a_map_and_it_is_served_by_its_hash_with_long_cache_headers(board: Board) -> None:
    reply = board.upload(png(280, 140))
    assert reply.status_code == 200, reply.get_json()
    image = reply.get_json()["image"]
    assert (image["width"], image["height"], image["type"]) == (280, 140, "image/png")
    assert image["url"] == f"/img/{image['sha256']}.png"
    served = board.app.test_client().get(image["url"])  # anyone: the display and phones load it
    assert served.status_code == 200
    assert served.mimetype == "image/png"
    assert served.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert hashlib.sha256(served.data).hexdigest() == image["sha256"]
    assert Image.open(io.BytesIO(served.data)).size == (280, 140)
    again = board.app.test_client().get(image["url"], headers={"If-None-Match": f'"{image["sha256"]}"'})
    assert again.status_code == 304
    assert board.app.test_client().get(f"/img/{image['sha256']}.jpg").status_code == 404
    assert board.app.test_client().get("/img/not-a-hash.png").status_code == 404
    # the same pixels twice are one stored image
    assert board.upload(png(280, 140)).get_json()["image"]["sha256"] == image["sha256"]
    assert board.images() == 1


def test_metadata_is_stripped(board: Board) -> None:
    reply = board.upload(png(60, 30, Comment="GPS 51.5N 0.1W", Author="the GM"))
    data = board.app.test_client().get(reply.get_json()["image"]["url"]).data
    assert b"GPS" not in data and b"Author" not in data
    assert not Image.open(io.BytesIO(data)).info.get("Comment")
    reply = board.upload(jpeg_with_exif(), "image/jpeg")
    assert reply.status_code == 200
    data = board.app.test_client().get(reply.get_json()["image"]["url"]).data
    assert b"SpyCam" not in data and b"secret owner" not in data
    assert not Image.open(io.BytesIO(data)).getexif()


def _gif() -> bytes:
    out = io.BytesIO()
    Image.new("P", (20, 20)).save(out, "GIF")
    return out.getvalue()


def _bomb() -> bytes:
    """A tiny PNG file of 9000 × 9000 pixels (81 megapixels)."""
    out = io.BytesIO()
    Image.new("1", (9000, 9000)).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize(("name", "data", "ctype", "status", "words"), [
    ("wrong type", _gif(), "image/gif", 415, "PNG, JPEG or WebP"),
    ("forged type", png(), "image/jpeg", 415, "not the JPEG"),
    ("not an image", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/png", 415, "not a PNG"),
    ("gif called png", _gif(), "image/png", 415, "not a PNG"),
    ("truncated", png(400, 400, "RGB")[:-200], "image/png", 400, "truncated"),
    ("decompression bomb", _bomb(), "image/png", 413, "megapixels"),
    ("empty", b"", "image/png", 400, "empty"),
])
def test_bad_uploads_are_refused_clearly_and_store_nothing(board: Board, name: str, data: bytes, ctype: str,
                                                           status: int, words: str) -> None:
    reply = board.upload(data, ctype)
    assert reply.status_code == status, (name, reply.get_json())
    assert reply.get_json()["ok"] is False and words in reply.get_json()["error"]
    assert board.images() == 0


def test_a_truncated_jpeg_is_refused(board: Board) -> None:
    img = Image.effect_noise((300, 300), 60).convert("RGB")
    out = io.BytesIO()
    img.save(out, "JPEG")
    reply = board.upload(out.getvalue()[: len(out.getvalue()) // 2], "image/jpeg")
    assert reply.status_code == 400 and "truncated" in reply.get_json()["error"]
    assert board.images() == 0


def test_an_upload_over_ten_megabytes_gets_413(board: Board) -> None:
    reply = board.upload(b"\x89PNG" + os.urandom(10 * 1024 * 1024))
    assert reply.status_code == 413 and "10 MB" in reply.get_json()["error"]
    assert board.images() == 0


def test_only_the_gm_uploads_and_only_from_the_boards_pages(board: Board) -> None:
    stranger = board.app.test_client()  # no GM cookie, even with the key
    assert board.upload(png(), client=stranger).status_code == 403
    assert board.upload(png(), key="").status_code == 403  # the cookie alone (a cross-site form) is not enough
    assert board.upload(png(), key="x" * 40).status_code == 403
    assert board.upload(png(), headers={"Origin": "https://evil.example"}).status_code == 403
    # a player's browser
    player = board.app.test_client()
    player.get(f"/j/{board.table.join_code}")
    assert board.upload(png(), client=player, key=board.seat.token).status_code == 403
    # another table's GM
    other = Board(board.app)
    assert board.upload(png(), client=other.http, key=other.table.gm_token).status_code == 403
    assert board.images() == 0
    assert board.upload(png(), headers={"Origin": "http://localhost"}).status_code == 200
    assert board.app.test_client().post("/t/nope/images", data=b"x").status_code == 404


# --- the board: board_set ----------------------------------------------------------------------------


def _lineup(system: str, seat: str) -> list[dict[str, Any]]:
    """Two combatants, both played by Alice's seat, on either side of column 4."""
    fields = {f.name: f.default for f in get_system(system).combatant_fields()}
    if system == "eclipse-phase":
        a = {**fields, "name": "Jinx", "side": "A", "x": 2, "y": 3, "full_move": 20}
        b = {**fields, "name": "Exhuman", "side": "B", "x": 7, "y": 3, "full_move": 20}
    elif system == "battles-and-balances":
        a = {**fields, "name": "Hero", "side": "A", "x": 2, "y": 3, "size": 8, "speed": 4}
        b = {**fields, "name": "Foe", "side": "B", "x": 7, "y": 3, "size": 8, "speed": 4}
    else:
        a = {**fields, "name": "Fighter", "side": "A", "move": 12}
        b = {**fields, "name": "Orc", "side": "B", "move": 12}
    return [{**a, "id": "a", "controller": "seat", "seat": seat}, {**b, "id": "b", "controller": "seat", "seat": seat}]


def test_board_set_aligns_the_map_colours_tokens_and_reaches_every_viewer(board: Board) -> None:
    board.service.set_lineup(board.table.id, _lineup("battles-and-balances", board.seat.public_id))
    image = board.upload(png(700, 350)).get_json()["image"]
    portrait = board.upload(png(64, 64, "RGBA")).get_json()["image"]
    gm, alice, spectator = board.gm(), board.alice(), board.socket(None)
    reply = gm.emit("board_set", {"map": {"image": image["sha256"]}}, callback=True)
    assert reply["ok"], reply
    assert reply["board"]["map"] == {"url": image["url"], "width": 700, "height": 350, "squares_across": 10,
                                     "offset_x": 0, "offset_y": 0}
    reply = gm.emit("board_set", {"map": {"squares_across": 14, "offset_x": 12.5, "offset_y": -7},
                                  "tokens": {"a": {"colour": "#FF8800", "portrait": portrait["sha256"]}}},
                    callback=True)
    assert reply["ok"], reply
    for client in (gm, alice, spectator):
        tables = [m["args"][0] for m in client.get_received() if m["name"] == "table"]
        board_seen = tables[-1]["board"]
        assert board_seen["map"]["squares_across"] == 14
        assert (board_seen["map"]["offset_x"], board_seen["map"]["offset_y"]) == (12.5, -7)
        assert board_seen["tokens"]["a"] == {"colour": "#ff8800", "portrait": portrait["url"]}
    sync = spectator.emit("sync", {}, callback=True)
    assert sync["table"]["board"]["map"]["url"] == image["url"]
    # survives a restart: a new app on the same database file
    stored = board.service.table(table_id=board.table.id).board
    assert stored["map"]["image"] == image["sha256"] and stored["tokens"]["a"]["colour"] == "#ff8800"


@pytest.mark.parametrize(("payload", "words"), [
    ({}, "say what to change"),
    ({"walls": []}, "unknown field"),
    ({"map": "x"}, "map must be an object"),
    ({"map": {"image": "0" * 64}}, "no uploaded image"),
    ({"map": {"image": "../etc/passwd"}}, "sha256"),
    ({"map": {"squares_across": 10}}, "no map yet"),
    ({"tokens": {"zz": {"colour": "#ffffff"}}}, "no combatant"),
    ({"tokens": {"a": {"colour": "red"}}}, "#rrggbb"),
    ({"tokens": {"a": {"size": 3}}}, "colour"),
    ({"tokens": {"a": {"portrait": "f" * 64}}}, "no uploaded image"),
    ({"blocked": [[99, 0]]}, "off the"),
    ({"blocked": "all"}, "list"),
    ({"blocked": [[1]]}, "pair"),
])
def test_bad_board_set_payloads_change_nothing(board: Board, payload: dict[str, Any], words: str) -> None:
    board.service.set_lineup(board.table.id, _lineup("battles-and-balances", board.seat.public_id))
    gm = board.gm()
    before = board.service.table(table_id=board.table.id).board
    reply = gm.emit("board_set", payload, callback=True)
    assert reply["ok"] is False and words in reply["error"], reply
    assert board.service.table(table_id=board.table.id).board == before


def test_board_set_bad_alignment_values(board: Board) -> None:
    image = board.upload(png(200, 100)).get_json()["image"]
    gm = board.gm()
    assert gm.emit("board_set", {"map": {"image": image["sha256"]}}, callback=True)["ok"]
    for bad in ({"squares_across": 0}, {"squares_across": 1.5}, {"squares_across": True}, {"offset_x": 500},
                {"offset_y": "3"}, {"offset_x": None}):
        reply = gm.emit("board_set", {"map": bad}, callback=True)
        assert reply["ok"] is False, bad
    assert gm.emit("board_set", {"map": None}, callback=True)["board"]["map"] is None


def test_only_the_gm_sets_the_board_and_only_on_a_grid_system(app: Any, board: Board) -> None:
    for client in (board.alice(), board.socket(None)):
        reply = client.emit("board_set", {"blocked": [[1, 1]]}, callback=True)
        assert reply == {"ok": False, "error": "only the GM may board set", "code": "forbidden"}
    assert board.service.table(table_id=board.table.id).board is None
    duel = Board(app, "phantoms-bane")
    reply = duel.gm().emit("board_set", {"blocked": [[1, 1]]}, callback=True)
    assert reply["ok"] is False and "no grid" in reply["error"]


# --- blocked squares in a running battle, through the socket ---------------------------------------------


def _declare(client: Any, board: Board, battle_id: int, declaration: dict[str, Any]) -> dict[str, Any]:
    v = board.service.battle(battle_id).version
    return client.emit("declare", {"battle_id": battle_id, "expected_v": v, "declaration": declaration}, callback=True)


def _active(board: Board, battle_id: int) -> str:
    state = board.service.battle(battle_id).state
    return state.get("active") or state.get("actor")


@pytest.mark.parametrize("system", ["eclipse-phase", "battles-and-balances"])
def test_a_token_cannot_enter_or_cross_blocked_squares(app: Any, system: str) -> None:
    board = Board(app, system)
    board.service.set_lineup(board.table.id, _lineup(system, board.seat.public_id))
    gm, alice = board.gm(), board.alice()
    options = board.service.table(table_id=board.table.id).options
    height = options.get("height", options.get("grid_height"))
    wall = [[4, y] for y in range(height)]  # from top to bottom: nobody passes
    gap = [sq for sq in wall if sq != [4, 7]]
    assert gm.emit("board_set", {"blocked": wall}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    state = board.service.battle(battle_id).state
    assert state["blocked"] == wall
    sync = alice.emit("sync", {}, callback=True)
    assert sync["battle"]["view"]["blocked"] == wall
    who = _active(board, battle_id)
    x, y = state["combatants"][who]["x"], state["combatants"][who]["y"]
    side = -1 if x < 4 else 1
    into = _declare(alice, board, battle_id, {"type": "move", "combatant": who, "x": 4, "y": y})
    assert into["ok"] is False and "blocked" in into["error"]
    through = _declare(alice, board, battle_id, {"type": "move", "combatant": who, "x": 4 - side, "y": y})
    assert through["ok"] is False and "no way" in through["error"]
    # the GM opens a gap mid-battle: logged as a declaration, so undo takes it back
    before = board.service.battle(battle_id).version
    reply = gm.emit("board_set", {"blocked": gap}, callback=True)
    assert reply["ok"] and reply["v"] == before + 1
    assert board.service.battle(battle_id).state["blocked"] == gap
    assert gm.emit("undo", {"battle_id": battle_id}, callback=True)["ok"]
    assert board.service.battle(battle_id).state["blocked"] == wall
    assert gm.emit("board_set", {"blocked": gap}, callback=True)["v"] == before + 3  # after the undo (a version of its own)
    moved = _declare(alice, board, battle_id, {"type": "move", "combatant": who, "x": 4 - side, "y": y})
    assert moved["ok"], moved
    after = board.service.battle(battle_id).state["combatants"][who]
    assert (after["x"], after["y"]) == (4 - side, y)
    # a square under a token cannot be blocked: the rules refuse, nothing changes at the table either
    reply = gm.emit("board_set", {"blocked": [[4 - side, y]]}, callback=True)
    assert reply["ok"] is False and "stands on" in reply["error"]
    assert board.service.table(table_id=board.table.id).board["blocked"] == gap
    # the log replays: the blocked squares are declarations like any other
    report = replay_battle(board.service, battle_id)
    assert report.ok and report.replayed >= 3, report.mismatches


def test_adnd_a_token_cannot_enter_or_cross_blocked_squares(app: Any) -> None:
    board = Board(app, "adnd")
    board.service.set_lineup(board.table.id, _lineup("adnd", board.seat.public_id))
    gm, alice = board.gm(), board.alice()
    wall = [[x, 2] for x in range(0, 20)]  # across the room between the two parties (rows 1 and 3)
    assert gm.emit("board_set", {"blocked": wall}, callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    for kind in ("check_reaction", "check_surprise"):
        assert _declare(gm, board, battle_id, {"type": kind, "skip": True, "note": "known"})["ok"]
    assert _declare(gm, board, battle_id, {"type": "check_distance", "skip": True, "distance": 1})["ok"]
    assert _declare(gm, board, battle_id, {"type": "check_morale", "skip": True})["ok"]
    state = board.service.battle(battle_id).state
    assert state["blocked"] == wall
    fighter = state["combatants"]["a"]
    assert fighter["y"] == 1 and state["combatants"]["b"]["y"] == 3
    # the DM cannot set a token down on the wall
    reply = _declare(gm, board, battle_id, {"type": "move", "combatant": "a", "x": fighter["x"], "y": 2})
    assert reply["ok"] is False and "blocked" in reply["error"]
    assert _declare(gm, board, battle_id, {"type": "roll_order"})["ok"]
    # the player's declared move to the far side: no way through the wall
    reply = _declare(alice, board, battle_id, {"type": "declare", "combatant": "a", "kind": "move",
                                               "x": fighter["x"], "y": 4})
    assert reply["ok"] is False and "no way" in reply["error"], reply
    reply = _declare(alice, board, battle_id, {"type": "declare", "combatant": "a", "kind": "move",
                                               "x": fighter["x"], "y": 2})
    assert reply["ok"] is False and "blocked" in reply["error"]


# --- rosters carry token looks ---------------------------------------------------------------------------


def test_a_saved_roster_keeps_token_colours_and_portraits(board: Board) -> None:
    board.service.set_lineup(board.table.id, _lineup("battles-and-balances", board.seat.public_id))
    portrait = board.upload(png(32, 32)).get_json()["image"]
    gm = board.gm()
    assert gm.emit("board_set", {"tokens": {"b": {"colour": "#123456", "portrait": portrait["sha256"]}},
                                 "blocked": [[0, 0]]}, callback=True)["ok"]
    roster_id = gm.emit("roster_save", {"name": "Goons"}, callback=True)["roster_id"]
    assert gm.emit("board_set", {"tokens": {"b": None}}, callback=True)["board"]["tokens"] == {}
    reply = gm.emit("roster_load", {"roster_id": roster_id}, callback=True)
    assert reply["ok"]
    loaded = board.service.table(table_id=board.table.id)
    foe = next(e for e in loaded.lineup if e["name"] == "Foe")
    assert "_token" not in foe
    sync = gm.emit("sync", {}, callback=True)
    assert sync["table"]["board"]["tokens"][foe["id"]] == {"colour": "#123456", "portrait": portrait["url"]}
    assert sync["table"]["board"]["blocked"] == [[0, 0]]  # the table's own, untouched
    # appended a second time: the copies get new ids and keep their looks
    gm.emit("roster_load", {"roster_id": roster_id, "append": True}, callback=True)
    looks = gm.emit("sync", {}, callback=True)["table"]["board"]["tokens"]
    assert sum(1 for look in looks.values() if look["colour"] == "#123456") == 2


# --- uploads no board or roster uses are deleted ---------------------------------------------------------


def _age(board: Board, shas: list[str], days: float) -> None:
    """Make these uploads ``days`` old."""
    from sqlmodel import select

    with board.service.session() as s:
        for row in s.exec(select(StoredImage).where(StoredImage.sha256.in_(shas))).all():  # type: ignore[attr-defined]
            row.created_at = utcnow() - timedelta(days=days)
            s.add(row)
        s.commit()


def _stored(board: Board) -> set[str]:
    from sqlmodel import select

    with board.service.session() as s:
        return set(s.exec(select(StoredImage.sha256)).all())


def test_uploads_no_board_or_roster_uses_are_deleted_after_a_day(board: Board) -> None:
    board.service.set_lineup(board.table.id, _lineup("battles-and-balances", board.seat.public_id))
    on_map, in_roster, tried, fresh = (board.upload(png(40 + i, 40)).get_json()["image"]["sha256"] for i in range(4))
    gm = board.gm()
    assert gm.emit("board_set", {"map": {"image": on_map, "squares_across": 8}, "tokens": {"b": {"portrait": in_roster}}},
                   callback=True)["ok"]
    assert gm.emit("roster_save", {"name": "Goons"}, callback=True)["ok"]
    assert gm.emit("board_set", {"tokens": {"b": None}}, callback=True)["ok"]  # the portrait is the roster's alone now
    _age(board, [on_map, in_roster, tried], 2)
    # the map and the roster's portrait stay, the map tried and dropped goes, the one just uploaded waits
    assert board.service.prune_unused_images() == 1
    assert _stored(board) == {on_map, in_roster, fresh}
    assert board.http.get(f"/img/{tried}.png").status_code == 404
    assert board.http.get(f"/img/{on_map}.png").status_code == 200
    assert board.service.prune_unused_images() == 0
    # uploading the same pixels again makes an old upload new: it waits another day for its board
    _age(board, [fresh], 2)
    assert board.upload(png(43, 40)).get_json()["image"]["sha256"] == fresh
    assert board.service.prune_unused_images() == 0 and fresh in _stored(board)
    # a map taken off the board goes a day later, at the next upload (each upload prunes)
    assert gm.emit("board_set", {"map": None}, callback=True)["ok"]
    _age(board, [on_map, fresh], 2)
    newest = board.upload(png(20, 20)).get_json()["image"]["sha256"]
    assert _stored(board) == {in_roster, newest}


# --- PostgreSQL ---------------------------------------------------------------------------------------


@pytest.fixture
def pg_app(tmp_path: Path) -> Iterator[Any]:
    from tests.services.conftest import PG_ADMIN_URL, _pg_connect, create_database, drop_database, missing

    try:
        _pg_connect(PG_ADMIN_URL).close()
    except Exception as exc:  # noqa: BLE001
        missing(f"no PostgreSQL at {PG_ADMIN_URL}: {exc}")
    url = create_database(PG_ADMIN_URL)
    application = make_app(tmp_path, database_url=url)
    yield application
    application.extensions["battleboard"].service.engine.dispose()
    drop_database(PG_ADMIN_URL, url)


def test_on_postgresql_images_and_blocked_squares_work_across_a_restart(pg_app: Any, tmp_path: Path) -> None:
    board = Board(pg_app, "battles-and-balances")
    board.service.set_lineup(board.table.id, _lineup("battles-and-balances", board.seat.public_id))
    image = board.upload(jpeg_with_exif(), "image/jpeg").get_json()["image"]
    gm = board.gm()
    assert gm.emit("board_set", {"map": {"image": image["sha256"], "squares_across": 8}, "blocked": WALL},
                   callback=True)["ok"]
    battle_id = gm.emit("battle_start", {}, callback=True)["battle_id"]
    assert board.service.battle(battle_id).state["blocked"] == WALL
    # another app (another process) on the same database serves the image and knows the board
    url = pg_app.extensions["battleboard"].service.engine.url.render_as_string(hide_password=False)
    other = make_app(tmp_path / "other", database_url=url)
    try:
        served = other.test_client().get(image["url"])
        assert served.status_code == 200 and served.mimetype == "image/jpeg"
        assert hashlib.sha256(served.data).hexdigest() == image["sha256"]
        table = other.extensions["battleboard"].service.table(table_id=board.table.id)
        assert json.loads(json.dumps(table.board))["map"]["squares_across"] == 8
        # an old upload no board uses is deleted there too; the map stays
        unused = board.upload(png(30, 30)).get_json()["image"]["sha256"]
        _age(board, [image["sha256"], unused], 2)
        assert other.extensions["battleboard"].service.prune_unused_images() == 1
        assert _stored(board) == {image["sha256"]}
    finally:
        other.extensions["battleboard"].service.engine.dispose()
