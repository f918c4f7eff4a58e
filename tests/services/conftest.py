"""Real services: a throwaway PostgreSQL database, Redis, and gunicorn gevent server processes.

Without PostgreSQL or Redis these tests skip and say why; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PG_ADMIN_URL = os.environ.get("BATTLEBOARD_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BATTLEBOARD_TEST_REDIS", "redis://127.0.0.1:6379/0")


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: services tests must run)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=3)


@pytest.fixture(scope="session")
def redis_url() -> str:
    try:
        import redis
    except ImportError:
        missing("the redis package is not installed (pip install -e '.[test]')")
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as exc:  # noqa: BLE001
        missing(f"no Redis at {REDIS_URL}: {exc}")
    return REDIS_URL


@pytest.fixture(scope="session")
def pg_admin() -> str:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing("the psycopg package is not installed (pip install -e '.[test]')")
    try:
        _pg_connect(PG_ADMIN_URL).close()
    except Exception as exc:  # noqa: BLE001
        missing(f"no PostgreSQL at {PG_ADMIN_URL}: {exc}")
    return PG_ADMIN_URL


def create_database(admin_url: str) -> str:
    name = f"battleboard_test_{secrets.token_hex(6)}"
    with _pg_connect(admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with _pg_connect(admin_url) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_admin: str) -> Iterator[str]:
    url = create_database(pg_admin)
    try:
        yield url
    finally:
        drop_database(pg_admin, url)


class Gunicorn:
    """One ``gunicorn -k gevent -w 1`` process running ``webapp.wsgi:app``."""

    def __init__(self, env: dict[str, str], instance: Path, name: str, *, wait: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = instance / f"{name}.log"
        gunicorn = Path(sys.executable).parent / "gunicorn"
        full_env = {**os.environ, **env, "BATTLEBOARD_INSTANCE": str(instance), "PYTHONUNBUFFERED": "1"}
        full_env.pop("BATTLEBOARD_ASYNC_MODE", None)
        self._log_file = self.log.open("w")
        self.proc = subprocess.Popen(
            [str(gunicorn), "-k", "gevent", "-w", "1", "--no-control-socket", "-b", f"127.0.0.1:{self.port}",
             "--graceful-timeout", "3", "webapp.wsgi:app"],
            cwd=REPO,
            env=full_env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"gunicorn did not start: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log_file.close()

    def errors(self) -> str:
        text = self.log.read_text()
        return "\n".join(line for line in text.splitlines() if "Traceback" in line or "ERROR" in line)


@pytest.fixture
def cluster(pg_url: str, redis_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Two gunicorn gevent processes on one PostgreSQL database and one Redis channel."""
    env = {
        "DATABASE_URL": pg_url,
        "BATTLEBOARD_MESSAGE_QUEUE": redis_url,
        "BATTLEBOARD_MESSAGE_QUEUE_CHANNEL": f"battleboard-test-{secrets.token_hex(4)}",
        "BATTLEBOARD_SECRET_KEY": "services-test-secret",
    }
    servers: list[Gunicorn] = []
    try:
        # both start at once on an empty database: they race to create the tables, as in production
        servers.append(Gunicorn(env, tmp_path, "a", wait=False))
        servers.append(Gunicorn(env, tmp_path, "b", wait=False))
        for server in servers:
            server.wait_ready()
        yield {"servers": servers, "database_url": pg_url, "env": env}
    finally:
        for server in servers:
            server.stop()
