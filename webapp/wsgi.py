"""The app for a production WSGI server, configured from the environment.

One process per ``gunicorn`` (the worker class Flask-SocketIO recommends, one worker each)::

    DATABASE_URL=postgresql://battleboard@127.0.0.1/battleboard \\
    BATTLEBOARD_MESSAGE_QUEUE=redis://127.0.0.1:6379/0 \\
    BATTLEBOARD_SECRET_KEY=... \\
    gunicorn -k gevent -w 1 -b 127.0.0.1:5001 webapp.wsgi:app

Under gunicorn's gevent worker the async mode is ``gevent`` unless ``BATTLEBOARD_ASYNC_MODE`` says
otherwise; everything else comes from the variables :func:`webapp.config.load_config` reads. Several
processes need the same ``BATTLEBOARD_SECRET_KEY`` (cookies signed by one are read by the other),
the same ``DATABASE_URL`` and the same ``BATTLEBOARD_MESSAGE_QUEUE``.
"""

from __future__ import annotations

import os
import sys

from flask import Flask

from .app import create_app, hub, settle_memory, socketio
from .config import load_config
from .db import checkpoint_in_background


def _gevent_patched() -> bool:
    if "gevent.monkey" not in sys.modules:
        return False
    from gevent import monkey

    return bool(monkey.is_module_patched("socket"))


def build_app() -> Flask:
    overrides: dict[str, object] = {}
    if not os.environ.get("BATTLEBOARD_ASYNC_MODE") and _gevent_patched():
        overrides["async_mode"] = "gevent"
    return create_app(load_config(**overrides))


app = build_app()
settle_memory()
hub(app).start_heartbeat()  # pages that missed an update catch up on their own
checkpoint_in_background(hub(app).service.engine)  # SQLite only

__all__ = ["app", "socketio"]
