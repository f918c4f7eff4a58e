"""Who's winning a Phantom's Bane duel, exactly (rules/chances.py): a chain over both duellists'
numbers and the turn.

A duel is small: what the rest of it depends on is, for each duellist, Health, Offence, Defence,
the bonuses left on weapon and armour, and the turn (weakening reads it), with the skills and the
escape ruling fixed. Each turn both sides choose as the computer's steady temperament would
(computer.py: the best option seven times in ten, the second 22, the third 8, never a run it scores
below nothing), then the turn is settled (turn.py) over every combination of dice: the four combat
dice matter only by the two differences offence die minus the other's defence die (a difference of
five is a 6 against a 1: a penetration or a counter, with its one or two 1-3 dice), the escape rolls
by whether 2d6 + Defence + Skill beats 2d6 + Offence + Skill. Every turn either someone falls, gets
away or the turn count grows, and weakening takes something each turn once it outnumbers Health,
so the chain ends; it is worked out backwards with each state's value kept.

The tests check each turn's distribution against the system's own resolution over every face, and
whole small duels against an enumeration through the system's ``apply``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from rules.contract import RuleSystem
from rules.core import State

from .computer import computer_scores, escape_chance
from .data import OPTIONS
from .ratings import capped, half

#: a duellist as the chain keeps it: health, offence, defence, skill, weapon bonus, armour bonus,
#: whether weapon and armour are natural (never destroyed), health_max
Fighter = tuple[int, int, int, int, int, int, bool, bool, int]
#: a state of the chain: both duellists (in the duel's order) and the turn
Key = tuple[Fighter, Fighter, int]
#: (A wins, B wins, draw, nobody: an escape)
Value = tuple[float, float, float, float]
#: the duel's sure-to-end bound: states worked out before the exact answer gives up (None: playouts)
MAX_STATES = 200_000
#: how the computer's 1-100 roll picks: the best option, the second, the third
PICK_WEIGHTS = (0.70, 0.22, 0.08)
#: the sum of one 1-3 die, and of two
D3 = {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}
TWO_D3 = {2: 1 / 9, 3: 2 / 9, 4: 3 / 9, 5: 2 / 9, 6: 1 / 9}
#: offence die minus the other's defence die, and its chance
DIFFERENCES = {d: (6 - abs(d)) / 36 for d in range(-5, 6)}


def _fighter(c: Mapping[str, Any]) -> Fighter:
    weapon, armour = c.get("weapon"), c.get("armour")
    return (int(c["health"]), int(c["offence"]), int(c["defence"]), int(c.get("skill", 0)),
            int(weapon["bonus"]) if weapon else 0, int(armour["bonus"]) if armour else 0,
            bool(weapon and weapon.get("natural")), bool(armour and armour.get("natural")),
            int(c.get("health_max", c["health"])))


def key_of(state: Mapping[str, Any]) -> Key:
    a, b = state["order"]
    cs = state["combatants"]
    return _fighter(cs[a]), _fighter(cs[b]), int(state["turn"])


def _as_seen(f: Fighter, cid: str) -> dict[str, Any]:
    """A duellist as the computer's side sees it (view.py's projection, the parts its scores read)."""
    health, offence, defence, skill, weapon, armour, _wn, _an, health_max = f
    return {"id": cid, "health": health, "offence": offence, "defence": defence, "skill": skill,
            "health_max": health_max, "temperament": "steady",
            "weapon": {"bonus": weapon, "effective": capped(weapon, offence)} if weapon else None,
            "armour": {"bonus": armour, "effective": capped(armour, defence)} if armour else None}


@lru_cache(maxsize=65536)
def pick_chances(me: Fighter, foe: Fighter) -> dict[str, float]:
    """The chance of each option the computer's steady temperament picks for ``me`` (computer.py's
    :func:`~.computer.computer_pick`, its 1-100 roll worked out)."""
    view = {"order": ["me", "foe"], "combatants": {"me": _as_seen(me, "me"), "foe": _as_seen(foe, "foe")}}
    scores = computer_scores(view, "me")
    ranked = sorted(OPTIONS, key=lambda o: (-scores[o], OPTIONS.index(o)))
    chances: dict[str, float] = {}
    for pick, weight in zip(ranked, PICK_WEIGHTS, strict=False):
        if pick == "run_away" and scores["run_away"] < 0:
            pick = ranked[0] if ranked[0] != "run_away" else ranked[1]
        chances[pick] = chances.get(pick, 0.0) + weight
    return chances


def _stance(f: Fighter, option: str) -> tuple[int, int]:
    """Offence and defence totals without the dice (turn.py, the four combat dice)."""
    health, offence, defence, _skill, weapon, armour, *_ = f
    off_mod = half(offence) if option == "press" else -half(offence) if option == "defend" else 0
    def_mod = -half(defence) if option == "press" else half(defence) if option == "defend" else 0
    return offence + off_mod + capped(weapon, offence), defence + def_mod + capped(armour, defence)


def _after(f: Fighter, damage: int, penetration: int, counter: int) -> Fighter:
    """A duellist after a turn's blows: health, then wear (armour by penetrations, weapon by counters)."""
    health, offence, defence, skill, weapon, armour, weapon_natural, armour_natural, health_max = f
    health -= damage
    if penetration and armour > 0:
        armour = max(0, armour - penetration)
    if counter and weapon > 0:
        weapon = max(0, weapon - counter)
    return (health, offence, defence, skill, weapon, armour, weapon_natural, armour_natural, health_max)


