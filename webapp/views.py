"""HTTP pages: the front page, table creation, joining, and the GM, player and spectator views."""

from __future__ import annotations

import io
import json
import secrets
from pathlib import Path
from typing import Any

import segno
from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    send_file,
    session,
    url_for,
)

from rules import RulesError, available_systems, get_system

from .broadcast import TableChanged
from .export import MAX_BYTES as IMPORT_MAX_BYTES
from .security import BODY_LIMITS, limits
from .service import NotFound
from .sockets import Hub
from .vendor import SERVED, SOCKETIO_CLIENT, VendorError, ensure_file, find_file

bp = Blueprint("board", __name__)
BODY_LIMITS["board.import_battle"] = IMPORT_MAX_BYTES + 64 * 1024  # an exported battle, and the form's own bytes

# media-src data:: NoSleep.js keeps a phone awake (no Wake Lock API on plain http) with a tiny silent
# video of its own, given as a data: address
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def _hub() -> Hub:
    hub: Hub = current_app.extensions["battleboard"]
    return hub


def _address() -> str:
    return request.remote_addr or "?"


@bp.after_app_request
def security_headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on the board's own
    # form posts, and the cross-site guard could no longer tell them from another site's
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("X-Frame-Options", "DENY")
    return response


def _remember(kind: str, slug: str, token: str) -> None:
    store = dict(session.get(kind) or {})
    store[slug] = token
    if len(store) > 20:
        store = dict(list(store.items())[-20:])
    session[kind] = store
    session.permanent = True


def _remembered(kind: str, slug: str) -> str | None:
    token = (session.get(kind) or {}).get(slug)
    return token if isinstance(token, str) else None


def base_url() -> str:
    """The address phones and the TV reach the board at (:meth:`webapp.sockets.Hub.public_base`)."""
    hub = _hub()
    hub.note_listening(request.environ)
    return hub.public_base()[0]


@bp.get("/")
def index() -> str:
    return render_template("index.html", systems=available_systems(), error=request.args.get("error", ""), my_tables=_gm_tables())


def _keep_library(table: Any) -> None:
    """The GM's browser keeps the roster library of the first table it made or opened as GM: the
    tables it makes later share that library (their GM sees the rosters saved at the others)."""
    if not isinstance(session.get("library"), str):
        session["library"] = table.library
        session.permanent = True


@bp.post("/tables")
def create_table() -> Any:
    if not limits().hit("tables", _address()):
        error = "Too many new tables from here: wait a minute and try again."
        return render_template("index.html", systems=available_systems(), error=error), 429
    try:
        table = _hub().service.create_table(request.form.get("name"), request.form.get("system"), library=session.get("library"))
    except RulesError as exc:
        return render_template("index.html", systems=available_systems(), error=str(exc)), 400
    _remember("gm", table.slug, table.gm_token)
    _keep_library(table)
    return redirect(url_for("board.gm_page", slug=table.slug))


def _held_seat(code: str) -> Any:
    """The player page of the table of a join code, if this phone already holds a seat there (a
    rescan of the QR code goes back to the seat), else None. Only a phone with a valid seat at that
    table is sent on: anyone else gets the same form whether the code is right or wrong."""
    seats = session.get("seats")
    if not code or not isinstance(seats, dict) or not seats:
        return None
    try:
        table = _hub().service.table_by_code(code[:12])
        token = _remembered("seats", table.slug)
        viewer, _seat = _hub().service.viewer_for(table, token) if token else (None, None)
    except RulesError:
        return None
    if viewer is None or viewer.role != "player":
        return None
    return redirect(url_for("board.player_page", slug=table.slug))


@bp.get("/join")
def join_form() -> Any:
    code = request.args.get("code", "")
    return _held_seat(code) or render_template("join.html", code=code[:12], error="")


@bp.get("/j/<code>")
def join_link(code: str) -> Any:
    return _held_seat(code) or render_template("join.html", code=code[:12], error="")


@bp.post("/join")
def join() -> Any:
    code = request.form.get("code", "")
    if not limits().allowed("join", _address()):  # wrong codes are counted, not players who join
        return render_template("join.html", code=code[:12], error="Too many attempts with a wrong code from here: wait a minute and try again."), 429
    hub = _hub()
    try:
        held = session.get("seats")
        table, seat = hub.service.join(code, request.form.get("name"), held if isinstance(held, dict) else None)
    except RulesError as exc:
        if isinstance(exc, NotFound):
            limits().hit("join", _address())
        return render_template("join.html", code=code[:12], error=str(exc)), 400
    _remember("seats", table.slug, seat.token)
    hub.seat_joined(table, seat)
    return redirect(url_for("board.player_page", slug=table.slug))


