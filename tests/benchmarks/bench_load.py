"""Load benchmark: N tables, each with a GM, 6 players and 10 spectators, as real Socket.IO clients.

Run as ``python tests/benchmarks/bench_load.py`` (pytest does not collect it)::

    python tests/benchmarks/bench_load.py --mode single --tables 20 --seconds 30
    python tests/benchmarks/bench_load.py --mode cluster --tables 40 --seconds 30
    python tests/benchmarks/bench_load.py --mode cluster --think 0.5 --pairs 3  # board, bare, board, bare, …
    python tests/benchmarks/bench_load.py --mode cluster --think 0.5 --seconds 120 --slices 5  # both connected, 5 s turns

``single`` starts one server process on SQLite (gunicorn ``-k gevent -w 1``, or ``--server
threading`` for the embedded ``battleboard serve``); ``cluster`` starts two gunicorn gevent processes
on a throwaway PostgreSQL database behind one Redis channel, with each table's clients spread over
both. Every table plays a Phantom's Bane duel continuously: its two seated players choose in turn
(the GM restarts a duel that ends); the other four players, the GM and ten spectators watch. Each
command waits until all 17 clients of its table hold the update, then the next one goes out (after
``--think`` seconds, drawn between 0.5x and 1.5x; with a think time each table also waits its own
first pause, so tables do not start in step). Clients are ``socketio.AsyncClient`` in several client
processes, which pause their own garbage collector while they measure and read JSON with orjson.

It prints commands per second, the end-to-end latency from sending a command to the last client of
the table holding its update (p50, p99, max), lost and out-of-order updates (must be 0), the
server's memory (RSS), the CPU steal of the machine during the run (from /proc/stat), the CPU per
command of the servers, the clients and everything else (the database, Redis, the kernel) while the
tables play, and the same figures for a bare python-socketio server broadcasting a payload of the
same average size to the same clients (same process count, same server stack: gunicorn gevent, or
python-socketio's threading mode on Werkzeug against the embedded server; same message queue, same
ping interval), with the ratio. The bare payload is a real spectator update of the run, padded to
the average size. It also splits the board's latencies into the commands that were under way while a
GM restarted an ended duel (on any table) and the rest.

This VM's host slows it now and then, in spells of seconds to minutes, and whichever side runs
through one loses. ``--pairs N``: board and bare take N turns of ``--seconds`` each (each turn
connects its clients afresh), and each side's latencies are pooled. ``--slices S``: board and bare
both stay connected and take turns of S seconds until each has played ``--seconds`` (after a short
warm-up drive of each), so a spell falls on both alike; the p99 of each third of the run shows how
steady the ratio is.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import json
import multiprocessing as mp
import os
import random
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

PLAYERS = 6
#: ``--slices``: each side's warm-up drive, and the pause between one side's slice and the other's (s)
WARM_UP_SECONDS = 10.0
SLICE_GAP = 0.3
SPECTATORS = 10
CLIENTS_PER_TABLE = 1 + PLAYERS + SPECTATORS


# --- the bare python-socketio server (for the comparison) ----------------------------------------


def bare_app(async_mode: str = "gevent") -> Any:
    """A bare python-socketio app: clients join their table's room, ``cmd`` broadcasts a padded update."""
    import socketio

    queue = os.environ.get("BENCH_BARE_REDIS")
    manager = socketio.RedisManager(queue, channel=os.environ["BENCH_BARE_CHANNEL"]) if queue else None
    # the board's keep-alive (pings every BATTLEBOARD_PING_INTERVAL seconds) on the same connections
    pings = {"ping_interval": int(os.environ.get("BENCH_BARE_PING_INTERVAL", 25)), "ping_timeout": int(os.environ.get("BENCH_BARE_PING_TIMEOUT", 20))}
    sio = socketio.Server(async_mode=async_mode, client_manager=manager, cors_allowed_origins="*", logger=False, engineio_logger=False, **pings)
    pads: dict[int, str] = {}
    sample_file = os.environ.get("BENCH_BARE_PAYLOAD")
    sample = json.loads(Path(sample_file).read_text()) if sample_file else None

    @sio.event
    def connect(sid: str, environ: dict[str, Any], auth: Any) -> None:
        sio.enter_room(sid, f"t{auth['table']}")

    @sio.on("cmd")
    def cmd(sid: str, data: dict[str, Any]) -> dict[str, Any]:
        v = int(data["v"]) + 1
        if sample is not None:  # a real update of the same run: same size, same shape to decode
            payload = {**sample, "battle_id": data["table"], "v": v, "prev_v": v - 1}
        else:
            size = int(data["size"])
            payload = {"battle_id": data["table"], "v": v, "prev_v": v - 1, "pad": pads.setdefault(size, "x" * size)}
        sio.emit("update", payload, to=f"t{data['table']}")
        return {"ok": True, "v": v}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"ok": true}']

    return socketio.WSGIApp(sio, app)


