"""Battles&Balances odds: each attack or shot the phone lists, and the GM's static checks and contests.

An attack is settled by the system's own ``resolve_melee`` / ``resolve_ranged`` (the part of
``apply`` that rolls; the AP bookkeeping and the turn clock after it roll nothing that changes the
blow) on copies of the two characters, with every dice path walked: pools by their totals (the
rules read only a pool's total), first the pools alone, grouped by what the blow is and its margin
(all the damage reads of them), then the damage die and the effect's coin face by face after one
set of pools for each group. Answers:
P(hit), the wounds the target takes (after armour, with persistent effects) as a distribution and
an average, P(the target is out of play); with the agility duel also P(struck back) and the wounds
the attacker takes.

A check or contest is three pool rolls a side. Each pool's kept total is enumerated through the
system's own ``pool_roll`` (so a blessed or cursed double roll is the system's); the three rolls
are independent, so their sum is the convolution of one roll with itself.

Everything here is read from the asking viewer's projection (only the GM's notes are hidden in this
system, and no roll reads them).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import factorial, gcd
from typing import Any

from rules import read
from rules.contract import RuleSystem
from rules.core import State, Viewer, clone
from rules.dice import Roll, notation
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.odds.common import (
    NotEnumerable,
    PathDice,
    asking_combatant,
    check_span,
    distribution,
    enumerate_dice,
    expectation,
    mean,
    probability,
    tally,
    total,
)

from .combat import pool_roll, resolve_melee, resolve_ranged, roller
from .data import THRESHOLD_VALUES, THRESHOLDS
from .view import actions_for

#: dice paths one attack may walk before it is refused as too large to enumerate
ATTACK_PATHS = 60_000


def _known_state(system: RuleSystem, state: State, viewer: Viewer) -> dict[str, Any]:
    """The state as the viewer's projection shows it (combatants by id, the options)."""
    view = system.view_for(state, viewer)
    return {
        "options": view["options"],
        "blocked": view.get("blocked", []),
        "combatants": {c["id"]: c for c in view["combatants"]},
        "order": [c["id"] for c in view["combatants"]],
    }


def attack_paths(known: Mapping[str, Any], kind: str, attacker_id: str, target_id: str) -> list[tuple[Fraction, tuple[bool, int, bool, int, bool]]]:
    """(hit, wounds to the target, target out, wounds to the attacker, attacker out) for every dice path."""
    base_attacker = known["combatants"][attacker_id]
    base_target = known["combatants"][target_id]
    resolve = resolve_melee if kind == "attack" else resolve_ranged

    def fight(dice: Any) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        attacker = clone(base_attacker)
        target = clone(base_target)
        state = {"options": known["options"], "combatants": {attacker_id: attacker, target_id: target}}
        return resolve(state, attacker, target, dice), attacker, target

    def run(dice: Any) -> tuple[bool, int, bool, int, bool]:
        events, attacker, target = fight(dice)
        hit = any(e["type"] in ("attack.hit", "shot.hit") for e in events)
        return (
            hit,
            target["wounds"] - base_target["wounds"],
            bool(target["defeated"]),
            attacker["wounds"] - base_attacker["wounds"],
            bool(attacker["defeated"]) and not base_attacker["defeated"],
        )

    # 1. the pools alone (the damage die and the coin shown at their lowest, not walked): what the
    #    blow is, hit, miss or struck back, and its margin
    def pools(dice: Any) -> tuple[tuple[tuple[int, ...], ...], tuple[str, int]]:
        stubbed = _PoolsOnly(dice)
        events, _attacker, _target = fight(stubbed)
        blow = next(e for e in events if e["type"] in BLOWS)
        return tuple(dice.faces), (blow["type"], blow["data"].get("margin", 0))

    classes: dict[Any, tuple[Fraction, tuple[tuple[int, ...], ...]]] = {}
    recorder = _Recorder()
    fight(recorder)
    if len(recorder.pools) <= 2 and not recorder.doubled:
        # one pool a side, each read only through its total: the blow depends only on the difference of
        # the two sums, so the pools are grouped by it (two convolutions instead of every pair of totals)
        sums = [_sum_ways(count, sides) for count, sides in recorder.pools]
        while len(sums) < 2:
            sums.append({0: (1, ())})
        (a_ways, a_all), (d_ways, d_all) = (_ways_total(x) for x in sums)
        counts: dict[int, list[Any]] = {}
        for sa, (na, fa) in a_ways.items():
            for sd, (nd, fd) in d_ways.items():
                entry = counts.get(sa - sd)
                if entry is None:
                    counts[sa - sd] = [na * nd, tuple(f for f in (fa, fd) if f)]
                else:
                    entry[0] += na * nd
        for diff, (n, representative) in counts.items():
            classes[diff] = (Fraction(n, a_all * d_all), representative)
    else:
        # a blessed or cursed pool rolls twice and keeps one: each side's kept total (as the blow's event
        # reports it) is walked alone, the other side's dice shown at their lowest (the sides roll
        # independently), and the blow is grouped by the difference of the two kept totals
        first = 2 if len(recorder.purposes) > 1 and "second roll" in recorder.purposes[1] else 1
        rest = len(recorder.purposes) - first

        def side(skip: int, take: int, key: str) -> dict[int, tuple[Fraction, tuple[tuple[int, ...], ...]]]:
            def run_side(dice: PathDice) -> tuple[tuple[tuple[int, ...], ...], int]:
                events, _attacker, _target = fight(_Segment(dice, skip, take))
                blow = next(e for e in events if e["type"] in BLOWS)
                return tuple(dice.faces), int(blow["data"][key])

            found: dict[int, tuple[Fraction, tuple[tuple[int, ...], ...]]] = {}
            for weight, (faces, kept) in enumerate_dice(run_side, group_sums=True, limit=ATTACK_PATHS):
                known_weight, representative = found.get(kept, (Fraction(0), faces))
                found[kept] = (known_weight + weight, representative)
            return found

        attack_side, defence_side = side(0, first, "attack"), side(first, rest, "defence")
        for ta, (wa, shown_a) in attack_side.items():
            for td, (wd, shown_d) in defence_side.items():
                known_weight, representative = classes.get(ta - td, (Fraction(0), shown_a + shown_d))
                classes[ta - td] = (known_weight + wa * wd, representative)
    # 2. the rest of the blow (damage die, coin) once per kind of blow and margin, after pools showing it
    paths: list[tuple[Fraction, tuple[bool, int, bool, int, bool]]] = []
    for weight, representative in classes.values():
        for w, result in enumerate_dice(run, prefix=representative, group_sums=True, limit=ATTACK_PATHS):
            paths.append((weight * w, result))
    return paths


