"""``battleboard serve`` for the tests without a new interpreter's start each time.

A browser test starts a server of its own, on a new instance folder, and stops it at its end: a
fresh process with a fresh database, every time. Most of such a start (about 2 s of 2.3 s on this
machine, far more beside other test runs) is Python importing Flask, Socket.IO, SQLAlchemy, Alembic
and the board. Here one helper process per test process does those imports once (after gevent's
monkey-patching, as ``serve`` does first), then forks a child for each server asked of it. The child
takes the asked environment, working folder and log, and runs ``webapp.cli.main(["serve", ...])``:
what ``python -m webapp.cli serve ...`` runs, in a process of its own that the test stops with
Ctrl+C or SIGKILL as before. The board's own code runs nothing before the fork (no app, no
database, no thread): each child builds its app from its own environment.

``BATTLEBOARD_TEST_FORKS=0`` starts every server as its own ``python -m webapp.cli`` process again
(so does any system without ``fork``).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _read_line(fd: int) -> bytes:
    line = bytearray()
    while not line.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            raise EOFError
        line += chunk
    return bytes(line)


def _helper() -> None:
    """The helper process: one JSON request a line on stdin, one JSON answer a line on stdout."""
    from gevent import monkey

    monkey.patch_all()  # first, as ``serve`` does: the imports below then take gevent's sockets and threads
    import gevent.os

    import webapp.app  # noqa: F401  (what ``serve`` imports: the costly part of a start)
    import webapp.cli
    import webapp.db  # noqa: F401
    import webapp.vendor  # noqa: F401

    _import_what_serving_imports()
    import gc

    gc.freeze()  # (each child's start collects once: what is imported here is left out of it)
    waitpid = monkey.get_original("os", "waitpid")
    while True:
        try:
            request = json.loads(_read_line(0))
        except EOFError:
            return
        if request["do"] == "serve":
            pid = gevent.os.fork_gevent()
            if pid == 0:
                _child(request, webapp.cli.main)
            answer: Any = pid
        else:  # "poll": the child's exit code, or None while it runs
            done, status = waitpid(request["pid"], os.WNOHANG)
            answer = os.waitstatus_to_exitcode(status) if done else None
        os.write(1, (json.dumps(answer) + "\n").encode())


def _import_what_serving_imports() -> None:
    """Import now what a served board imports only when first asked, so that no child pays for it
    again (a fifth of the servers' CPU in the browser tests went to these imports): every module of
    the board and of its rule systems (the test system too), the Socket.IO transport on gevent, and
    the libraries of the report's charts, the chances and the map images."""
    import importlib
    import pkgutil

    # (numpy's OpenBLAS then starts no threads of its own in the helper: a fork would keep none)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import rules
    import webapp

    skip = ("webapp.wsgi", "webapp.__main__", "webapp.migrations")  # (wsgi makes an app when imported)
    for package in (rules, webapp):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.startswith(skip):
                importlib.import_module(module.name)
    from rules.registry import EXTRA_SYSTEMS_VARIABLE

    for name in filter(None, (n.strip() for n in os.environ.get(EXTRA_SYSTEMS_VARIABLE, "").split(","))):
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
            importlib.import_module(module.name)
    import engineio.async_drivers.gevent  # noqa: F401
    import gevent.pywsgi  # noqa: F401
    import gevent.resolver.thread  # noqa: F401
    import gevent.threadpool  # noqa: F401
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.ticker  # noqa: F401
    import numpy.random  # noqa: F401
    import simple_websocket  # noqa: F401
    import sqlalchemy.dialects.sqlite.pysqlite  # noqa: F401
    from PIL import Image

    Image.init()


def _child(request: dict[str, Any], main: Any) -> None:
    code: Any = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.argv = ["battleboard", *request["args"]]
        code = main(request["args"])
    except SystemExit as stop:
        code = stop.code
    except BaseException:  # noqa: BLE001 - said in the log, as a server of its own would
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)


class Forked:
    """A child of the helper, with what the tests use of ``subprocess.Popen``."""

    def __init__(self, helper: Helper, pid: int) -> None:
        self.helper, self.pid = helper, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.helper.ask({"do": "poll", "pid": self.pid})
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"server {self.pid}", timeout or 0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Helper:
    """The helper process of this test process (started on first use, ended with it)."""

    def __init__(self) -> None:
        self.errors = tempfile.NamedTemporaryFile(prefix="battleboard-forks-", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from tests.server_forks import _helper; _helper()"],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
        )
        self.lock = threading.Lock()
        atexit.register(self.close)

    def close(self) -> None:
        """End the helper (its stdin closed, it returns) and remove its error log."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.errors.close()
        Path(self.errors.name).unlink(missing_ok=True)

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            try:
                self.process.stdin.write((json.dumps(request) + "\n").encode())
                self.process.stdin.flush()
                line = self.process.stdout.readline()
            except OSError:
                line = b""
        if not line:
            raise RuntimeError(f"the tests' server helper ended: {Path(self.errors.name).read_text()[-2000:]}")
        return json.loads(line)


_helper_process: Helper | None = None


def serve(args: list[str], *, env: dict[str, str], cwd: Path, log: Path) -> Forked | subprocess.Popen[bytes]:
    """``python -m webapp.cli <args>`` with ``env`` in ``cwd``, its output appended to ``log``."""
    global _helper_process
    if os.environ.get("BATTLEBOARD_TEST_FORKS", "1") == "0" or not hasattr(os, "fork"):
        with open(log, "ab") as out:
            return subprocess.Popen([sys.executable, "-m", "webapp.cli", *args], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if _helper_process is None or _helper_process.process.poll() is not None:
        _helper_process = Helper()
    return Forked(_helper_process, _helper_process.ask({"do": "serve", "args": args, "env": env, "cwd": str(cwd), "log": str(log)}))