def _weaken(f: Fighter, turn: int) -> Fighter:
    health, offence, defence, skill, weapon, armour, weapon_natural, armour_natural, health_max = f
    if turn <= health:
        return f
    if defence > 0:
        defence -= 1
    elif offence > 0:
        offence -= 1
    else:
        health -= 1
    return (health, offence, defence, skill, weapon, armour, weapon_natural, armour_natural, health_max)


def _extra(difference: int, doubled: bool) -> dict[int, float]:
    """The extra damage of a penetration or counter (a difference of five): one 1-3 die, two if doubled."""
    return TWO_D3 if doubled else D3


#: the value of a duel that ends in an escape
ESCAPED: Value = (0.0, 0.0, 0.0, 1.0)
#: what ends a turn: ("next", key) or ("end", value)
Outcome = tuple[str, Any]


@lru_cache(maxsize=4096)
def _exchange(offence: int, defence: int, press: bool, defend: bool) -> tuple[tuple[tuple[int, int, int], float], ...]:
    """One direction of the blows: the attacker's offence die against the defender's defence die, as
    (damage to the defender with its penetration, that penetration, the defender's counter on the
    attacker) with its chance. ``press``: the attacker presses (its penetration doubled);
    ``defend``: the defender defends (its counter doubled)."""
    spread: dict[tuple[int, int, int], float] = {}
    for d, p in DIFFERENCES.items():
        hits = max(0, offence + d - defence)
        if d == 5:  # a 6 against a 1: the attacker gets through
            for extra, q in _extra(d, press).items():
                key = (hits + extra, extra, 0)
                spread[key] = spread.get(key, 0.0) + p * q
        elif d == -5:  # a 1 against a 6: the defender counters
            for extra, q in _extra(d, defend).items():
                key = (hits, 0, extra)
                spread[key] = spread.get(key, 0.0) + p * q
        else:
            key = (hits, 0, 0)
            spread[key] = spread.get(key, 0.0) + p
    return tuple(spread.items())