def _table_or_404(slug: str) -> Any:
    try:
        return _hub().service.table(slug=slug[:32])
    except RulesError:
        abort(404)


@bp.get("/t/<slug>/gm")
def gm_page(slug: str) -> Any:
    table = _table_or_404(slug)
    key = request.args.get("key")
    if key:
        if not secrets.compare_digest(key, table.gm_token):
            abort(403)
        if request.headers.get("Sec-Fetch-Site") in ("cross-site", "same-site"):
            # a link followed from another site's page: that page could be anyone's, and opening a GM
            # link changes this browser's session (its tables, its roster library), so ask first
            return render_template("gm_open.html", table=table, key=key)
        return _open_gm(table)
    token = _remembered("gm", table.slug)
    if token != table.gm_token:
        return render_template("error.html", message="This is the GM's screen. Open it with the GM link."), 403
    join_url = f"{base_url()}/j/{table.join_code}"
    gm_url = f"{base_url()}/t/{table.slug}/gm?key={table.gm_token}"
    return render_template(
        "board.html",
        role="gm",
        table=table,
        traits=get_system(table.system_id).traits,
        token=token,
        join_url=join_url,
        join_warning=_hub().public_base()[1],
        gm_url=gm_url,
        gm_qr=_qr_data_uri(gm_url),
        watch_url=f"{base_url()}/t/{table.slug}/watch",
        display_url=f"{base_url()}/t/{table.slug}/display",
    )


def _gm_table_or_403(slug: str) -> Any:
    table = _table_or_404(slug)
    token = _remembered("gm", table.slug)
    if not (isinstance(token, str) and secrets.compare_digest(token, table.gm_token)):
        abort(403)
    return table


@bp.post("/t/<slug>/join-code")
def rotate_join_code(slug: str) -> Any:
    """The GM's "New join code": the old code stops working, seated players keep their seats."""
    table = _gm_table_or_403(slug)
    hub = _hub()
    hub.service.rotate_join_code(table.id)
    hub.table_changed(TableChanged(table.id))
    return redirect(url_for("board.gm_page", slug=table.slug) + "#join")


@bp.post("/t/<slug>/gm-key")
def revoke_gm_key(slug: str) -> Any:
    """The GM's "Replace the GM link": a new key for this browser; every other console opened with
    the old one is told, and its connection closed."""
    table = _gm_table_or_403(slug)
    hub = _hub()
    table = hub.service.new_gm_key(table.id)
    _remember("gm", table.slug, table.gm_token)
    hub.gm_key_replaced(table)
    return redirect(url_for("board.gm_page", slug=table.slug) + "#join")


def _open_gm(table: Any) -> Any:
    _remember("gm", table.slug, table.gm_token)
    _keep_library(table)
    return redirect(url_for("board.gm_page", slug=table.slug))


@bp.post("/t/<slug>/gm")
def open_gm(slug: str) -> Any:
    """"Open the GM console here", confirmed on this board's own page (CSRF token checked)."""
    table = _table_or_404(slug)
    key = request.form.get("key", "")
    if not (isinstance(key, str) and secrets.compare_digest(key, table.gm_token)):
        abort(403)
    return _open_gm(table)


@bp.get("/t/<slug>/play")
def player_page(slug: str) -> Any:
    table = _table_or_404(slug)
    token = _remembered("seats", table.slug)
    try:
        viewer, _seat = _hub().service.viewer_for(table, token) if token else (None, None)
    except RulesError:
        viewer = None
    if viewer is None or viewer.role != "player":
        # no seat here, or one from an earlier database: join afresh
        seats = dict(session.get("seats") or {})
        seats.pop(table.slug, None)
        session["seats"] = seats
        return redirect(url_for("board.join_form"))
    return render_template("board.html", role="player", table=table, traits=get_system(table.system_id).traits,
                           token=token, join_url="", watch_url="")


