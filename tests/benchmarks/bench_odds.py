"""Benchmark of the odds (issue 17): the odds of one option in each system, and the Olympia simulation.

Run as ``python tests/benchmarks/bench_odds.py`` (pytest does not collect it)::

    python tests/benchmarks/bench_odds.py              # every system, 40 rounds of questions
    python tests/benchmarks/bench_odds.py --rounds 10  # quicker

For Phantom's Bane, Eclipse Phase, Battles&Balances and AD&D it asks, many times over, the question
a phone asks before a choice, from presets in several match-ups, and prints the p50 and p99 wall time
of one answer (target: p99 under 100 ms):

- Phantom's Bane: one of the four options against each of the foe's four options;
- Eclipse Phase: one attack as the attack builder sends it (single shot, burst, full automatic with
  extra damage dice, melee with two defences), answered in full (as the GM sees it), and one asked by
  a player who may not see the target's numbers;
- Battles&Balances: one attack or shot, with pools up to 5d12, a blessed 3d8 against a cursed shield,
  and one GM check and contest;
- AD&D: one melee attack of several blows with the chance to slay, and a charge.

Olympia: 1,000 simulated battles of 1,000 men a side, fought to the end from the deployment (target:
under 1 s), for armies of soldiers and for mixed armies; best and median of ``--repeat`` runs.
All on one core, in this process. The load average is printed: figures taken on a busy machine are high.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from rules import ScriptedDice, Viewer, engine, get_system  # noqa: E402

GM = Viewer.gm()
TARGET_MS = 100.0
OLYMPIA_TARGET_S = 1.0


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def timed(questions: list[Callable[[], Any]], rounds: int) -> tuple[list[float], list[float]]:
    """Milliseconds of each answer, wall and CPU, every question asked ``rounds`` times (after one warm-up each).

    The CPU time of this process is what one answer costs a core; the wall time adds whatever else the
    machine was doing meanwhile (on a busy machine it is the larger)."""
    for ask in questions:
        ask()
    wall, cpu = [], []
    for _ in range(rounds):
        for ask in questions:
            start, start_cpu = time.perf_counter(), time.process_time()
            ask()
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def phantoms_bane() -> list[Callable[[], Any]]:
    pb = get_system("phantoms-bane")
    presets = {p["name"]: p for p in pb.presets()}
    questions = []
    for a, b in (("Jharek", "Marsh Troll"), ("Orrin Thistledown", "Wild Monster"), ("Wren the Cutpurse", "Ashen Hound")):
        state, _ = pb.setup([{**presets[a], "id": "a", "side": "A"}, {**presets[b], "id": "b", "side": "B"}], {}, ScriptedDice([]))
        for option in ("press", "attack", "defend", "run_away"):
            questions.append(lambda s=state, o=option: engine.odds(pb, s, GM, {"type": "choose", "combatant": "a", "option": o}))
    return questions


def eclipse_phase() -> list[Callable[[], Any]]:
    ep = get_system("eclipse-phase")
    presets = {p["name"]: p for p in ep.presets()}
    questions = []
    pairs = (
        ("Habitat guard", "Exhuman stalker", 4, [{"weapon": 0, "mode": "single"}, {"weapon": 0, "mode": "burst"}, {"weapon": 0, "mode": "full_auto"}]),
        ("Security synth", "Jinx", 6, [{"weapon": 0, "mode": "full_auto", "called_shot": True}, {"weapon": 0, "mode": "single", "pool": "vigor"}]),
        ("Firewall sentinel", "Exhuman stalker", 1, [{"weapon": 1}, {"weapon": 1, "aggressive": True}]),
    )
    for attacker, target, gap, attacks in pairs:
        lineup = [{**presets[attacker], "id": "a", "side": "A", "x": 0, "y": 0, "initiative": 40},
                  {**presets[target], "id": "t", "side": "B", "x": gap, "y": 0, "initiative": 1}]
        state, _ = ep.setup(lineup, {}, ScriptedDice([6, 1]))
        assert state["active"] == "a"
        for attack in attacks:
            questions.append(lambda s=state, d=attack: engine.odds(ep, s, GM, {"type": "attack", "combatant": "a", "target": "t", **d}))
    # a player, who may not see the target's numbers: the own test and a row per defence target number
    lineup = [{**presets["Jinx"], "id": "a", "side": "A", "x": 0, "y": 0, "initiative": 40, "controller": "seat", "seat": "s1"},
              {**presets["Habitat guard"], "id": "t", "side": "B", "x": 5, "y": 0, "initiative": 1}]
    state, _ = ep.setup(lineup, {}, ScriptedDice([6, 1]))
    questions.append(lambda s=state: engine.odds(ep, s, Viewer.player("s1"), {"type": "attack", "combatant": "a", "target": "t", "weapon": 0}))
    return questions


def battles_balances() -> list[Callable[[], Any]]:
    bb = get_system("battles-and-balances")
    presets = {p["name"]: p for p in bb.presets()}
    names = list(presets)
    questions = []
    for a, b in ((names[0], names[1]), (names[2], names[3]), (names[7], names[4])):
        lineup = [{**presets[a], "id": "a", "side": "A", "x": 0, "y": 0}, {**presets[b], "id": "b", "side": "B", "x": 1, "y": 0}]
        state, _ = bb.setup(lineup, {}, ScriptedDice([]))
        state["actor"] = "a"
        questions.append(lambda s=state: engine.odds(bb, s, GM, {"type": "attack", "combatant": "a", "target": "b"}))
    big = {"name": "Giant", "id": "g", "side": "A", "x": 0, "y": 0, "size": 12, "agility": 5, "speed": 5, "muscle": 5,
           "stamina": 5, "focus": 5, "weapon": "Maul", "weapon_attack": 3, "weapon_die": 12}
    foe = {**big, "name": "Other giant", "id": "h", "side": "B", "x": 1}
    state, _ = bb.setup([big, foe], {}, ScriptedDice([]))
    questions.append(lambda s=state: engine.odds(bb, s, GM, {"type": "attack", "combatant": "g", "target": "h"}))
    # with blessings on: a blessed weapon (3d8 rolled twice, the better kept) against a cursed shield
    lucky = {"name": "Lucky", "id": "l", "side": "A", "x": 0, "y": 0, "size": 8, "agility": 3, "speed": 3, "stamina": 3,
             "weapon": "Sword", "weapon_attack": 1, "weapon_die": 8, "weapon_luck": "blessed"}
    unlucky = {**lucky, "name": "Unlucky", "id": "u", "side": "B", "x": 1, "weapon_luck": "normal", "shield_luck": "cursed"}
    blessed, _ = bb.setup([lucky, unlucky], {"blessings": True}, ScriptedDice([]))
    questions.append(lambda s=blessed: engine.odds(bb, s, GM, {"type": "attack", "combatant": "l", "target": "u"}))
    questions.append(lambda s=state: engine.odds(bb, s, GM, {"type": "check", "combatant": "g", "attribute": "muscle", "difficulty": "difficult"}))
    questions.append(lambda s=state: engine.odds(bb, s, GM, {"type": "contest", "a_combatant": "g", "a_attribute": "muscle", "b_combatant": "h", "b_attribute": "speed"}))
    return questions


def adnd() -> list[Callable[[], Any]]:
    system = get_system("adnd")
    presets = {p["name"]: p for p in system.presets()}
    questions = []
    for a, b, attacks in (("Fighter (5th level)", "Ogre", 2), ("Fighter (1st level)", "Bugbear", 1), ("Owlbear", "Fighter (5th level)", 3)):
        lineup = [{**presets[a], "id": "a", "side": "A", "attacks": attacks}, {**presets[b], "id": "b", "side": "B"}]
        state, _ = system.setup(lineup, {}, ScriptedDice([]))
        questions.append(lambda s=state: engine.odds(system, s, GM, {"combatant": "a", "kind": "melee", "target": "b"}))
        questions.append(lambda s=state: engine.odds(system, s, GM, {"combatant": "a", "kind": "charge", "target": "b"}))
    return questions


def olympia(repeat: int) -> None:
    system = get_system("olympia")
    armies = {
        "soldiers": ({"soldier": 999}, {"soldier": 999}),
        "mixed": ({"soldier": 600, "pikeman": 200, "archer": 199}, {"soldier": 500, "heavy_foot": 300, "archer": 199}),
    }
    for name, (a, b) in armies.items():
        lineup = [{"name": "Lord A", "id": "a", "side": "A", "leader": True, **a},
                  {"name": "Lady B", "id": "b", "side": "B", "leader": True, **b}]
        state, _ = system.setup(lineup, {}, ScriptedDice([]))
        times, cpu = [], []
        answer: dict[str, Any] = {}
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            answer = engine.odds(system, state, GM, {"battles": 1000})
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        wins = {o["key"]: f"{o['p']:.3f} [{o['interval'][0]:.3f}, {o['interval'][1]:.3f}]" for o in answer["outcomes"]}
        casualties = {e["key"]: round(e["value"], 1) for e in answer["expected"] if e["key"].startswith("casualties")}
        verdict = "ok" if min(times) < OLYMPIA_TARGET_S else "OVER"
        print(f"olympia {name:9s} 1,000 battles of 1,000 men a side: wall best {min(times):.2f} s, median "
              f"{statistics.median(times):.2f} s ({verdict}; target < {OLYMPIA_TARGET_S:g} s); CPU best "
              f"{min(cpu):.2f} s  {wins}  {casualties}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40, help="times each question is asked (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="Olympia simulations per army (default 3)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.rounds} rounds")
    for name, build in (("phantoms-bane", phantoms_bane), ("eclipse-phase", eclipse_phase),
                        ("battles-and-balances", battles_balances), ("adnd", adnd)):
        questions = build()
        wall, cpu = timed(questions, args.rounds)
        p50, p99 = percentile(wall, 0.50), percentile(wall, 0.99)
        verdict = "ok" if p99 < TARGET_MS else "OVER"
        print(f"{name:21s} {len(questions):2d} questions x {args.rounds}: wall p50 {p50:6.1f} ms, p99 {p99:6.1f} ms "
              f"({verdict}; target p99 < {TARGET_MS:g} ms); CPU p50 {percentile(cpu, 0.5):6.1f} ms, "
              f"p99 {percentile(cpu, 0.99):6.1f} ms")
    olympia(args.repeat)
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
