"""The Flask app factory and the module-level ``SocketIO`` object (Flask-SocketIO's own pattern).

The ``SocketIO`` object is handed to the socket layer's :class:`webapp.sockets.Hub`, which registers
its handlers on it once ``init_app`` made the server: nothing imports this module but the entry
points (``serve``, the WSGI module, the tests)."""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import Any

from flask import Flask
from flask_socketio import SocketIO

from rules.odds.common import set_simulation_share

from . import chances_live, hiding, security, sockets, table_dice, table_tools, views
from .config import Config, load_config
from .db import create_tables, make_engine
from .service import BattleService
from .wire import BoardPacket, BoardRedisManager

socketio = SocketIO()
#: modules of socket events beside webapp/sockets.py: importing them registers their handlers
HANDLER_MODULES = (hiding, table_dice, table_tools)
#: every client event, and those only the GM may send, of all those modules: read off the registered
#: handlers, so a new event is covered by the generic role, payload and fuzz tests
#: (tests/server/test_sockets.py, test_security.py, test_fuzz.py, test_trust.py)
CLIENT_EVENTS = tuple(sockets.EVENT_HANDLERS)
GM_EVENTS = tuple(name for name, (_fn, gm_only) in sockets.EVENT_HANDLERS.items() if gm_only)

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent


def asset_dir(name: str) -> Path:
    """templates/ or static/: inside the installed package, or at the top of a checkout."""
    installed = PACKAGE_DIR / name
    return installed if installed.is_dir() else REPO_DIR / name


def create_app(config: Config | None = None, **overrides: Any) -> Flask:
    """Build the app: config, database (tables created), the authority service, routes and sockets."""
    config = (config or load_config(**overrides)).finish()
    app = Flask(
        __name__,
        template_folder=str(asset_dir("templates")),
        static_folder=str(asset_dir("static")),
        instance_path=str(config.instance_path),
    )
    app.config["SECRET_KEY"] = config.secret_key
    app.config["TESTING"] = config.testing
    app.config["SEND_FILE_MAX_AGE_DEFAULT"] = 0 if config.testing else 300
    app.config["MAX_CONTENT_LENGTH"] = 256 * 1024
    app.config["BATTLEBOARD"] = config
    if config.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        n = config.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app

    engine = make_engine(config.database_url, timeout=config.db_timeout)
    create_tables(engine)

    security.install(app, config)  # cookies, CSRF, the cross-site guard and the rate limits, before any view

    # on PostgreSQL the command path has its own pool, which does not ping before each command
    command_engine = (
        make_engine(config.database_url, timeout=config.db_timeout, pre_ping=False)
        if engine.dialect.name == "postgresql"
        else None
    )
    service = BattleService(engine, broadcaster=None, command_engine=command_engine)
    service.seats_per_table = config.seats_per_table
    service.test_seed = config.test_seed
    set_simulation_share(config.odds_work)
    board_hub = sockets.Hub(app, service, config, socketio)
    app.extensions["battleboard"] = board_hub
    service.broadcaster = chances_live.follow(board_hub)  # each update's broadcast, then its chances (issue 37)

    app.register_blueprint(views.bp)
    from . import assets

    app.register_blueprint(assets.bp)  # map and portrait uploads, images by content hash
    queue: dict[str, Any] = {"message_queue": config.message_queue, "channel": config.message_queue_channel}
    if config.message_queue and config.message_queue.startswith(("redis://", "rediss://")):
        # Flask-SocketIO's Redis queue, able to publish all of a command's projections as one message
        queue = {"client_manager": BoardRedisManager(config.message_queue, config.message_queue_channel)}
    # python-socketio's and python-engineio's options, through Flask-SocketIO (typeshed's stub lists only
    # some of them, and neither a null cors_allowed_origins nor an async_mode read from the environment)
    options: dict[str, Any] = {
        "async_mode": config.async_mode,
        **queue,
        "cors_allowed_origins": config.cors_allowed_origins,
        "max_http_buffer_size": config.max_payload_bytes,
        "ping_interval": config.ping_interval,
        "ping_timeout": config.ping_timeout,
        "serializer": BoardPacket,
        "logger": False,
        "engineio_logger": False,
    }
    socketio.init_app(app, **options)
    board_hub.install()  # the socket handlers, on the server init_app just made
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    return app


#: how often a serving process runs the garbage collector's full pass itself (seconds)
FULL_COLLECTION_SECONDS = 60.0


def settle_memory(full_collection_seconds: float = FULL_COLLECTION_SECONDS) -> None:
    """Tune the garbage collector of a process that is about to serve.

    A full collection stops the whole process while it walks every object; with a few hundred
    connections that took about 100 ms, and the collector ran one every ten seconds or so. So:
    collect, then freeze what start-up built (modules, the app, the rule systems), which full passes
    then skip (about 25-45 ms left); and run the full pass on a timer once a minute instead of when
    allocation counts say so. Young objects are still collected as usual (generations 0 and 1).
    Figures: tests/benchmarks/bench_load.py."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 1_000_000)  # generation 2 only through the timer below

    def full_collections() -> None:
        while True:
            socketio.sleep(full_collection_seconds)  # type: ignore[arg-type]  # typeshed's SocketIO.sleep says int; it takes any number of seconds
            gc.collect()

    socketio.start_background_task(full_collections)


def hub(app: Flask) -> sockets.Hub:
    found: sockets.Hub = app.extensions["battleboard"]
    return found