@bp.get("/t/<slug>/")
def table_address(slug: str) -> Any:
    """A table's own address sends each viewer to its page: the GM's console (with the GM link's key,
    or in a browser that opened it), a seated player's phone page, anyone else the spectator page."""
    table = _table_or_404(slug)
    key = request.args.get("key")
    if key:  # the console checks it
        return redirect(url_for("board.gm_page", slug=table.slug, key=key[:100]))
    gm_token = _remembered("gm", table.slug)
    if gm_token and secrets.compare_digest(gm_token, table.gm_token):
        return redirect(url_for("board.gm_page", slug=table.slug))
    token = _remembered("seats", table.slug)
    try:
        viewer, _seat = _hub().service.viewer_for(table, token) if token else (None, None)
    except RulesError:
        viewer = None
    if viewer is not None and viewer.role == "player":
        return redirect(url_for("board.player_page", slug=table.slug))
    return redirect(url_for("board.spectator_page", slug=table.slug))


@bp.get("/t/<slug>/watch")
def spectator_page(slug: str) -> Any:
    """The spectator link: the table display laid out for whatever screen opens it (a phone too),
    with the system's full spectator board under it."""
    table = _table_or_404(slug)
    return render_template("display.html", table=table, mode="watch")


@bp.get("/t/<slug>/display")
def display_page(slug: str) -> Any:
    """The table display for the TV: public, with a spectator's rights (its page connects without a key)."""
    table = _table_or_404(slug)
    mode = "watch" if request.args.get("layout") == "watch" else "display"
    return render_template("display.html", table=table, mode=mode)


