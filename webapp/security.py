"""What keeps other websites and floods away from the board's sessions (issue 32 §1, §6).

- **The session cookie** is ``HttpOnly`` and ``SameSite=Lax``, and ``Secure`` whenever the page was
  served over HTTPS or the board's public address (``BATTLEBOARD_PUBLIC_URL``) is an https one.
- **Every state-changing request** (POST and the like) must come from the board's own pages: Flask-WTF's
  CSRF token (a hidden ``csrf_token`` field in each form, the ``X-CSRFToken`` header of a script's
  request), and, where the browser says where it comes from (``Origin``, ``Sec-Fetch-Site``), this
  board's own address. Socket.IO connections are held to the same origin by python-engineio.
- **A refused request never touches the session**: no ``Set-Cookie`` on any refusal, so a page
  elsewhere cannot replace the GM's cookie (and with it every GM key, seat and roster library).
- **Form text** goes through the board's one reader (:mod:`webapp.text`): a form holding a control
  character or a broken one is refused before its view runs.
- **Rate limits** (:class:`Limits`) are Flask-Limiter's, counted in Redis when the board runs several
  processes (the message queue's Redis unless ``BATTLEBOARD_RATE_LIMIT_STORAGE`` names another), in
  memory otherwise.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, g, render_template, request
from flask.sessions import SecureCookieSessionInterface
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_wtf.csrf import CSRFError, CSRFProtect
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from werkzeug.exceptions import RequestEntityTooLarge

from .config import Config
from .text import BadText, check_characters

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: routes that take more than the app's 256 KiB body (endpoint -> bytes), set before any check reads it
BODY_LIMITS: dict[str, int] = {}
csrf = CSRFProtect()


class BoardSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, ``Secure`` when served over HTTPS, and never written on a refusal."""

    def get_cookie_secure(self, app: Flask) -> bool:
        public = app.config["BATTLEBOARD"].public_url or ""
        return bool(app.config.get("SESSION_COOKIE_SECURE")) or request.is_secure or public.startswith("https://")

    def save_session(self, app: Flask, session: Any, response: Any) -> None:
        if g.get("refused"):
            return  # a refused request leaves the browser's cookie exactly as it was
        super().save_session(app, session, response)


def refuse(message: str, status: int = 403) -> tuple[str, int]:
    """A page saying why a request was refused; the session is not saved (no ``Set-Cookie``)."""
    g.refused = True
    return render_template("error.html", message=message), status


def our_origins() -> set[str]:
    """The origins this board's pages are served from: the request's own, and the public address."""
    origins = {request.host_url.rstrip("/")}
    public = current_app.config["BATTLEBOARD"].public_url
    if public:
        parts = urlsplit(public)
        origins.add(f"{parts.scheme}://{parts.netloc}")
    return origins


def from_elsewhere() -> bool:
    """Whether the browser says this request comes from a page that is not this board's: its
    ``Sec-Fetch-Site`` is not same-origin, or its ``Origin`` is another site's (or ``null``, as a
    sandboxed frame's). A request without either header (an older browser, a script) is judged by its
    CSRF token alone."""
    site = request.headers.get("Sec-Fetch-Site")
    if site in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("Origin")
    return origin is not None and origin.rstrip("/") not in our_origins()


def _guard() -> Any:
    """Runs before every view: requests from other sites refused, form text read."""
    if request.method in UNSAFE_METHODS and from_elsewhere():
        return refuse("This request came from another website, so the board refused it. Nothing was changed.")
    if request.endpoint in BODY_LIMITS:
        request.max_content_length = BODY_LIMITS[request.endpoint]
    try:
        for key, value in request.args.items(multi=True):
            check_characters(key, "the address")
            check_characters(value, "the address")
        if request.method in UNSAFE_METHODS and request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            for key, value in request.form.items(multi=True):
                check_characters(key, "the form")
                check_characters(value, "the form")
    except BadText as exc:
        return refuse(f"{str(exc)[:1].upper()}{str(exc)[1:]}. Nothing was changed.", 400)
    except RequestEntityTooLarge:
        return refuse("That is more than this page accepts. Nothing was changed.", 413)
    return None


def _csrf_refused(exc: CSRFError) -> Any:
    if request.endpoint == "assets.upload":  # a script's upload: answered in JSON
        g.refused = True
        return {"ok": False, "error": "refused: this request did not come from this board's own page (reload it)"}, 403
    return refuse("This form is out of date or did not come from this board's own page, so nothing was changed. "
                  "Go back, reload the page and try again.")


def install(app: Flask, config: Config) -> None:
    """Cookies, the cross-site guard, CSRF tokens and the rate limits of one app."""
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,  # valid as long as the session: a join form may wait on a phone for hours
        WTF_CSRF_SSL_STRICT=False,  # its Referer check: pages send no Referer elsewhere; _guard checks the Origin
    )
    app.session_interface = BoardSessionInterface()
    app.before_request(_guard)  # before the CSRF check: a cross-site request is told so
    csrf.init_app(app)
    app.register_error_handler(CSRFError, _csrf_refused)
    app.extensions["battleboard_limits"] = Limits(app, config)


class Limits:
    """The board's rate limits, each a number per minute for one key (an address, a table).

    ``allowed`` asks without counting; ``hit`` counts one and says whether it was still allowed. A
    limit of failed attempts is asked before the attempt and hit only when it failed."""

    def __init__(self, app: Flask, config: Config) -> None:
        storage = config.rate_limit_storage or (
            config.message_queue if (config.message_queue or "").startswith(("redis://", "rediss://")) else "memory://"
        )
        self.limiter = Limiter(
            get_remote_address,
            app=app,
            storage_uri=storage,
            key_prefix=f"battleboard:{config.message_queue_channel}",
            in_memory_fallback_enabled=True,  # Redis away: count in this process rather than fail
            swallow_errors=True,
            headers_enabled=False,
            strategy="moving-window",
        )
        self._fallback = MovingWindowRateLimiter(MemoryStorage())
        #: this board's counts apart from another's on the same Redis (the queue's channel names the board)
        self.prefix = f"battleboard:{config.message_queue_channel}"
        self.items: dict[str, RateLimitItem] = {
            "join": parse(f"{config.join_attempts_per_minute}/minute"),  # wrong join codes, per address
            "pair": parse(f"{config.join_attempts_per_minute}/minute"),  # wrong pairing codes, per address
            "tables": parse(f"{config.tables_per_minute}/minute"),  # new tables (and imports), per address
            "screens": parse(f"{config.tables_per_minute}/minute"),  # new pairing codes, per address
            "uploads": parse(f"{config.uploads_per_minute}/minute"),  # images, per table
        }

    def allowed(self, kind: str, key: str) -> bool:
        try:
            return bool(self.limiter.limiter.test(self.items[kind], self.prefix, kind, key or "?"))
        except Exception:  # noqa: BLE001 -- the shared store is away: this process counts alone meanwhile
            return bool(self._fallback.test(self.items[kind], self.prefix, kind, key or "?"))

    def hit(self, kind: str, key: str) -> bool:
        try:
            return bool(self.limiter.limiter.hit(self.items[kind], self.prefix, kind, key or "?"))
        except Exception:  # noqa: BLE001
            return bool(self._fallback.hit(self.items[kind], self.prefix, kind, key or "?"))


def limits(app: Flask | None = None) -> Limits:
    found: Limits = (app or current_app).extensions["battleboard_limits"]
    return found
