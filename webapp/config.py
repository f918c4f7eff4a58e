"""Configuration from the environment, with defaults that work on a fresh clone.

Importing this module never fails and touches no file; :func:`load_config` reads the environment.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _default_instance() -> Path:
    return Path(os.environ.get("BATTLEBOARD_INSTANCE", Path.cwd() / "instance")).resolve()


@dataclass
class Config:
    """Everything the app reads at start-up."""

    instance_path: Path = field(default_factory=_default_instance)
    database_url: str = ""
    secret_key: str = ""
    message_queue: str | None = None
    #: the message queue's channel: processes of one board share it, other boards on the same Redis must not
    message_queue_channel: str = "flask-socketio"
    async_mode: str = "threading"
    public_url: str | None = None
    #: the address and port ``serve`` listens on (the join link's base without a public URL)
    listen_host: str | None = None
    listen_port: int = 0
    testing: bool = False
    #: how many wrong join (or pairing) codes one address may try per minute (right ones are not counted:
    #: thirty players behind a venue's one address all join in the same minute)
    join_attempts_per_minute: int = 10
    #: how many seats one table may have
    seats_per_table: int = 100
    #: how many images the GM of one table may upload per minute
    uploads_per_minute: int = 10
    #: where the rate limits are counted: a Flask-Limiter storage address ("redis://...", "memory://");
    #: by default the message queue's Redis when there is one (shared by every process), else memory
    rate_limit_storage: str | None = None
    #: how many tables one address may create per minute
    tables_per_minute: int = 10
    #: socket payloads larger than this are refused (bytes of JSON)
    max_payload_bytes: int = 64_000
    cors_allowed_origins: str | list[str] | None = None
    #: seconds a write waits for the database (SQLite lock, PostgreSQL connection) before failing clearly
    db_timeout: float = 30.0
    #: how many reverse proxies in front set X-Forwarded-For/-Proto/-Host (0: trust none); the join
    #: rate limit counts attempts per client address, so behind nginx this must be 1
    trusted_proxies: int = 0
    #: whole seconds between the server's pings on each connection, and how long an answer may take:
    #: a phone that vanished without closing its connection (carried out of the Wi-Fi's range) is
    #: noticed by both ends within their sum (python-engineio's own defaults, 25 + 20 s, took 45 s)
    ping_interval: int = 10
    ping_timeout: int = 10
    #: seconds between the heartbeats that tell each page the battle's version and its table's stamp
    #: as the database holds them (a page that missed an update catches up within this time; 0: none)
    heartbeat_seconds: float = 3.0
    #: seconds each update's chances to win may take, worked out after its broadcast (issue 37,
    #: webapp/chances_live.py; 0: no live chances)
    chances_seconds: float = 1.0
    #: for tests only (BATTLEBOARD_TEST_SEED): every battle's dice seed and every seat's public id are
    #: derived from it and the table (see :func:`fixed_for_tests`), so a test plays the same dice on every
    #: run. Unset (the default) they are random. Never set it for real games: whoever knows it knows the dice.
    test_seed: str | None = None
    #: the share of its full work a simulated answer (Olympia's odds) does, above 0 and at most 1
    #: (BATTLEBOARD_ODDS_WORK): a small machine answers sooner with wider intervals
    odds_work: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    def finish(self) -> Config:
        """Fill the defaults that need the instance folder (creating it)."""
        self.instance_path.mkdir(parents=True, exist_ok=True)
        if not self.database_url:
            self.database_url = f"sqlite:///{self.instance_path / 'battleboard.sqlite3'}"
        if not self.secret_key:
            key_file = self.instance_path / "secret_key"
            if not key_file.exists():
                key_file.write_text(secrets.token_urlsafe(32))
                key_file.chmod(0o600)
            self.secret_key = key_file.read_text().strip()
        return self


def fixed_for_tests(test_seed: str | None, length: int, *parts: object) -> str | None:
    """``length`` hex characters derived from the test seed and ``parts``; None without a test seed
    (the caller then draws a random value, as it always does in production).

    >>> fixed_for_tests("s", 8, "seat", 1, 0, "Alice")
    '2f5459d2'
    >>> fixed_for_tests(None, 8, "seat", 1) is None
    True
    """
    if not test_seed:
        return None
    return hashlib.sha256("/".join(str(part) for part in (test_seed, *parts)).encode()).hexdigest()[:length]


def _int(raw: str | None, default: int) -> int:
    try:
        return max(0, int(raw)) if raw else default
    except ValueError:
        return default


def _budget(raw: str | None, default: float) -> float:
    """Seconds from 0 to 10 (fractions too); anything else keeps the default.

    >>> _budget("0.5", 1.0), _budget("0", 1.0), _budget("lots", 1.0), _budget("99", 1.0)
    (0.5, 0.0, 1.0, 1.0)
    """
    try:
        value = float(raw) if raw is not None else default
    except ValueError:
        return default
    return value if 0 <= value <= 10 else default


def _seconds(raw: str | None, default: int) -> int:
    """Whole seconds from 1 to an hour; anything else keeps the default."""
    value = _int(raw, default)
    return value if 1 <= value <= 3600 else default


def _share(raw: str | None) -> float:
    """A share above 0 and at most 1; anything else is 1 (the whole work).

    >>> _share("0.1"), _share(None), _share("0"), _share("2"), _share("much")
    (0.1, 1.0, 1.0, 1.0, 1.0)
    """
    try:
        value = float(raw) if raw else 1.0
    except ValueError:
        return 1.0
    return value if 0 < value <= 1 else 1.0


def load_config(**overrides: object) -> Config:
    """Config from environment variables, then keyword overrides."""
    env = os.environ
    config = Config(
        database_url=env.get("DATABASE_URL", ""),
        secret_key=env.get("BATTLEBOARD_SECRET_KEY", env.get("SECRET_KEY", "")),
        message_queue=env.get("BATTLEBOARD_MESSAGE_QUEUE") or env.get("REDIS_URL") or None,
        message_queue_channel=env.get("BATTLEBOARD_MESSAGE_QUEUE_CHANNEL") or "flask-socketio",
        async_mode=env.get("BATTLEBOARD_ASYNC_MODE", "threading"),
        public_url=env.get("BATTLEBOARD_PUBLIC_URL") or None,
        rate_limit_storage=env.get("BATTLEBOARD_RATE_LIMIT_STORAGE") or None,
        trusted_proxies=_int(env.get("BATTLEBOARD_TRUSTED_PROXIES"), 0),
        db_timeout=float(_int(env.get("BATTLEBOARD_DB_TIMEOUT"), 30)),
        ping_interval=_seconds(env.get("BATTLEBOARD_PING_INTERVAL"), 10),
        ping_timeout=_seconds(env.get("BATTLEBOARD_PING_TIMEOUT"), 10),
        heartbeat_seconds=float(_seconds(env.get("BATTLEBOARD_HEARTBEAT_SECONDS"), 3)),
        chances_seconds=_budget(env.get("BATTLEBOARD_CHANCES_SECONDS"), 1.0),
        test_seed=env.get("BATTLEBOARD_TEST_SEED") or None,
        odds_work=_share(env.get("BATTLEBOARD_ODDS_WORK")),
    )
    for key, value in overrides.items():
        if not hasattr(config, key):
            raise TypeError(f"unknown config key {key!r}")
        setattr(config, key, value)
    return config