@bp.get("/t/<slug>/qr.svg")
def join_qr(slug: str) -> Response:
    """The join link as a QR code: for the GM always, for anyone else exactly while the table's
    payload shows them the join corner (no battle yet, or the GM switched it on for the TV)."""
    table = _table_or_404(slug)
    if _remembered("gm", table.slug) != table.gm_token and not _hub().join_open(table):
        abort(403)
    qr = segno.make(f"{base_url()}/j/{table.join_code}", error="m")
    buffer = io.BytesIO()
    qr.save(buffer, kind="svg", scale=6, border=2, dark="#111", light="#fff")
    response = Response(buffer.getvalue(), mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-store"  # public only while the corner shows
    return response


# --- pairing a TV: "Use this screen as a table display" (issue 19) -------------------------------
SCREEN_KEY = "screen"


def _screen_label() -> str:
    """A short name for a new screen from its browser's user agent ("TV", "Linux", ...)."""
    agent = request.headers.get("User-Agent", "")
    for needle, name in (
        ("SMART-TV", "TV"), ("SmartTV", "TV"), ("Tizen", "TV"), ("Web0S", "TV"), ("webOS", "TV"), ("CrKey", "Chromecast"),
        ("AFT", "Fire TV"), ("Android TV", "TV"), ("iPad", "iPad"), ("iPhone", "iPhone"), ("Android", "Android"),
        ("Windows", "Windows"), ("Macintosh", "Mac"), ("CrOS", "Chromebook"), ("Linux", "Linux"),
    ):
        if needle in agent:
            return name if name == "TV" else f"{name} screen"
    return "Screen"


def _my_screen() -> Any:
    return _hub().service.screen(session.get(SCREEN_KEY))


def _qr_data_uri(text: str) -> str:
    return segno.make(text, error="m").svg_data_uri(scale=8, border=2, dark="#111", light="#fff")


@bp.get("/screen")
def screen_page() -> Any:
    """A TV or laptop becomes a table display: it shows a pairing code (and a QR of the pairing
    link) until a GM pairs it, then the table's display, until the GM unpairs it."""
    from .service import PAIRING_CODE_LIFETIME, code_expired

    service = _hub().service
    screen = _my_screen()
    if screen is not None and screen.table_id is not None:
        table = service.table(table_id=screen.table_id)
        return redirect(url_for("board.screen_show", slug=table.slug))
    if screen is None or code_expired(screen):
        if not limits().hit("screens", _address()):
            message = "Too many new pairing codes from here: wait a minute and reload."
            return render_template("error.html", message=message), 429
        if screen is None:
            screen = service.new_screen(_screen_label())
            session[SCREEN_KEY] = screen.token
            session.permanent = True
        else:
            screen = service.renew_code(screen)
    code = screen.code or ""
    pair_url = f"{base_url()}/pair/{code}"
    lifetime = int(PAIRING_CODE_LIFETIME.total_seconds())
    return render_template(
        "screen.html", code=code, spaced=f"{code[:3]} {code[3:]}", pair_url=pair_url, qr=_qr_data_uri(pair_url), lifetime=lifetime
    )


@bp.get("/screen/t/<slug>")
def screen_show(slug: str) -> Any:
    """A paired screen's display: the table's display page, watched by screen.js, which takes the
    screen back to its pairing code once the GM unpairs it."""
    table = _table_or_404(slug)
    screen = _my_screen()
    if screen is None or screen.table_id != table.id:
        return redirect(url_for("board.screen_page"))
    page = _display_page(table.slug)
    if page is None:  # no table display page in this build: the spectator view
        return redirect(url_for("board.spectator_page", slug=table.slug))
    watcher = f'<script src="{url_for("static", filename="js/screen.js")}" defer data-state="paired" data-table="{table.slug}"></script>'
    html = page.replace("</head>", f"  {watcher}\n</head>", 1) if "</head>" in page else watcher + page
    return Response(html, mimetype="text/html")


def _display_page(slug: str) -> str | None:
    """The HTML of the table display page (``/t/<slug>/display``), as its own view makes it."""
    for rule in current_app.url_map.iter_rules():
        if rule.rule == "/t/<slug>/display":
            page = current_app.view_functions[rule.endpoint](slug=slug)
            if isinstance(page, Response):
                return page.get_data(as_text=True) if page.status_code == 200 else None
            return page if isinstance(page, str) else None
    return None


@bp.get("/screen/status")
def screen_status() -> dict[str, Any]:
    """What this screen should show now (screen.js asks every few seconds): ``waiting`` with its
    code, ``paired`` with the table's slug, or ``new`` (no screen, or its code expired)."""
    from .service import code_expired

    screen = _my_screen()
    if screen is None:
        return {"state": "new"}
    if screen.table_id is not None:
        return {"state": "paired", "table": _hub().service.table(table_id=screen.table_id).slug}
    if code_expired(screen):
        return {"state": "new"}
    return {"state": "waiting", "code": screen.code}


def _gm_tables() -> list[Any]:
    """The tables this browser holds the GM's key of, the newest first."""
    service = _hub().service
    tables = []
    for slug, token in reversed(list((session.get("gm") or {}).items())):  # the latest first
        try:
            table = service.table(slug=str(slug)[:32])
        except RulesError:
            continue
        if isinstance(token, str) and secrets.compare_digest(token, table.gm_token):
            tables.append(table)
    # the newest table first (the session cookie's JSON sorts its keys: the order they were opened in is lost)
    return sorted(tables, key=lambda table: table.id, reverse=True)


def _pair_form(code: str, *, error: str = "", status: int = 200, done: Any = None) -> Any:
    tables = _gm_tables()
    page = render_template("pair.html", code=code, tables=tables, error=error, done=done)
    return page, status


@bp.get("/pair")
@bp.get("/pair/<code>")
def pair_page(code: str = "") -> Any:
    """The GM's phone scanned a screen's QR (or typed its code): pair it with one of this browser's tables."""
    return _pair_form(code[:12].upper())


@bp.post("/pair")
@bp.post("/pair/<code>")
def pair_screen(code: str = "") -> Any:
    code = (request.form.get("code") or code)[:12]
    if not limits().allowed("pair", _address()):  # wrong codes are counted
        return _pair_form(code, error="Too many pairing attempts with a wrong code from here: wait a minute and try again.", status=429)
    table = next((t for t in _gm_tables() if t.slug == request.form.get("table")), None)
    if table is None:
        return _pair_form(code, error="Open your GM link in this browser first, then pair the screen.", status=403)
    hub = _hub()
    try:
        screen = hub.service.pair_screen(table.id, code)
    except RulesError as exc:
        limits().hit("pair", _address())
        return _pair_form(code, error=str(exc), status=400)
    hub.table_changed(TableChanged(table.id))
    return _pair_form("", done={"screen": screen, "table": table})


@bp.get("/vendor/socket.io.min.js")
def socketio_client() -> Any:
    return vendor_file(SOCKETIO_CLIENT.file_name)


@bp.get("/vendor/<name>")
def vendor_file(name: str) -> Any:
    """A browser library the board serves (``webapp/vendor.py``: pinned, checked, fetched once)."""
    wanted = SERVED.get(name)
    if wanted is None:
        abort(404)
    static_dir = Path(current_app.static_folder or "")
    instance_dir = Path(current_app.instance_path)
    path = find_file(wanted, static_dir, instance_dir)
    if path is None:
        try:
            path = ensure_file(wanted, static_dir, instance_dir)
        except VendorError as exc:
            return Response(f"/* {wanted.file_name} missing: {exc} */", status=503, mimetype="text/javascript")
    return send_file(path, mimetype="text/javascript", max_age=3600)


@bp.get("/t/<slug>/manifest.webmanifest")
def manifest(slug: str) -> Response:
    """The web app manifest of a player's page: added to the home screen, it opens this table's seat."""
    table = _table_or_404(slug)
    icons = [
        {"src": url_for("static", filename="icons/icon-192.png"), "sizes": "192x192", "type": "image/png"},
        {"src": url_for("static", filename="icons/icon-512.png"), "sizes": "512x512", "type": "image/png"},
        {"src": url_for("static", filename="icons/icon-maskable-512.png"), "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
        {"src": url_for("static", filename="favicon.svg"), "sizes": "any", "type": "image/svg+xml"},
    ]
    body = {
        "name": f"{table.name} — Battleboard",
        "short_name": "Battleboard",
        "description": "Your seat at the battle board: what you may do now, on your phone.",
        "start_url": url_for("board.player_page", slug=table.slug),
        "scope": "/",
        "display": "standalone",
        "orientation": "portrait",
        "background_color": "#14161c",
        "theme_color": "#14161c",
        "icons": icons,
    }
    response = current_app.response_class(json.dumps(body), mimetype="application/manifest+json")
    response.headers["Cache-Control"] = "no-cache"
    return response


# --- the replay page (issue 18 §3): webapp/replay_view.py has the data and who may see it ---------
def _replay_access(slug: str, battle_id: int) -> tuple[Any, Any]:
    from .replay_view import replay_access

    table = _table_or_404(slug)
    is_gm = _remembered("gm", table.slug) == table.gm_token
    return table, replay_access(_hub().service, table, battle_id, is_gm=is_gm)


@bp.get("/t/<slug>/battles/<int:battle_id>/replay")
def replay_page(slug: str, battle_id: int) -> Any:
    """A finished battle, step by step: for the GM always, for anyone once the GM shared it."""
    from .replay_view import ReplayRefused

    try:
        table, access = _replay_access(slug, battle_id)
    except ReplayRefused as exc:
        return render_template("error.html", message=str(exc)), exc.status
    verifier, export_url, report_url = _replay_extras(table.slug, battle_id)
    return render_template("replay.html", table=table, battle_id=battle_id, role=access.viewer.role, verifier=verifier,
                           export_url=export_url, report_url=report_url)


def _replay_extras(slug: str, battle_id: int) -> tuple[str | None, str | None, str | None]:
    """The standalone dice verifier served from static/, the battle's export download and its report,
    where this build has them (they belong to the committed-dice and report work)."""
    from .replay_view import VERIFIER_FILES

    static_dir = Path(current_app.static_folder or "")
    verifier = next((url_for("static", filename=name) for name in VERIFIER_FILES if (static_dir / name).is_file()), None)
    found: dict[str, str] = {}
    for rule in current_app.url_map.iter_rules():
        for kind in ("export", "report"):
            if kind not in found and kind in rule.rule and "GET" in (rule.methods or ()) and set(rule.arguments) == {"slug", "battle_id"}:
                found[kind] = url_for(rule.endpoint, slug=slug, battle_id=battle_id)
    return verifier, found.get("export"), found.get("report")


@bp.get("/t/<slug>/battles/<int:battle_id>/replay.json")
def replay_json(slug: str, battle_id: int) -> Any:
    from .replay_view import ReplayRefused, encode, replay_data

    try:
        table, access = _replay_access(slug, battle_id)
    except ReplayRefused as exc:
        return {"ok": False, "error": str(exc)}, exc.status
    seat_names = {s.public_id: s.name for s in _hub().service.seats(table.id)}
    data = {"ok": True, **replay_data(_hub().service, table, access, seat_names)}
    body, encoding = encode(data, request.headers.get("Accept-Encoding", ""))
    response = current_app.response_class(body, mimetype="application/json")
    if encoding:
        response.headers["Content-Encoding"] = encoding
        response.headers["Vary"] = "Accept-Encoding"
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.get("/t/<slug>/battles/<int:battle_id>/replay/link")
def replay_link(slug: str, battle_id: int) -> Any:
    """Whether this browser may open the battle's replay, and its address (with a QR code for the
    table display: phones at the table scan it)."""
    from .replay_view import ReplayRefused, is_shareable

    try:
        table, access = _replay_access(slug, battle_id)
    except ReplayRefused as exc:
        return {"available": False, "reason": str(exc)}
    url = f"{base_url()}{url_for('board.replay_page', slug=table.slug, battle_id=battle_id)}"
    public = access.viewer.role != "gm" or is_shareable(access.battle)
    return {"available": True, "public": public, "url": url, "qr": _qr_data_uri(url) if public else None}


# --- battle reports (issue 18) ------------------------------------------------------------------
@bp.get("/t/<slug>/battles/<int:battle_id>/report")
def battle_report(slug: str, battle_id: int) -> Any:
    """The printable report of a finished battle: the GM's (everything) on the GM's browser, else the
    public one, only for a battle the GM marked shareable. ``?format=md`` gives it as Markdown."""
    from .report import build_report, render_html, render_markdown

    table = _table_or_404(slug)
    gm = _remembered("gm", table.slug) == table.gm_token
    try:
        battle = _hub().service.battle(battle_id)
        if battle.table_id != table.id:
            abort(404)
        report = build_report(_hub().service, battle_id, gm=gm)
    except RulesError as exc:
        return render_template("error.html", message=str(exc)), 404
    if request.args.get("format") == "md":
        return Response(render_markdown(report), mimetype="text/markdown; charset=utf-8")
    response = Response(render_html(report), mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


# --- provable dice: a battle's export, and importing one (issue 18, H7) ---------------------------
@bp.get("/t/<slug>/battles/<int:battle_id>/export.json")
def battle_export(slug: str, battle_id: int) -> Any:
    """A battle as one JSON document: for the GM at any time (the seed only after the end), for anyone
    else once the battle has ended and the GM marked it shareable (the public copy: no GM secret)."""
    from .export import export_json

    table = _table_or_404(slug)
    gm = _remembered("gm", table.slug) == table.gm_token
    try:
        battle = _hub().service.battle(battle_id)
    except RulesError:
        abort(404)
    if battle.table_id != table.id:
        abort(404)
    if not gm and not (battle.status == "ended" and battle.shareable):
        return {"ok": False, "error": "only the GM may download this battle (until it has ended and the GM shares it)"}, 403
    response = Response(export_json(_hub().service, battle_id, public=not gm), mimetype="application/json")
    response.headers["Content-Disposition"] = f'attachment; filename="battle-{table.slug}-{battle_id}.json"'
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.post("/import")
def import_battle() -> Any:
    """Upload an exported, finished battle: it is verified, then becomes the battle of a new table
    whose GM is this browser (at most 20 MB; a file that fails changes nothing)."""
    from werkzeug.exceptions import RequestEntityTooLarge

    from .export import MAX_BYTES, import_document, load_document

    if not limits().hit("tables", _address()):
        error = "Too many new tables from here: wait a minute and try again."
        return render_template("index.html", systems=available_systems(), error=error), 429
    try:
        upload = request.files.get("battle")
    except RequestEntityTooLarge:
        return render_template("index.html", systems=available_systems(), error="That file is too large (at most 20 MB)."), 413
    if upload is None:
        return render_template("index.html", systems=available_systems(), error="Choose an exported battle file to import."), 400
    raw = upload.stream.read(MAX_BYTES + 1)
    try:
        table, battle_id = import_document(_hub().service, load_document(raw), library=session.get("library"))
    except RulesError as exc:
        return render_template("index.html", systems=available_systems(), error=f"Not imported: {exc}"), 413 if "too large" in str(exc) else 400
    _remember("gm", table.slug, table.gm_token)
    _keep_library(table)
    return redirect(url_for("board.replay_page", slug=table.slug, battle_id=battle_id))


@bp.get("/healthz")
def health() -> Any:
    """200 ``{"ok": true}`` only when the database answers a real read; else 503 with the reason."""
    try:
        _hub().service.check_database()
    except Exception as exc:  # noqa: BLE001 -- any failure to read is the answer
        reason = getattr(exc, "orig", None) or exc
        return {"ok": False, "error": f"the database cannot be read: {str(reason).splitlines()[0][:200]}"}, 503
    return {"ok": True}
