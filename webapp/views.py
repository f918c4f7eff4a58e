"""HTTP pages: the front page, table creation, joining, and the GM, player and spectator views."""

from __future__ import annotations

import io
import secrets
import threading
import time
from collections import deque
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

from rules import RulesError, available_systems

from .vendor import VendorError, ensure_client, find_client

bp = Blueprint("board", __name__)

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class RateLimiter:
    """At most ``limit`` attempts per ``window`` seconds per key (the client's address)."""

    def __init__(self, limit: int, window: float = 60.0) -> None:
        self.limit = limit
        self.window = window
        self._hits: dict[str, deque[float]] = {}
        self._guard = threading.Lock()
        self._forgot_at = time.monotonic()

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        with self._guard:
            # with many addresses, forget those quiet for a window (at most once a window: a flood
            # from many addresses must not make every attempt walk them all)
            if len(self._hits) > 10_000 and now - self._forgot_at >= self.window:
                self._hits = {k: hits for k, hits in self._hits.items() if hits and now - hits[-1] <= self.window}
                self._forgot_at = now
            hits = self._hits.setdefault(key, deque())
            while hits and now - hits[0] > self.window:
                hits.popleft()
            if len(hits) >= self.limit:
                return False
            hits.append(now)
            return True


def _hub() -> Any:
    return current_app.extensions["battleboard"]


def _limiter(kind: str = "join") -> RateLimiter:
    """The rate limit of join attempts (join codes cannot be guessed quickly) or of new tables (a
    script cannot fill the database with them), per client address."""
    ext = current_app.extensions
    name = f"battleboard_{kind}_limiter"
    if name not in ext:
        config = current_app.config["BATTLEBOARD"]
        ext[name] = RateLimiter(config.join_attempts_per_minute if kind == "join" else config.tables_per_minute)
    return ext[name]


@bp.after_app_request
def security_headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
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
    public = current_app.config["BATTLEBOARD"].public_url
    return (public or request.host_url).rstrip("/")


@bp.get("/")
def index() -> str:
    return render_template("index.html", systems=available_systems(), error=request.args.get("error", ""))


def _keep_library(table: Any) -> None:
    """The GM's browser keeps the roster library of the first table it made or opened as GM: the
    tables it makes later share that library (their GM sees the rosters saved at the others)."""
    if not isinstance(session.get("library"), str):
        session["library"] = table.library
        session.permanent = True


@bp.post("/tables")
def create_table() -> Any:
    if not _limiter("tables").allow(request.remote_addr or "?"):
        error = "Too many new tables from here: wait a minute and try again."
        return render_template("index.html", systems=available_systems(), error=error), 429
    try:
        table = _hub().service.create_table(request.form.get("name"), request.form.get("system"), library=session.get("library"))
    except RulesError as exc:
        return render_template("index.html", systems=available_systems(), error=str(exc)), 400
    _remember("gm", table.slug, table.gm_token)
    _keep_library(table)
    return redirect(url_for("board.gm_page", slug=table.slug))


@bp.get("/join")
def join_form() -> str:
    return render_template("join.html", code=request.args.get("code", ""), error="")


@bp.get("/j/<code>")
def join_link(code: str) -> str:
    return render_template("join.html", code=code[:12], error="")


@bp.post("/join")
def join() -> Any:
    code = request.form.get("code", "")
    if not _limiter().allow(request.remote_addr or "?"):
        return render_template("join.html", code=code[:12], error="Too many attempts: wait a minute and try again."), 429
    hub = _hub()
    try:
        table, seat = hub.service.join(code, request.form.get("name"))
    except RulesError as exc:
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
        if secrets.compare_digest(key, table.gm_token):
            _remember("gm", table.slug, table.gm_token)
            _keep_library(table)
            return redirect(url_for("board.gm_page", slug=table.slug))
        abort(403)
    token = _remembered("gm", table.slug)
    if token != table.gm_token:
        return render_template("error.html", message="This is the GM's screen. Open it with the GM link."), 403
    join_url = f"{base_url()}/j/{table.join_code}"
    return render_template(
        "board.html",
        role="gm",
        table=table,
        token=token,
        join_url=join_url,
        watch_url=f"{base_url()}/t/{table.slug}/watch",
    )


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
    return render_template("board.html", role="player", table=table, token=token, join_url="", watch_url="")


@bp.get("/t/<slug>/watch")
def spectator_page(slug: str) -> Any:
    table = _table_or_404(slug)
    return render_template("board.html", role="spectator", table=table, token="", join_url="", watch_url="")


@bp.get("/t/<slug>/qr.svg")
def join_qr(slug: str) -> Response:
    table = _table_or_404(slug)
    if _remembered("gm", table.slug) != table.gm_token:
        abort(403)
    qr = segno.make(f"{base_url()}/j/{table.join_code}", error="m")
    buffer = io.BytesIO()
    qr.save(buffer, kind="svg", scale=6, border=2, dark="#111", light="#fff")
    return Response(buffer.getvalue(), mimetype="image/svg+xml")


@bp.get("/vendor/socket.io.min.js")
def socketio_client() -> Any:
    static_dir = Path(current_app.static_folder or "")
    instance_dir = Path(current_app.instance_path)
    path = find_client(static_dir, instance_dir)
    if path is None:
        try:
            path = ensure_client(static_dir, instance_dir)
        except VendorError as exc:
            return Response(f"/* Socket.IO client missing: {exc} */", status=503, mimetype="text/javascript")
    return send_file(path, mimetype="text/javascript", max_age=3600)


@bp.get("/healthz")
def health() -> dict[str, Any]:
    return {"ok": True}