def serve_bare_threading(port: int) -> None:
    """The bare app on the embedded board's stack: python-socketio's threading mode on Werkzeug's
    threaded server, as ``battleboard serve`` runs (Flask-SocketIO's ``run`` in threading mode)."""
    from werkzeug.serving import run_simple

    run_simple("127.0.0.1", port, bare_app("threading"), threaded=True, use_reloader=False)


# --- machine figures ---------------------------------------------------------------------------


def cpu_times() -> list[int]:
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def busy_seconds(before: list[int], after: list[int]) -> float:
    """CPU seconds the whole machine spent busy (not idle, iowait or steal)."""
    delta = [b - a for a, b in zip(before, after, strict=False)]
    return (sum(delta[:8]) - delta[3] - delta[4] - (delta[7] if len(delta) > 7 else 0)) / os.sysconf("SC_CLK_TCK")


def steal_percent(before: list[int], after: list[int]) -> float:
    delta = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(delta[:8]) or 1
    return 100.0 * (delta[7] if len(delta) > 7 else 0) / total


def process_tree(pid: int) -> list[int]:
    pids, changed = {pid}, True
    while changed:
        changed = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in pids:
                continue
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in pids:
                pids.add(int(entry.name))
                changed = True
    return sorted(pids)


def rss_mb(pid: int) -> float:
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pid: int) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total / ticks


