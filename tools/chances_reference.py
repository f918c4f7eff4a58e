"""The reference the chances' accuracy test compares with: 20,000 playouts for each state of a test set.

The test set, per system that estimates its chances by playouts (rules/chances.py): the start of its
demo battle, two states further into that battle (the computer playing every side with seeded dice),
and the start of duels between its presets (each preset against the next, as long as the system
takes two combatants). Run it offline, then commit what it writes:

    python tools/chances_reference.py            # every system, writes tests/rules/data/chances_reference/<system>.json
    python tools/chances_reference.py adnd       # only one system (one file per system)

It takes a while (minutes per system): the test itself never plays this many.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rules import chances as ch  # noqa: E402
from rules import engine  # noqa: E402
from rules.contract import RuleSystem  # noqa: E402
from rules.core import State, Viewer, clone  # noqa: E402
from rules.dice import SeededDice  # noqa: E402
from rules.registry import available_systems  # noqa: E402

OUT = ROOT / "tests" / "rules" / "data" / "chances_reference"
REFERENCE_PLAYOUTS = 20_000
#: the states taken from along the demo battle, and the preset duels
ALONG = 2
DUELS = 2
SEED = "chances-reference"
GM = Viewer.gm()


def lineup(system: RuleSystem, entries: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    presets = {p["name"]: p for p in system.presets()}
    made = []
    for number, (preset, side, controller) in enumerate(entries, start=1):
        entry = dict(presets[preset])
        entry.update(id=f"c{number}", side=side, controller=controller, seat=None)
        made.append(entry)
    return made


def started(system: RuleSystem, entries: list[tuple[str, str, str]], opening: Any = ()) -> State:
    state, _ = engine.start(system, lineup(system, entries), {}, SeededDice(SEED))
    for declaration in opening:
        state, _ = engine.play(system, state, declaration, GM, SeededDice(SEED + "/opening"))
    return state


def along(system: RuleSystem, start: State, count: int) -> list[State]:
    """``count`` states spread along one battle from ``start``, the computer playing every side (the
    first of a few seeded battles that lasts long enough)."""
    found: list[State] = []
    for attempt in range(8):
        found = _along(system, start, count, f"{SEED}/along/{attempt}")
        if len(found) >= count:
            break
    return found


def _along(system: RuleSystem, start: State, count: int, seed: str) -> list[State]:
    module = ch.system_chances_module(system)
    state = ch.prepare(system, start, module)
    dice = ch.PlayoutDice(seed)
    seen: list[State] = []
    declaration: Any = None
    events: list[Any] = []
    for _ in range(ch.PLAYOUT_STEPS):
        if ch.final_result(system, state, module) is not None:
            break
        choice = system.computer_choice(state, declaration, events)
        if choice is None:
            choice = module.nudge(system, state) if module is not None and hasattr(module, "nudge") else None
        if choice is not None and ("type", "declare") not in choice.items() and (
                system.is_checkpoint(state) or choice.get("type") in ("roll_initiative", "force_resolve")):
            seen.append(clone(state))
        if choice is None:
            break
        state, events = system.apply(state, choice, GM, dice)
        declaration = choice
    if module is not None and hasattr(module, "playout") and len(seen) <= 1:  # a battle fought in one go
        state = clone(start)
        step = getattr(system, "step_battle", None)
        for _ in range(8):
            if step is None or state.get("status") != "active":
                break
            step(state, {"type": "step", "by": "round"}, GM, dice)
            if state.get("status") == "active":
                seen.append(clone(state))
    seen = [s for s in seen[1:] if ch.final_result(system, s, module) is None]
    if len(seen) <= count:
        return seen
    return [seen[i * len(seen) // (count + 1)] for i in range(1, count + 1)]


def test_set(system: RuleSystem) -> list[tuple[str, State]]:
    demo = system.traits.demo
    states: list[tuple[str, State]] = []
    if demo is not None:
        start = started(system, list(demo.lineup), demo.opening)
        states.append(("demo start", start))
        states += [(f"demo, later ({i + 1})", s) for i, s in enumerate(along(system, start, ALONG))]
    names = [p["name"] for p in system.presets()]
    for i in range(min(DUELS, len(names) - 1)):
        entries = [(names[i], "A", "gm"), (names[i + 1], "B", "gm")]
        try:
            state = started(system, entries, demo.opening if demo else ())
        except Exception as exc:  # a pair the system does not take as a duel
            print(f"  {system.id}: {names[i]} against {names[i + 1]} left out ({exc})", file=sys.stderr)
            continue
        states.append((f"{names[i]} against {names[i + 1]}", state))
    return states


def main(argv: list[str]) -> None:
    for system in available_systems():
        if argv and system.id not in argv:
            continue
        module = ch.system_chances_module(system)
        if module is not None and hasattr(module, "exact"):
            continue  # worked out exactly: checked against an enumeration instead
        if system.traits.demo is None:
            continue
        entries = []
        for label, state in test_set(system):
            began = time.perf_counter()
            reference = ch.chances(system, state, seed=f"{SEED}/reference", playouts=REFERENCE_PLAYOUTS, precision=0)
            took = time.perf_counter() - began
            print(f"{system.id}: {label}: {reference.to_dict()} ({took:.0f} s)", flush=True)
            entries.append({"label": label, "state": state, "reference": reference.to_dict()})
            OUT.mkdir(parents=True, exist_ok=True)  # written after each state: a long run keeps what it did
            (OUT / f"{system.id}.json").write_text(json.dumps(entries, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
