"""The command path alone: how long the authority takes to apply one declaration, and how long its
database write takes, on a throwaway PostgreSQL database (or SQLite), at a low rate.

Run as ``python tests/benchmarks/bench_command.py`` (pytest does not collect it)::

    python tests/benchmarks/bench_command.py --database postgresql --commands 1500
    python tests/benchmarks/bench_command.py --database postgresql --synchronous-commit off  # a diagnosis only

No sockets and no message queue: one Phantom's Bane table with six seats, its two fighters
choosing in turn, a pause of 10 ms between commands (so PostgreSQL is idle when each one arrives,
as at a real table). It prints the wall time of a declaration (``BattleService.declare``, which
includes the projections for the broadcast) and of its write alone (``store.write``, one statement
and its commit), p50, p90, p99 and max, and the CPU per declaration of this process. The process is
set up as ``battleboard serve`` sets up its own: the write-ahead log checkpointed by a thread of its
own, and the garbage collector settled (:func:`webapp.app.settle_memory`).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] * 1000


def run(database_url: str, commands: int, background_checkpoints: bool = True, chances_seconds: float = 0.0) -> None:
    from rules import Viewer, get_system
    from webapp.app import create_app, hub, settle_memory
    from webapp.db import checkpoint_in_background

    # the live chances off by default: their worker (up to a second of playouts after every update,
    # by design beside the command path) would otherwise share this process's interpreter with the
    # commands sent every 10 ms here, and its CPU would count as theirs (``--live-chances`` keeps it)
    app = create_app(database_url=database_url, async_mode="threading", secret_key="bench", message_queue=None,
                     chances_seconds=chances_seconds)
    service = hub(app).service
    if background_checkpoints and checkpoint_in_background(service.engine):  # as a serving process does
        print("SQLite: the write-ahead log is checkpointed by a thread of its own")
    settle_memory()  # as a serving process does once started: start-up's objects frozen, full collections on a timer
    presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
    sturdy = {"health": 30, "defence": 12, "armour_bonus": 8}
    table = service.create_table("Bench table", "phantoms-bane")
    seats = [service.join(table.join_code, f"Player {k + 1}")[1] for k in range(6)]
    service.set_lineup(table.id, [
        {**presets["Jharek"], **sturdy, "id": "jharek", "side": "A", "controller": "seat", "seat": seats[0].public_id},
        {**presets["Wild Monster"], **sturdy, "id": "monster", "side": "B", "controller": "seat", "seat": seats[1].public_id},
    ])
    started = service.start_battle(table.id)
    battle_id, version = started.battle_id, started.version
    store = service._store
    writes: list[float] = []
    real_write = store.write

    def timed_write(conn: Any, write: Any) -> Any:
        t = time.perf_counter()
        try:
            return real_write(conn, write)
        finally:
            writes.append(time.perf_counter() - t)

    store.write = timed_write  # type: ignore[method-assign]
    declares: list[float] = []
    cpu = 0.0
    for n in range(commands):
        who, seat = ("jharek", seats[0]) if n % 2 == 0 else ("monster", seats[1])
        t, c = time.perf_counter(), time.process_time()
        try:
            result = service.declare(battle_id, Viewer.player(seat.public_id), {"type": "choose", "combatant": who, "option": "attack"},
                                     expected_v=version, msg_id=f"c{n}", table_id=table.id)
            version = result.version
            declares.append(time.perf_counter() - t)
            cpu += time.process_time() - c
        except Exception as exc:  # noqa: BLE001
            if "ended" not in str(exc):
                raise
            restarted = service.start_battle(table.id)
            battle_id, version = restarted.battle_id, restarted.version
        time.sleep(0.01)
    engine_name = service.engine.dialect.name
    print(f"{engine_name}: {len(declares)} declarations")
    for label, values in (("declaration", declares), ("its write", writes)):
        print(f"   {label:12} p50 {pct(values, 50):.2f} ms  p90 {pct(values, 90):.2f} ms  p99 {pct(values, 99):.2f} ms  max {pct(values, 100):.2f} ms")
    print(f"   CPU per declaration (this process): {cpu / max(1, len(declares)) * 1000:.2f} ms")
    service.engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--commands", type=int, default=1500)
    parser.add_argument("--pg", default=os.environ.get("BATTLEBOARD_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="on", help="PostgreSQL (a diagnosis: the commit's flush)")
    parser.add_argument("--no-background-checkpoints", action="store_true",
                        help="SQLite (a diagnosis): leave the log's checkpoints to the commits, as before")
    parser.add_argument("--live-chances", type=float, default=0.0, metavar="SECONDS",
                        help="the live chances' time per update (0, the default: off, the command path alone)")
    args = parser.parse_args()
    if args.database == "sqlite":
        with tempfile.TemporaryDirectory() as work:
            run(f"sqlite:///{Path(work) / 'battleboard.sqlite3'}", args.commands, not args.no_background_checkpoints, args.live_chances)
        return 0
    import psycopg

    name = f"battleboard_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.pg, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        if args.synchronous_commit == "off":
            conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    try:
        print(f"synchronous_commit = {args.synchronous_commit}")
        run(args.pg.rsplit("/", 1)[0] + "/" + name, args.commands, chances_seconds=args.live_chances)
    finally:
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