# --- servers -----------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, cmd: list[str], env: dict[str, str], log: Path, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self._log = log.open("w")
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(log.read_text()[-3000:])
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("server did not start: " + log.read_text()[-3000:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()


def gunicorn(app: str, env: dict[str, str], log: Path, extra: list[str] | None = None) -> Server:
    port = free_port()
    cmd = [str(Path(sys.executable).parent / "gunicorn"), "-k", "gevent", "-w", "1", "--no-control-socket",
           "-b", f"127.0.0.1:{port}", "--graceful-timeout", "5", "--log-level", "warning", *(extra or []), *os.environ.get("BENCH_GUNICORN_ARGS", "").split(), app]
    return Server(cmd, env, log, port)


def board_env(instance: Path, database_url: str, message_queue: str | None, channel: str) -> dict[str, str]:
    env = {**os.environ, "BATTLEBOARD_INSTANCE": str(instance), "DATABASE_URL": database_url,
           "BATTLEBOARD_SECRET_KEY": "bench", "PYTHONUNBUFFERED": "1", "BATTLEBOARD_MESSAGE_QUEUE_CHANNEL": channel}
    env.pop("BATTLEBOARD_ASYNC_MODE", None)
    if message_queue:
        env["BATTLEBOARD_MESSAGE_QUEUE"] = message_queue
    else:
        env.pop("BATTLEBOARD_MESSAGE_QUEUE", None)
    return env


# --- tables ------------------------------------------------------------------------------------


def prepare_tables(database_url: str, n: int) -> list[dict[str, Any]]:
    from rules import get_system
    from webapp.db import create_tables, make_engine
    from webapp.service import BattleService

    service = BattleService(make_engine(database_url))
    create_tables(service.engine)
    presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
    sturdy = {"health": 30, "defence": 12, "armour_bonus": 8}  # long duels; a duel that ends is restarted
    specs = []
    for i in range(n):
        table = service.create_table(f"Bench table {i + 1}", "phantoms-bane")
        seats = [service.join(table.join_code, f"Player {k + 1}")[1] for k in range(PLAYERS)]
        lineup = [
            {**presets["Jharek"], **sturdy, "id": "jharek", "side": "A", "controller": "seat", "seat": seats[0].public_id},
            {**presets["Wild Monster"], **sturdy, "id": "monster", "side": "B", "controller": "seat", "seat": seats[1].public_id},
        ]
        service.set_lineup(table.id, lineup)
        battle = service.start_battle(table.id)
        specs.append({"slug": table.slug, "gm": table.gm_token, "seats": [s.token for s in seats],
                      "battle_id": battle.battle_id, "v": battle.version, "index": i})
    service.engine.dispose()
    return specs


# --- client processes --------------------------------------------------------------------------


def wire_size(payload: Any) -> int:
    """The size of an update as it travels (compact JSON)."""
    import orjson

    return len(orjson.dumps(payload))


class ClientJson:
    """The clients' JSON: orjson, like a browser's native JSON.parse, so that the measuring clients
    spend as little of the shared CPUs as they can (the same for the board and the bare runs)."""

    @staticmethod
    def dumps(obj: Any, **_: Any) -> str:
        import orjson

        return orjson.dumps(obj).decode()

    @staticmethod
    def loads(text: str | bytes) -> Any:
        import orjson

        return orjson.loads(text)


class TableRun:
    """The clients of one table and what they received."""

    def __init__(self, spec: dict[str, Any], urls: list[str], bare: bool, size: int) -> None:
        self.spec, self.urls, self.bare, self.size = spec, urls, bare, size
        self.clients: list[Any] = []
        self.arrivals: dict[tuple[int, int], list[float]] = {}
        self.progress = asyncio.Event()
        self.latencies: list[float] = []
        self.last: list[dict[int, int]] = []
        self.received: list[dict[int, set[int]]] = []
        self.out_of_order = 0
        self.bytes = 0
        self.updates = 0
        self.commands = 0
        self.restarts = 0  # duels that ended and were restarted by the GM
        self.errors: list[str] = []
        self.timed: list[tuple[float, float]] = []  # each measured command: sent, last client's update
        self.restart_windows: list[tuple[float, float]] = []  # each GM restart: called, answered
        self.final: dict[int, int] = {}
        self.first_v: dict[int, int] = {}
        self.samples: list[dict[str, Any]] = []  # a spectator's first updates
        self.rng = random.Random(spec["index"])  # the same pauses in the board run and the bare run
        # where the table stands: each play (a drive, or one of its slices) goes on from there
        self.bid, self.v, self.n = spec["battle_id"], spec["v"], 0
        self.first_v[self.bid] = self.v + 1

    def on_update(self, k: int, payload: dict[str, Any]) -> None:
        now = time.monotonic()
        bid, v, prev = payload["battle_id"], payload["v"], payload["prev_v"]
        last = self.last[k]
        if bid in last and prev != last[bid]:
            self.out_of_order += 1
        last[bid] = v
        self.received[k].setdefault(bid, set()).add(v)
        self.arrivals.setdefault((bid, v), []).append(now)
        size = wire_size(payload)
        self.bytes += size
        self.updates += 1
        if k == CLIENTS_PER_TABLE - 1 and not self.bare and len(self.samples) < 20:
            self.samples.append(payload)  # spectators' updates: the bare run sends one of the average size
        self.progress.set()

    async def connect(self, sem: asyncio.Semaphore) -> None:
        import socketio

        spec = self.spec
        tokens = [spec["gm"], *spec["seats"], *([None] * SPECTATORS)]
        for k, token in enumerate(tokens):
            client = socketio.AsyncClient(reconnection=False, json=ClientJson)
            self.last.append({})
            self.received.append({})
            client.on("update", lambda payload, k=k: self.on_update(k, payload))
            url = self.urls[(spec["index"] + k) % len(self.urls)]
            auth = {"table": spec["index"]} if self.bare else {"table": spec["slug"], "token": token}
            async with sem:
                await client.connect(url, auth=auth, transports=["websocket"], wait_timeout=30)
            self.clients.append(client)

    async def wait_all(self, key: tuple[int, int], timeout: float = 15) -> float | None:
        deadline = time.monotonic() + timeout
        while len(self.arrivals.get(key, ())) < CLIENTS_PER_TABLE:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.progress.clear()
            try:
                await asyncio.wait_for(self.progress.wait(), remaining)
            except TimeoutError:
                return None
        return max(self.arrivals[key])

    async def play(self, until: float, think: float) -> None:
        spec = self.spec
        bid, v, n = self.bid, self.v, self.n
        gm, p1, p2 = self.clients[0], self.clients[1], self.clients[2]
        if think:  # tables do not start in step either: each waits its own first pause
            await asyncio.sleep(think * self.rng.uniform(0.0, 1.0))
        while time.monotonic() < until:
            n += 1
            actor, who = (p1, "jharek") if n % 2 else (p2, "monster")
            sent = time.monotonic()
            try:
                if self.bare:
                    ack = await actor.call("cmd", {"table": spec["index"], "v": v, "size": self.size}, timeout=15)
                else:
                    ack = await actor.call("declare", {"battle_id": bid, "expected_v": v, "msg_id": f"b{spec['v']}-{n}",  # new in every drive
                                                       "declaration": {"type": "choose", "combatant": who, "option": "attack"}}, timeout=15)
            except Exception as exc:  # noqa: BLE001
                self.errors.append(f"timeout/{type(exc).__name__}")
                break
            if ack.get("ok"):
                v = ack["v"]
                self.final[bid] = v
                self.commands += 1
                done = await self.wait_all((spec["index"] if self.bare else bid, v))
                if done is None:
                    self.errors.append(f"update v{v} did not reach every client")
                else:
                    self.latencies.append(done - sent)
                    self.timed.append((sent, done))
            elif "ended" in str(ack.get("error", "")):
                self.restarts += 1
                called = time.monotonic()
                restarted = await gm.call("battle_restart", {}, timeout=15)
                self.restart_windows.append((called, time.monotonic()))
                if not restarted.get("ok"):
                    self.errors.append(str(restarted))
                    break
                bid, v = restarted["battle_id"], restarted["v"]
                self.first_v[bid], self.final[bid] = v, v
                await self.wait_all((bid, v))
                n = 0
            else:
                self.errors.append(str(ack)[:200])
                if ack.get("code") == "stale":
                    v = ack["v"]
            self.bid, self.v, self.n = bid, v, n
            if think:  # tables do not move in step: each pause is drawn between 0.5x and 1.5x the think time
                await asyncio.sleep(think * self.rng.uniform(0.5, 1.5))
        self.bid, self.v, self.n = bid, v, n

    def lost(self) -> int:
        missing = 0
        for k in range(len(self.clients)):
            for bid, final in self.final.items():
                first = self.first_v.get(bid, 1)
                key = self.spec["index"] if self.bare else bid
                got = self.received[k].get(key, set())
                missing += sum(1 for v in range(first, final + 1) if v not in got)
        return missing


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def client_main(specs: list[dict[str, Any]], urls: list[str], bare: bool, size: int, windows: list[tuple[float, float]], think: float) -> dict[str, Any]:
    runs = [TableRun(spec, urls, bare, size) for spec in specs]
    sem = asyncio.Semaphore(20)
    await asyncio.gather(*(run.connect(sem) for run in runs))
    # the load generator is the measuring instrument: a full garbage collection of its own 170
    # clients stops it for up to ~100 ms, which would show as latency of the server it measures
    gc.collect()
    gc.freeze()
    gc.disable()
    play_cpu = 0.0
    for start, end in windows:  # one window, or the slices this side plays between the other's
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        cpu_at_start = own_cpu()
        await asyncio.gather(*(run.play(end, think) for run in runs))
        play_cpu += own_cpu() - cpu_at_start
    await asyncio.sleep(1.0)  # stragglers
    gc.enable()
    result = {
        "latencies": [x for run in runs for x in run.latencies],
        "timed": [x for run in runs for x in run.timed],
        "restart_windows": [x for run in runs for x in run.restart_windows],
        "commands": sum(run.commands for run in runs),
        "restarts": sum(run.restarts for run in runs),
        "lost": sum(run.lost() for run in runs),
        "out_of_order": sum(run.out_of_order for run in runs),
        "errors": [e for run in runs for e in run.errors][:20],
        "error_count": sum(len(run.errors) for run in runs),
        "bytes": sum(run.bytes for run in runs),
        "updates": sum(run.updates for run in runs),
        "samples": [p for run in runs for p in run.samples],
        "client_cpu": own_cpu(),
        "client_play_cpu": play_cpu,
    }
    await asyncio.gather(*(c.disconnect() for run in runs for c in run.clients), return_exceptions=True)
    return result


def client_process(specs: list[dict[str, Any]], urls: list[str], bare: bool, size: int, windows: list[tuple[float, float]], think: float, out: Any) -> None:
    try:
        out.put(asyncio.run(client_main(specs, urls, bare, size, windows, think)))
    except Exception as exc:  # noqa: BLE001
        out.put({"crash": repr(exc)})


def connect_time(tables: int) -> float:
    """Seconds to leave for the clients of ``tables`` tables to connect before the play starts."""
    return 8 + tables * 0.25


def drive(specs: list[dict[str, Any]], urls: list[str], *, bare: bool, size: int, seconds: float, think: float, procs: int,
          sample: Any = None) -> dict[str, Any]:
    """Play the tables for ``seconds``; ``sample()`` (the CPU figures of the machine and the servers)
    is taken when the play starts and when it stops, so per-command figures leave out the connecting."""
    start_at = time.monotonic() + connect_time(len(specs))
    return launch(specs, urls, bare=bare, size=size, windows=[(start_at, start_at + seconds)], think=think, procs=procs, sample=sample)()


def launch(specs: list[dict[str, Any]], urls: list[str], *, bare: bool, size: int, windows: list[tuple[float, float]], think: float,
           procs: int, sample: Any = None) -> Any:
    """Start the client processes of one side, which connect and then play in ``windows``; returns
    the function that waits for them and merges what they measured."""
    import threading

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    workers = [ctx.Process(target=client_process, args=(specs[i::procs], urls, bare, size, windows, think, out)) for i in range(procs)]
    samples: list[Any] = []

    def take_samples() -> None:
        for at in (t for window in windows for t in window):
            time.sleep(max(0.0, at - time.monotonic()))
            samples.append(sample())

    sampler = threading.Thread(target=take_samples, daemon=True)
    if sample is not None:
        sampler.start()
    for w in workers:
        w.start()

    def collect() -> dict[str, Any]:
        results = [out.get(timeout=windows[-1][1] - time.monotonic() + 600) for _ in workers]
        if sample is not None:
            sampler.join(60)
        for w in workers:
            w.join(30)
        crashes = [r["crash"] for r in results if "crash" in r]
        if crashes:
            raise RuntimeError(f"a client process failed: {crashes}")
        latencies = sorted(x for r in results for x in r["latencies"])
        merged = {key: sum(r[key] for r in results) for key in ("commands", "restarts", "lost", "out_of_order", "error_count", "bytes", "updates", "client_cpu", "client_play_cpu")}
        merged["errors"] = [e for r in results for e in r["errors"]][:10]
        merged["samples"] = [p for r in results for p in r.get("samples", [])]
        merged["latencies"] = latencies
        merged["timed"] = [x for r in results for x in r["timed"]]  # one clock: CLOCK_MONOTONIC is system-wide
        merged["restart_windows"] = [x for r in results for x in r["restart_windows"]]
        merged["window"] = samples
        merged["windows"] = windows
        return merged

    return collect


def sample_pairs(run: dict[str, Any]) -> list[tuple[Any, Any]]:
    """The (machine, servers) CPU samples taken at the start and at the end of each play window."""
    samples = run["window"]
    return list(zip(samples[::2], samples[1::2], strict=True))


def play_cpu(run: dict[str, Any]) -> dict[str, float]:
    """CPU seconds while the tables played (connecting left out): the servers, the clients, the rest."""
    pairs = sample_pairs(run)
    server = sum(end[1] - start[1] for start, end in pairs)
    busy = sum(busy_seconds(start[0], end[0]) for start, end in pairs)
    return {"server": server, "clients": run["client_play_cpu"], "others": max(0.0, busy - server - run["client_play_cpu"])}


def pg_sessions(admin_url: str, name: str | None) -> int:
    """Connections ever opened to the database ``name`` (PostgreSQL's own count; 0 without one)."""
    if name is None:
        return 0
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", (name,)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000


# --- the runs ----------------------------------------------------------------------------------


def split_by_restarts(timed: list[tuple[float, float]], windows: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The latencies of the commands that were under way while a GM restarted a duel (on any
    table), and of the others: a restart (a new battle, its update and every room's table view) is
    the largest piece of work a server does in the run, and it shares the server with them."""
    windows = sorted(windows)
    starts = [w[0] for w in windows]
    during: list[float] = []
    others: list[float] = []
    longest = max((end - start for start, end in windows), default=0.0)
    for sent, done in timed:
        first = bisect.bisect_left(starts, sent - longest)
        last = bisect.bisect_right(starts, done)
        overlaps = any(end > sent for _, end in windows[first:last])
        (during if overlaps else others).append(done - sent)
    return sorted(during), sorted(others)


def refresh_specs(database_url: str, specs: list[dict[str, Any]]) -> None:
    """Each table's battle and version as the last drive left them (for the next drive)."""
    from sqlalchemy import text

    from webapp.db import make_engine

    engine = make_engine(database_url)
    query = text("SELECT b.id, b.version FROM game_table t JOIN battle b ON b.id = t.battle_id WHERE t.slug = :slug")
    with engine.connect() as conn:
        for spec in specs:
            spec["battle_id"], spec["v"] = conn.execute(query, {"slug": spec["slug"]}).one()
    engine.dispose()


def measured(play: Any, group: list[Server]) -> dict[str, Any]:
    """One drive, with the machine's CPU times and the CPU seconds of the servers in ``group``."""
    machine0, server0, t0 = cpu_times(), sum(cpu_seconds(s.proc.pid) for s in group), time.monotonic()
    run = play()
    wall = time.monotonic() - t0
    machine1, server1 = cpu_times(), sum(cpu_seconds(s.proc.pid) for s in group)
    return {"run": run, "wall": wall, "machine": [b - a for a, b in zip(machine0, machine1, strict=False)], "server": server1 - server0}


def windowed(run: dict[str, Any]) -> dict[str, Any]:
    """A side's drive played in slices, with the machine's and its servers' CPU during its slices only."""
    pairs = sample_pairs(run)
    machine = [sum(end[0][i] - start[0][i] for start, end in pairs) for i in range(len(pairs[0][0][0]))]
    return {"run": run, "wall": sum(end - start for start, end in run["windows"]), "machine": machine,
            "server": sum(end[1] - start[1] for start, end in pairs)}


def stretches(run: dict[str, Any], parts: int) -> list[float]:
    """The p99 of each of ``parts`` consecutive stretches of a sliced drive (of its commands by when sent)."""
    windows = run["windows"]
    per = max(1, len(windows) // parts)
    bounds = [windows[min(k * per, len(windows) - 1)][0] for k in range(parts)] + [float("inf")]
    return [pct(sorted(done - sent for sent, done in run["timed"] if bounds[k] <= sent < bounds[k + 1]), 99) for k in range(parts)]


def merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The drives of one side (board or bare) as one: latencies pooled, counts and CPU summed."""
    runs = [part["run"] for part in parts]
    out: dict[str, Any] = {key: sum(r[key] for r in runs) for key in
                           ("commands", "restarts", "lost", "out_of_order", "error_count", "bytes", "updates", "client_cpu", "client_play_cpu")}
    out["latencies"] = sorted(x for r in runs for x in r["latencies"])
    out["timed"] = [x for r in runs for x in r["timed"]]
    out["restart_windows"] = [x for r in runs for x in r["restart_windows"]]
    out["errors"] = [e for r in runs for e in r["errors"]][:10]
    out["samples"] = runs[0]["samples"]
    plays = [play_cpu(r) for r in runs]
    out["play"] = {key: sum(p[key] for p in plays) for key in ("server", "clients", "others")}
    out["wall"] = sum(part["wall"] for part in parts)
    out["machine"] = [sum(column) for column in zip(*(part["machine"] for part in parts), strict=False)]
    out["server"] = sum(part["server"] for part in parts)
    if len(runs) > 1:  # turns of board and bare: the p99 of each turn
        out["p99s"] = [pct(r["latencies"], 99) for r in runs]
    else:  # one sliced drive: the p99 of each third of it (nothing for a single drive)
        out["p99s"] = stretches(runs[0], 3) if len(runs[0]["windows"]) > 1 else []
    return out


def run_mode(args: argparse.Namespace, mode: str, tables: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"bench-{mode}-"))
    channel = f"bench-{secrets.token_hex(4)}"
    pg_admin = args.pg
    database_url = f"sqlite:///{work / 'battleboard.sqlite3'}"
    pg_name = None
    board: list[Server] = []
    bare_servers: list[Server] = []

    def sampler(group: list[Server]) -> Any:
        """The machine's CPU times and the CPU seconds of the servers of ``group`` (board or bare)."""
        return lambda: (cpu_times(), sum(cpu_seconds(s.proc.pid) for s in group))
    try:
        if mode == "cluster" or args.single_db == "postgresql":
            import psycopg

            pg_name = f"battleboard_bench_{secrets.token_hex(4)}"
            with psycopg.connect(pg_admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{pg_name}"')
                if args.pg_synchronous_commit != "on":  # a diagnosis: how much of the latency is the WAL flush
                    conn.execute(f'ALTER DATABASE "{pg_name}" SET synchronous_commit = {args.pg_synchronous_commit}')
            database_url = pg_admin.rsplit("/", 1)[0] + "/" + pg_name
        print(f"[{mode}] preparing {tables} tables ({tables * CLIENTS_PER_TABLE} clients)…", flush=True)
        specs = prepare_tables(database_url, tables)
        queue = args.redis if mode == "cluster" or args.single_queue == "redis" else None
        env = board_env(work, database_url, queue, channel)
        count = 2 if mode == "cluster" else 1
        for k in range(count):
            if mode == "single" and args.server == "threading":
                port = free_port()
                cmd = [sys.executable, "-m", "webapp.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--no-demo"]
                board.append(Server(cmd, env, work / f"server{k}.log", port))
            else:
                board.append(gunicorn("webapp.wsgi:app", env, work / f"server{k}.log"))
        urls = [s.url for s in board]
        load0 = Path("/proc/loadavg").read_text().split()[0]
        sessions0 = pg_sessions(pg_admin, pg_name)
        # the bare broadcast: same process count, server stack and message queue
        from webapp.config import load_config

        board_config = load_config()  # as the board's processes read it from this environment
        bare_env = {**os.environ, "PYTHONUNBUFFERED": "1", "BENCH_BARE_PING_INTERVAL": str(board_config.ping_interval),
                    "BENCH_BARE_PING_TIMEOUT": str(board_config.ping_timeout)}
        if mode == "cluster":  # the same message queue between the two bare processes
            bare_env.update(BENCH_BARE_REDIS=args.redis, BENCH_BARE_CHANNEL=channel + "-bare")
        reals: list[dict[str, Any]] = []
        bares: list[dict[str, Any]] = []
        size = 0

        def board_drive(seconds: float) -> dict[str, Any]:
            return measured(partial(drive, specs, urls, bare=False, size=0, seconds=seconds, think=args.think,
                                    procs=args.client_procs, sample=sampler(board)), board)

        def bare_drive(seconds: float) -> dict[str, Any]:
            return measured(partial(drive, specs, [s.url for s in bare_servers], bare=True, size=size, seconds=seconds,
                                    think=args.think, procs=args.client_procs, sample=sampler(bare_servers)), bare_servers)

        def start_bare(first: dict[str, Any]) -> int:
            """The bare servers, sending an update of the board's first drive, brought to its average size."""
            size = int(first["bytes"] / max(1, first["updates"]))
            if first["samples"] and not args.pad:
                # the largest real spectator update not above the run's average size (or the smallest)
                sizes = sorted((wire_size(p), i) for i, p in enumerate(first["samples"]))
                fitting = [i for n, i in sizes if n <= size]
                sample = dict(first["samples"][fitting[-1] if fitting else sizes[0][1]])
                short = size - wire_size(sample) - len(',"pad":""')
                if short > 0:  # brought to the average size of the run's updates (GM views are larger)
                    sample["pad"] = "x" * short
                (work / "sample.json").write_text(json.dumps(sample))
                bare_env["BENCH_BARE_PAYLOAD"] = str(work / "sample.json")
            for k in range(count):
                if mode == "single" and args.server == "threading":  # the embedded board's server: threads
                    port = free_port()
                    cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-bare-threading", str(port)]
                    bare_servers.append(Server(cmd, bare_env, work / f"bare{k}.log", port))
                else:
                    bare_servers.append(gunicorn("bench_load:bare_app()", bare_env, work / f"bare{k}.log",
                                                 ["--pythonpath", str(Path(__file__).parent)]))
            return size

        if args.slices:
            # Board and bare both connected at once, taking turns of a few seconds: a slow spell of
            # this VM's host (they last from seconds to minutes) falls on both alike. A short drive
            # of each first warms both up and gives the bare run its payload.
            size = start_bare(board_drive(WARM_UP_SECONDS)["run"])
            bare_drive(WARM_UP_SECONDS)
            refresh_specs(database_url, specs)
            count_slices = max(1, round(args.seconds / args.slices))
            step = 2 * (args.slices + SLICE_GAP)
            t0 = time.monotonic() + connect_time(2 * tables)
            board_windows = [(t0 + k * step, t0 + k * step + args.slices) for k in range(count_slices)]
            bare_windows = [(start + args.slices + SLICE_GAP, end + args.slices + SLICE_GAP) for start, end in board_windows]
            collect_board = launch(specs, urls, bare=False, size=0, windows=board_windows, think=args.think,
                                   procs=args.client_procs, sample=sampler(board))
            collect_bare = launch(specs, [s.url for s in bare_servers], bare=True, size=size, windows=bare_windows,
                                  think=args.think, procs=args.client_procs, sample=sampler(bare_servers))
            reals.append(windowed(collect_board()))
            bares.append(windowed(collect_bare()))
        for pair in range(0 if args.slices else args.pairs):  # board and bare take turns, so a slow spell of the machine hits both alike
            if pair:
                refresh_specs(database_url, specs)
            reals.append(board_drive(args.seconds))
            if pair == 0:
                size = start_bare(reals[0]["run"])
            bares.append(bare_drive(args.seconds))
        sessions = pg_sessions(pg_admin, pg_name) - sessions0
        rss = sum(rss_mb(s.proc.pid) for s in board)
        server_errors = sum(s.log.read_text().count("Traceback") for s in board)
        real, bare = merged(reals), merged(bares)
        zero = [0] * len(real["machine"])

        def others(side: dict[str, Any]) -> float:
            return max(0.0, busy_seconds(zero, side["machine"]) - side["server"] - side["client_cpu"]) / max(side["wall"], 1e-9)
        return {"mode": mode, "tables": tables, "clients": tables * CLIENTS_PER_TABLE,
                "seconds": round(real["wall"], 1) if args.slices else args.seconds * args.pairs,
                "pairs": 1 if args.slices else args.pairs, "slices": args.slices, "think": args.think, "real": real, "bare": bare, "size": size, "rss": rss,
                "play": real["play"], "bare_play": bare["play"], "pg_sessions": sessions,
                "server_cpu": real["server"] / max(real["wall"], 1e-9), "client_cpu": real["client_cpu"] / max(real["wall"], 1e-9),
                "others_cpu": others(real), "load": load0,
                "bare_server_cpu": bare["server"] / max(bare["wall"], 1e-9), "bare_others_cpu": others(bare),
                "steal_real": steal_percent(zero, real["machine"]), "steal_bare": steal_percent(zero, bare["machine"]),
                "server_errors": server_errors,
                "bare_size": int(bare["bytes"] / max(1, bare["updates"])),
                "bare_kind": "a spectator's real update padded to the average size" if "BENCH_BARE_PAYLOAD" in bare_env else "padding",
                "server": "gevent" if mode == "cluster" or args.server == "gevent" else "threading",
                "database": "PostgreSQL" if pg_name else "SQLite", "queue": bool(queue)}
    finally:
        for s in board + bare_servers:
            s.stop()
        if pg_name:
            import psycopg

            with psycopg.connect(pg_admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def report(r: dict[str, Any]) -> None:
    real, bare = r["real"], r["bare"]
    rl, bl = real["latencies"], bare["latencies"]
    p50, p99 = pct(rl, 50), pct(rl, 99)
    b50, b99 = pct(bl, 50), pct(bl, 99)
    print()
    turns = f" ({r['pairs']} turns of board then bare)" if r["pairs"] > 1 else ""
    if r["slices"]:
        turns = f" (board and bare both connected, in turns of {r['slices']:g} s)"
    print(f"== {r['mode']}: {r['tables']} tables, {r['clients']} clients, {r['seconds']} s{turns}, think {r['think']} s, server {r['server']},"
          f" {r['database']}{' + Redis' if r['queue'] else ''}")
    print(f"   commands: {real['commands']} ({real['commands'] / r['seconds']:.1f}/s), duels restarted: {real['restarts']}   update payload ~{r['size']} bytes")
    print(f"   latency command -> last client's update: p50 {p50:.1f} ms  p99 {p99:.1f} ms  max {max(rl, default=0) * 1000:.1f} ms")
    print(f"   lost updates: {real['lost']}   out of order: {real['out_of_order']}   client-side errors: {real['error_count']} {real['errors'][:3]}")
    print(f"   server: RSS {r['rss']:.0f} MB, CPU {r['server_cpu'] * 100:.0f}% of one core, tracebacks in log: {r['server_errors']}")
    print(f"   bare python-socketio broadcast of {r['bare_size']} bytes ({r['bare_kind']}): {bare['commands']} ({bare['commands'] / r['seconds']:.1f}/s), "
          f"p50 {b50:.1f} ms  p99 {b99:.1f} ms, lost {bare['lost']}, out of order {bare['out_of_order']}, server CPU {r['bare_server_cpu'] * 100:.0f}%")
    print(f"   ratio board/bare: p50 {p50 / b50:.2f}x  p99 {p99 / b99:.2f}x"
          + (f"   (p99 of each {'third' if r['slices'] else 'turn'}: {', '.join(f'{a / b:.2f}x' for a, b in zip(real['p99s'], bare['p99s'], strict=False))})"
             if real["p99s"] else ""))
    during, others = split_by_restarts(real["timed"], real["restart_windows"])
    restart_ms = sorted((end - start) * 1000 for start, end in real["restart_windows"])
    if restart_ms:
        print(f"   GM restarts of ended duels: {len(restart_ms)}, p50 {restart_ms[len(restart_ms) // 2]:.1f} ms each; commands under way meanwhile"
              f" (any table): {len(during)}, p50 {pct(during, 50):.1f} ms p99 {pct(during, 99):.1f} ms; the other {len(others)}:"
              f" p50 {pct(others, 50):.1f} ms p99 {pct(others, 99):.1f} ms")
    print(f"   CPU steal: {r['steal_real']:.1f}% during the board run, {r['steal_bare']:.1f}% during the bare run")
    print(f"   machine ({os.cpu_count()} CPUs): client processes {r['client_cpu'] * 100:.0f}% of a core, other programs"
          f" {r['others_cpu'] * 100:.0f}% of a core (bare run: {r['bare_others_cpu'] * 100:.0f}%), load average {r['load']} at the start")
    per = 1000 / max(1, real["commands"])
    bper = 1000 / max(1, bare["commands"])
    play, bare_play = r["play"], r["bare_play"]
    print(f"   CPU per command while playing: server processes {play['server'] * per:.2f} ms (bare {bare_play['server'] * bper:.2f} ms),"
          f" clients {play['clients'] * per:.2f} ms (bare {bare_play['clients'] * bper:.2f} ms),"
          f" other programs (database, queue, kernel) {play['others'] * per:.2f} ms (bare {bare_play['others'] * bper:.2f} ms)"
          + (f"; PostgreSQL connections opened: {r['pg_sessions']}" if r["database"] == "PostgreSQL" else ""))
    ok = p99 < 100 and real["lost"] == 0 and real["out_of_order"] == 0 and p99 <= 2 * b99
    print(f"   target (p99 < 100 ms, 0 lost, 0 out of order, p99 within 2x bare): {'MET' if ok else 'NOT MET'}")
    print("   json: " + json.dumps({"mode": r["mode"], "tables": r["tables"], "clients": r["clients"], "cmds_per_s": round(real["commands"] / r["seconds"], 1),
                                   "p50_ms": round(p50, 1), "p99_ms": round(p99, 1), "lost": real["lost"], "out_of_order": real["out_of_order"],
                                   "rss_mb": round(r["rss"]), "bare_p50_ms": round(b50, 1), "bare_p99_ms": round(b99, 1),
                                   "ratio_p99": round(p99 / b99, 2), "steal_pct": round(r["steal_real"], 1), "think_s": r["think"], "pairs": r["pairs"], "slices": r["slices"],
                                   "others_cpu_pct": round(r["others_cpu"] * 100),
                                   "bare_others_cpu_pct": round(r["bare_others_cpu"] * 100), "server": r["server"],
                                   "server_cpu_ms_per_cmd": round(play["server"] * per, 2), "bare_server_cpu_ms_per_cmd": round(bare_play["server"] * bper, 2)}),
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["single", "cluster", "both"], default="both")
    parser.add_argument("--tables", type=int, default=None, help="tables (default 20 single, 40 cluster)")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean pause of each table between commands (s), drawn between 0.5x and 1.5x")
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=1,
                        help="turns of a board drive then a bare drive, --seconds each; latencies pooled per side")
    parser.add_argument("--slices", type=float, default=0, metavar="S",
                        help="board and bare both connected, taking turns of S seconds until each has played --seconds"
                             " (instead of --pairs)")
    parser.add_argument("--server", choices=["gevent", "threading"], default="gevent", help="single mode's server")
    parser.add_argument("--pg", default=os.environ.get("BATTLEBOARD_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis", default=os.environ.get("BATTLEBOARD_TEST_REDIS", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--pad", action="store_true", help="bare payload: one padding string instead of a real update")
    parser.add_argument("--single-db", choices=["sqlite", "postgresql"], default="sqlite", help="single mode's database")
    parser.add_argument("--single-queue", choices=["none", "redis"], default="none", help="single mode's message queue")
    parser.add_argument("--pg-synchronous-commit", choices=["on", "off"], default="on",
                        help="cluster mode: PostgreSQL's synchronous_commit for the benchmark database (off only to diagnose)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (server logs)")
    parser.add_argument("--serve-bare-threading", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the script's own use
    args = parser.parse_args()
    if args.serve_bare_threading:
        serve_bare_threading(args.serve_bare_threading)
        return 0
    print(f"bench_load on {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    modes = ["single", "cluster"] if args.mode == "both" else [args.mode]
    for mode in modes:
        tables = args.tables or (20 if mode == "single" else 40)
        report(run_mode(args, mode, tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
