"""Benchmark of who's winning (issue 37): per system, playouts per second and the time to a ±3-point
estimate of its demo battle (rules/chances.py).

Run as ``python tests/benchmarks/bench_chances.py`` (pytest does not collect it)::

    python tests/benchmarks/bench_chances.py             # every system
    python tests/benchmarks/bench_chances.py adnd        # one

For each system with a demo: the chances at the start of the demo battle, as the live update works
them out (exact where the system can, else playouts until every chance is known within 3 points,
at most 1,100), timed; then 200 playouts from the same state for the playouts per second. Phantom's
Bane is exact: its figure is the time of the chain, the first time (a later update of the same duel
mostly looks its states up) and once more. All on one core, in this process; the load average is
printed, since figures taken on a busy machine are high.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from rules import chances as ch  # noqa: E402
from rules import engine  # noqa: E402
from rules.core import Viewer  # noqa: E402
from rules.dice import SeededDice  # noqa: E402
from rules.registry import available_systems  # noqa: E402
from webapp.chances_live import EXACT_SHARE  # noqa: E402

GM = Viewer.gm()
TIMED_PLAYOUTS = 200
#: the live update's time budget (BATTLEBOARD_CHANCES_SECONDS' default)
LIVE_BUDGET = 1.0


def demo_state(system: ch.RuleSystem) -> ch.State:
    demo = system.traits.demo
    assert demo is not None
    presets = {p["name"]: p for p in system.presets()}
    lineup = []
    for number, (preset, side, controller) in enumerate(demo.lineup, start=1):
        lineup.append({**presets[preset], "id": f"c{number}", "side": side, "controller": controller, "seat": None})
    state, _ = engine.start(system, lineup, {}, SeededDice("bench"))
    for declaration in demo.opening:
        state, _ = engine.play(system, state, declaration, GM, SeededDice("bench/opening"))
    return state


def main(argv: list[str]) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'system':22} {'method':9} {'playouts/s':>11} {'to ±3 points':>13} {'playouts':>9}  chances")
    for system in available_systems():
        if system.traits.demo is None or (argv and system.id not in argv):
            continue
        state = demo_state(system)
        began = time.perf_counter()
        found = ch.chances(system, state, seed="bench/1")
        took = time.perf_counter() - began
        module = ch.system_chances_module(system)
        start = ch.prepare(system, state, module)
        began = time.perf_counter()
        for i in range(TIMED_PLAYOUTS):
            ch.playout(system, start, ch.PlayoutDice(f"bench/{i}"), module)
        rate = TIMED_PLAYOUTS / (time.perf_counter() - began)
        shown = ", ".join(f"{s['side']} {s['p']:.1%}" for s in found.to_dict()["sides"])
        if found.draw:
            shown += f", draw {found.draw:.1%}"
        print(f"{system.id:22} {found.method:9} {rate:11.0f} {took:12.2f}s {found.n:9}  {shown}")
        if found.method == "exact":
            began = time.perf_counter()
            ch.chances(system, state, seed="bench/2")
            print(f"{'':22} {'again':9} {'':11} {time.perf_counter() - began:12.2f}s")
            # the first live update of such a duel in a fresh process: the chain gets a tenth of the
            # second, the playouts the rest (webapp/chances_live.py); the worker then goes on with the
            # chain while it has nothing else to do
            getattr(module, "_CHAINS", {}).clear()  # (the chains a process keeps: none yet)
            began = time.perf_counter()
            deadline, exact_deadline = began + LIVE_BUDGET, began + LIVE_BUDGET * EXACT_SHARE
            live = ch.chances(system, state, seed="bench/3", stop=lambda: time.perf_counter() > deadline,  # noqa: B023
                              exact_stop=lambda: time.perf_counter() > exact_deadline)  # noqa: B023 (called at once)
            took = time.perf_counter() - began
            within = max(ch.margin(live.n, s["p"]) for s in live.to_dict()["sides"]) if live.method == "playouts" else 0.0
            print(f"{'':22} {'first 1 s':9} {'':11} {took:12.2f}s {live.n:9}  {live.method}, within ±{within * 100:.1f} points")


if __name__ == "__main__":
    main(sys.argv[1:])