def turn_outcomes(key: Key, chosen: tuple[str, str], escape_possible: bool) -> list[tuple[float, Outcome]]:
    """Every way one turn goes from ``key`` with both choices ``chosen``, with its chance."""
    a, b, turn = key
    outcomes: list[tuple[float, Outcome]] = []
    effective = list(chosen)
    fight = 1.0
    runners = [i for i in (0, 1) if chosen[i] == "run_away"]
    if runners:
        if escape_possible:
            if len(runners) == 2 or chosen[1 - runners[0]] == "defend":
                return [(1.0, ("end", ESCAPED))]
            runner, other = (a, b) if runners[0] == 0 else (b, a)
            away = escape_chance(runner[2] + runner[3], other[1] + other[3])
            if away:
                outcomes.append((away, ("end", ESCAPED)))
            fight = 1.0 - away
        for i in runners:
            effective[i] = "attack"
        if fight <= 0:
            return outcomes
    a_off, a_def = _stance(a, effective[0])
    b_off, b_def = _stance(b, effective[1])
    # A's blow at B (and B's counter on A), then B's blow at A (and A's counter on B)
    at_b = _exchange(a_off, b_def, effective[0] == "press", effective[1] == "defend")
    at_a = _exchange(b_off, a_def, effective[1] == "press", effective[0] == "defend")
    # wear needs a bonus left to wear: without one, a penetration or counter is only damage
    a_wears, b_wears = (a[5] > 0, a[4] > 0), (b[5] > 0, b[4] > 0)
    for (damage_b, pen_b, counter_a), p1 in at_b:
        for (damage_a, pen_a, counter_b), p2 in at_a:
            blows = (damage_a + counter_a, pen_a if a_wears[0] else 0, counter_a if a_wears[1] else 0,
                     damage_b + counter_b, pen_b if b_wears[0] else 0, counter_b if b_wears[1] else 0)
            outcomes.append((fight * p1 * p2, ("blows", blows)))
    return outcomes


def _settle(a: Fighter, b: Fighter, turn: int) -> Outcome:
    """Defeat, or weakening when both still stand, then the next turn."""
    if a[0] > 0 and b[0] > 0:
        a, b = _weaken(a, turn), _weaken(b, turn)
    a_down, b_down = a[0] <= 0, b[0] <= 0
    if a_down and b_down:
        return ("end", (0.0, 0.0, 1.0, 0.0))
    if a_down:
        return ("end", (0.0, 1.0, 0.0, 0.0))
    if b_down:
        return ("end", (1.0, 0.0, 0.0, 0.0))
    return ("next", canonical((a, b, turn + 1)))


def canonical(key: Key) -> Key:
    """The same state of the chain with the turn counted only as far as it matters: the turn only
    grows and Health only falls, so once the turn outnumbers both Healths it always will (weakening
    reads nothing else of it), and every later turn is the same to the chain."""
    a, b, turn = key
    return (a, b, min(turn, max(a[0], b[0]) + 1))


