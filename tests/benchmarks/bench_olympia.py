"""Benchmark of Olympia mass battles: mixed armies of 1,000 / 10,000 / 100,000 men a side, fought to the end.

Run as ``python tests/benchmarks/bench_olympia.py`` (pytest does not collect it). For each size it
prints the best and median wall time of whole battles (setup, begin, fight to the break), the
rounds fought, the peak memory traced during one battle, and the CPU steal of the machine while the
figures were taken (from /proc/stat: high steal means the VM was starved and the run should be
repeated). Targets on one core: 10,000 a side under 0.5 s, 100,000 a side under 5 s. The "wide"
row fights the widest lineup allowed (32 nobles a side, each with every kind of troop).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rules.core import Viewer  # noqa: E402
from rules.dice import SeededDice  # noqa: E402
from rules.olympia import KINDS, Olympia  # noqa: E402

SYSTEM = Olympia()
GM = Viewer.gm()

#: share of each side's men per (noble, behind, kind); the rest of the men go to the first line
ARMY_A = [
    ("a1", 0, {"soldier": 0.30, "pikeman": 0.15, "knight": 0.05, "heavy_foot": 0.05}),
    ("a2", 0, {"light_foot": 0.10, "cavalier": 0.03, "paladin": 0.01, "catapult": 0.001}),
    ("a3", 1, {"archer": 0.12, "heavy_crossbowman": 0.04, "elite_archer": 0.03}),
    ("a4", 2, {"peasant": 0.10, "fanatic": 0.019}),
]
ARMY_B = [
    ("b1", 0, {"soldier": 0.25, "pikeman": 0.25, "skirmisher": 0.05}),
    ("b2", 0, {"heavy_foot": 0.08, "knight": 0.04, "angel": 0.01}),
    ("b3", 1, {"archer": 0.10, "light_crossbowman": 0.08, "horse_archer": 0.04}),
    ("b4", 3, {"worker": 0.08, "pirate": 0.02}),
]


def lineup(side: str, men: int, plan: list[tuple[str, int, dict[str, float]]]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    placed = 0
    for i, (cid, behind, shares) in enumerate(plan):
        troops = {kind: int(men * share) for kind, share in shares.items()}
        placed += sum(troops.values())
        entries.append({"id": cid, "name": f"Noble {cid}", "side": side, "behind": behind, "leader": i == 0, **troops})
    first_kind = next(iter(plan[0][2]))
    entries[0][first_kind] = int(entries[0][first_kind]) + men - placed  # exactly ``men`` men a side
    return entries


def wide_lineup(side: str, men: int) -> list[dict[str, object]]:
    """The widest lineup allowed: 32 nobles a side, each with every kind of troop."""
    per = men // (32 * len(KINDS))
    entries: list[dict[str, object]] = [
        {"id": f"{side}{i}", "name": f"Noble {side}{i}", "side": side, "behind": 0 if i < 24 else 1 + i % 3, **{k.key: per for k in KINDS}}
        for i in range(32)
    ]
    entries[0]["soldier"] = int(entries[0]["soldier"]) + men - per * 32 * len(KINDS)
    return entries


def battle(men: int, seed: str, wide: bool = False) -> tuple[float, int, str]:
    began = time.perf_counter()
    armies = wide_lineup("A", men) + wide_lineup("B", men) if wide else lineup("A", men, ARMY_A) + lineup("B", men, ARMY_B)
    state, _ = SYSTEM.setup(armies, {"structure_b": "castle"}, SeededDice(seed))
    state, _ = SYSTEM.apply(state, {"type": "begin"}, GM, SeededDice(seed + "/begin"))
    state, _ = SYSTEM.apply(state, {"type": "step", "by": "battle"}, GM, SeededDice(seed + "/fight"))
    elapsed = time.perf_counter() - began
    outcome = state["outcome"] or {}
    return elapsed, state["round"], str(outcome.get("reason", "unfinished"))


def cpu_times() -> list[int]:
    with open("/proc/stat") as stat:
        return [int(x) for x in stat.readline().split()[1:]]


def steal_share(before: list[int], after: list[int]) -> float:
    delta = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(delta)
    return 100.0 * delta[7] / total if total and len(delta) > 7 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wide", type=int, nargs="*", default=[100_000], help="sizes to fight with 32 nobles a side, each with every kind")
    args = parser.parse_args()
    battle(1_000, "warm-up")
    print(f"{'men a side':>11} {'best s':>8} {'median s':>9} {'rounds':>7} {'peak MiB':>9} {'steal %':>8}  outcome")
    runs = [(men, False) for men in args.sizes] + [(men, True) for men in args.wide]
    for men, wide in runs:
        before = cpu_times()
        times, rounds, reason = [], 0, ""
        for i in range(args.repeat):
            elapsed, rounds, reason = battle(men, f"bench-{men}-{i}", wide)
            times.append(elapsed)
        after = cpu_times()
        tracemalloc.start()
        battle(men, f"bench-{men}-0", wide)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        label = f"{men:,}" + (" wide" if wide else "")
        print(
            f"{label:>11} {min(times):>8.3f} {statistics.median(times):>9.3f} {rounds:>7} {peak:>9.1f} "
            f"{steal_share(before, after):>8.1f}  {reason}"
        )


if __name__ == "__main__":
    main()