class _Recorder:
    """Shows the lowest faces and notes the pool rolls (those before the damage)."""

    def __init__(self) -> None:
        self.pools: list[tuple[int, int]] = []
        self.purposes: list[str] = []
        self.doubled = False

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        if not _PoolsOnly._after_pools(purpose) and count:
            self.pools.append((count, sides))
            self.purposes.append(purpose)
            self.doubled = self.doubled or "second roll" in purpose
        return Roll(notation(count, sides, modifier), purpose, (1,) * count, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Any:
        return Roll(f"{low}-{high}", purpose, (low,))

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        raise NotEnumerable("no mass rolls here")

    def derive(self, label: str) -> _Recorder:
        return self


def _sum_ways(count: int, sides: int) -> dict[int, tuple[int, tuple[int, ...]]]:
    """Each sum of ``count`` dice of ``sides``: the number of ways to roll it and one set of faces."""
    check_span(count, sides)
    ways: dict[int, int] = {0: 1}
    for _ in range(count):
        nxt: dict[int, int] = {}
        for so_far, n in ways.items():
            for face in range(1, sides + 1):
                nxt[so_far + face] = nxt.get(so_far + face, 0) + n
        ways = nxt
    out = {}
    for total_, n in ways.items():
        extra, faces = total_ - count, []
        for _ in range(count):
            add = min(sides - 1, extra)
            faces.append(1 + add)
            extra -= add
        out[total_] = (n, tuple(faces))
    return out


def _ways_total(ways: dict[int, tuple[int, tuple[int, ...]]]) -> tuple[dict[int, tuple[int, tuple[int, ...]]], int]:
    return ways, sum(n for n, _ in ways.values())


class _Segment:
    """Walks the pool rolls ``skip`` to ``skip + take`` of a path; every other die shows its lowest face."""

    def __init__(self, path: PathDice, skip: int, take: int) -> None:
        self.path, self.skip, self.take = path, skip, take
        self.seen = 0

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        if count and not _PoolsOnly._after_pools(purpose):
            index = self.seen
            self.seen += 1
            if self.skip <= index < self.skip + self.take:
                return self.path.roll(count, sides, purpose, modifier)
        return Roll(notation(count, sides, modifier), purpose, (1,) * count, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Any:
        return Roll(f"{low}-{high}", purpose, (low,))

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        raise NotEnumerable("no mass rolls here")

    def derive(self, label: str) -> _Segment:
        return self


#: the events that say what a blow did (each carries its margin)
BLOWS = ("attack.hit", "attack.turned", "attack.missed", "shot.hit", "shot.missed")


class _PoolsOnly:
    """Walks the pool rolls of a path; the damage die and the effect's coin show their lowest face."""

    def __init__(self, path: Any) -> None:
        self.path = path

    @staticmethod
    def _after_pools(purpose: str) -> bool:
        return purpose.endswith(" damage") or "coin flip" in purpose

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        if self._after_pools(purpose):
            return Roll(notation(count, sides, modifier), purpose, (1,) * count, modifier)
        return self.path.roll(count, sides, purpose, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Any:
        return self.path.randint(low, high, purpose)

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        return self.path.integers(low, high, size, purpose)

    def derive(self, label: str) -> _PoolsOnly:
        return self


def attack_odds(known: Mapping[str, Any], kind: str, attacker_id: str, target_id: str) -> dict[str, Any]:
    try:
        paths = attack_paths(known, kind, attacker_id, target_id)
    except NotEnumerable as exc:
        raise IllegalDeclaration(str(exc)) from exc
    wounds = tally(paths, lambda r: r[1])
    target_name = known["combatants"][target_id]["name"]
    outcomes = [
        probability("hit", "It hits", total(paths, lambda r: r[0])),
        probability("wound", f"{target_name} takes at least one wound", total(paths, lambda r: r[1] > 0)),
        probability("defeat", f"{target_name} is out of play", total(paths, lambda r: r[2])),
    ]
    expected = [expectation("wounds", f"Wounds {target_name} takes (average)", mean(wounds))]
    distributions = [distribution("wounds", f"Wounds {target_name} takes (after armour)", wounds)]
    if known["options"].get("agility_duel") and kind == "attack":
        back = tally(paths, lambda r: r[3])
        outcomes.append(probability("struck_back", "You are struck back", total(paths, lambda r: r[3] > 0)))
        outcomes.append(probability("defeated", "You are out of play", total(paths, lambda r: r[4])))
        expected.append(expectation("wounds_taken", "Wounds you take (average)", mean(back)))
        distributions.append(distribution("wounds_taken", "Wounds you take", back))
    return {"outcomes": outcomes, "expected": expected, "distributions": distributions}


# --- checks and contests -------------------------------------------------------------------------------


def pool_weights(who: Mapping[str, Any]) -> dict[int, Fraction]:
    """The kept total of one pool roll of ``who`` (a roller of the system), through its own ``pool_roll``."""
    paths = enumerate_dice(
        lambda dice: pool_roll(dice, who["dice"], who["size"], "odds", who["luck"], who["bonus"])[0],
        group_sums=True,
    )
    return tally(paths, lambda r: r)


def _chance(weights: Mapping[int, Fraction], test: Any) -> Fraction:
    return sum((w for v, w in weights.items() if test(v)), Fraction(0))


def convolve(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    """The distribution of the sum of two independent whole numbers (in integers over a common denominator)."""
    (ia, da), (ib, db) = _integers(a), _integers(b)
    out: dict[int, int] = {}
    for x, p in ia.items():
        for y, q in ib.items():
            out[x + y] = out.get(x + y, 0) + p * q
    return {v: Fraction(n, da * db) for v, n in out.items()}


def _integers(weights: dict[int, Fraction]) -> tuple[dict[int, int], int]:
    denominator = 1
    for w in weights.values():
        denominator = denominator * w.denominator // gcd(denominator, w.denominator)
    return {v: int(w * denominator) for v, w in weights.items()}, denominator


def _chance_greater(a: dict[int, Fraction], b: dict[int, Fraction]) -> Fraction:
    """P(one draw of ``a`` is greater than one of ``b``)."""
    (ia, da), (ib, db) = _integers(a), _integers(b)
    below = 0
    total_ = 0
    values = sorted(set(ia) | set(ib))
    for v in values:  # b's weight strictly below each value of a
        total_ += ia.get(v, 0) * below
        below += ib.get(v, 0)
    return Fraction(total_, da * db)


def check_odds(known: Mapping[str, Any], declaration: Mapping[str, Any]) -> dict[str, Any]:
    who = roller(known, declaration, "")
    difficulty = declaration.get("difficulty", "routine")
    if difficulty == "custom":
        target = read.whole(declaration, "target", 1, 1000)
    elif difficulty in THRESHOLD_VALUES:
        target = THRESHOLD_VALUES[difficulty]
    else:
        raise InvalidDeclaration("difficulty must be one of " + ", ".join([*THRESHOLD_VALUES, "custom"]))
    one = pool_weights(who)
    three = convolve(convolve(one, one), one)
    outcomes = [probability("success", f"{who['name']} succeeds (total {target} or more)", _chance(three, lambda t: t >= target))]
    for name, value in THRESHOLDS:
        outcomes.append(probability(f"reach_{name}", f"The total reaches {name} ({value})", _chance(three, lambda t, v=value: t >= v)))
    return {
        "outcomes": outcomes,
        "expected": [expectation("total", "Total of the three rolls (average)", mean(three))],
        "distributions": [distribution("total", "Total of the three rolls", three)],
    }


def contest_odds(known: Mapping[str, Any], declaration: Mapping[str, Any]) -> dict[str, Any]:
    a = roller(known, declaration, "a_")
    b = roller(known, declaration, "b_")
    mode = declaration.get("mode") or known["options"]["contest_mode"]
    if mode not in ("summed", "best_of_three"):
        raise InvalidDeclaration("mode must be summed or best_of_three")
    pa, pb = pool_weights(a), pool_weights(b)
    if mode == "summed":
        sa = convolve(convolve(pa, pa), pa)
        sb = convolve(convolve(pb, pb), pb)
        a_wins, b_wins = _chance_greater(sa, sb), _chance_greater(sb, sa)
    else:
        win, lose = _chance_greater(pa, pb), _chance_greater(pb, pa)
        tie = 1 - win - lose
        a_wins, b_wins = _best_of_three(win, lose, tie)
    return {
        "outcomes": [
            probability("a_wins", f"{a['name']} wins", a_wins),
            probability("b_wins", f"{b['name']} wins", b_wins),
            probability("draw", "A draw", 1 - a_wins - b_wins),
        ],
        "expected": [],
        "distributions": [],
    }


def _best_of_three(win: Fraction, lose: Fraction, tie: Fraction) -> tuple[Fraction, Fraction]:
    """P(more of three independent rolls won than lost), each way."""
    a = b = Fraction(0)
    for won in range(4):
        for lost in range(4 - won):
            tied = 3 - won - lost
            ways = factorial(3) // (factorial(won) * factorial(lost) * factorial(tied))
            weight = ways * win**won * lose**lost * tie**tied
            if won > lost:
                a += weight
            elif lost > won:
                b += weight
    return a, b


# --- the question ------------------------------------------------------------------------------------


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Mapping[str, Any]) -> dict[str, Any]:
    kind = declaration.get("type")
    if kind in ("check", "contest"):
        if not viewer.is_gm:
            raise NotPermitted("checks and contests are the GM's tools")
        known = _known_state(system, state, viewer)
        try:
            answer = check_odds(known, declaration) if kind == "check" else contest_odds(known, declaration)
        except NotEnumerable as exc:
            raise IllegalDeclaration(str(exc)) from exc
        return {"system": system.id, "method": "exact", "type": kind, **answer}
    cid = asking_combatant(state, viewer, declaration, doing="attack", over="the battle is not running")
    known = _known_state(system, state, viewer)
    c = known["combatants"][cid]
    if kind in ("attack", "shoot"):
        target = declaration.get("target")
        if not isinstance(target, str) or target not in known["combatants"] or target == cid:
            raise InvalidDeclaration("the odds of an attack need its target")
        if known["combatants"][target]["defeated"]:
            raise IllegalDeclaration(f"{known['combatants'][target]['name']} is already out of play")
        if kind == "shoot" and not c["launcher"]:
            raise IllegalDeclaration(f"{c['name']} has no missile weapon")
        wanted = [{"type": kind, "target": target, "label": f"{kind.capitalize()} {known['combatants'][target]['name']}"}]
    elif kind is None:
        # every attack and shot the phone would list for this character now
        wanted = [a for a in actions_for(known, c, viewer) if a["type"] in ("attack", "shoot")]
    else:
        raise InvalidDeclaration("odds are given for attack, shoot, check and contest")
    choices = []
    for item in wanted:
        answer = attack_odds(known, item["type"], cid, item["target"])
        choices.append({"key": f"{item['type']}:{item['target']}", "type": item["type"], "target": item["target"], "label": item["label"], **answer})
    return {
        "system": system.id,
        "combatant": cid,
        "method": "exact",
        "choices": choices,
        "outcomes": choices[0]["outcomes"] if len(choices) == 1 else [],
    }