class Chain:
    """The duel's chain from one escape ruling, each state's value kept once worked out."""

    def __init__(self, escape_possible: bool, limit: int = MAX_STATES) -> None:
        self.escape_possible = escape_possible
        self.values: dict[Key, Value] = {}
        self.limit = limit

    def value(self, start: Key, stop: Callable[[], bool] | None = None) -> Value | None:
        """(A wins, B wins, draw, escape) from the start of a turn at ``start``; None past the limit
        or once ``stop`` answers True (asked every ten states; what was worked out is kept)."""
        # worked out depth first without recursion: a state is finished once all its successors are
        stack: list[Key] = [start]
        pending: dict[Key, list[tuple[float, Outcome]]] = {}
        visited = 0
        while stack:
            key = stack[-1]
            if key in self.values:
                stack.pop()
                continue
            if key not in pending:
                if len(self.values) + len(pending) > self.limit:
                    return None
                visited += 1
                if stop is not None and visited % 10 == 0 and stop():
                    return None
                pending[key] = self.transitions(key)
            missing = [nxt for _p, (kind, nxt) in pending[key] if kind == "next" and nxt not in self.values]
            if missing:
                stack.extend(dict.fromkeys(missing))
                continue
            total = [0.0, 0.0, 0.0, 0.0]
            for p, (kind, what) in pending.pop(key):
                v = what if kind == "end" else self.values[what]
                for i in range(4):
                    total[i] += p * v[i]
            self.values[key] = (total[0], total[1], total[2], total[3])
            stack.pop()
        return self.values[start]

    def transitions(self, key: Key) -> list[tuple[float, Outcome]]:
        """Every way the turn at ``key`` goes, both choices weighted as the computer picks them."""
        a, b, turn = key
        merged: dict[Any, float] = {}
        for option_a, pa in pick_chances(a, b).items():
            for option_b, pb in pick_chances(b, a).items():
                weight = pa * pb
                for p, outcome in turn_outcomes(key, (option_a, option_b), self.escape_possible):
                    merged[outcome] = merged.get(outcome, 0.0) + weight * p
        settled: dict[Outcome, float] = {}
        after_a: dict[tuple[int, int, int], Fighter] = {}
        after_b: dict[tuple[int, int, int], Fighter] = {}
        for (kind, what), p in merged.items():
            if kind == "blows":
                hurt_a, hurt_b = what[:3], what[3:]
                new_a = after_a.get(hurt_a)
                if new_a is None:
                    new_a = after_a[hurt_a] = _after(a, what[0], what[1], what[2])
                new_b = after_b.get(hurt_b)
                if new_b is None:
                    new_b = after_b[hurt_b] = _after(b, what[3], what[4], what[5])
                outcome = _settle(new_a, new_b, turn)
            else:
                outcome = (kind, what)
            settled[outcome] = settled.get(outcome, 0.0) + p
        return [(p, outcome) for outcome, p in settled.items()]


#: the chains worked out lately, by what stays the same through a duel (the escape ruling, the
#: skills, the maximum Health, whose gear is natural): a duel's later states are mostly worked out
#: already when the first was, so each update after the first is a look-up
_CHAINS: OrderedDict[Any, Chain] = OrderedDict()
_KEPT_CHAINS = 16


def chain_for(state: Mapping[str, Any]) -> Chain:
    a, b, _turn = key_of(state)
    escape = bool(state.get("escape_possible", True))
    fixed = (escape, a[3], a[6], a[7], a[8], b[3], b[6], b[7], b[8])
    chain = _CHAINS.pop(fixed, None) or Chain(escape)
    _CHAINS[fixed] = chain
    while len(_CHAINS) > _KEPT_CHAINS:
        _CHAINS.popitem(last=False)
    return chain


def exact_value(state: Mapping[str, Any], stop: Callable[[], bool] | None = None) -> Value | None:
    """(A wins, B wins, draw, escape) of a duel under way, from the start of its current turn (the
    choices already made this turn are not looked at: nobody may see them yet)."""
    return chain_for(state).value(canonical(key_of(state)), stop)


def exact(system: RuleSystem, state: State, stop: Callable[[], bool] | None = None
          ) -> tuple[dict[str, float], float, float] | None:
    """Each side's chance to win, the draw's and the escape's, worked out by the chain (None if the
    duel is too long for it, or ``stop`` said so first: the playouts answer instead)."""
    if state.get("status") != "active":
        return None
    found = exact_value(state, stop)
    if found is None:
        return None
    a, b = state["order"]
    sides = {state["combatants"][a]["side"]: found[0], state["combatants"][b]["side"]: found[1]}
    return sides, found[2], found[3]


def prepare(system: RuleSystem, state: State) -> State:
    """For playouts (when the chain is too long): steady temperaments, and this turn's choices unmade."""
    for c in state["combatants"].values():
        c["temperament"] = "steady"
    state["choices"] = {cid: None for cid in state["order"]}
    state["chosen_by"] = {cid: None for cid in state["order"]}
    return state


def nudge(system: RuleSystem, state: State) -> Mapping[str, Any] | None:
    """With the computer on both sides, the GM settles the turn (``force_resolve``)."""
    return {"type": "force_resolve"}
