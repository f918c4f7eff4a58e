"""Phantom's Bane odds: each option of one combatant against each option the foe might take, exactly.

The turn is settled by the system's own ``apply`` (a GM's forced resolution of a state where both
choices are set), from a state rebuilt out of the asking viewer's own projection: the foe's pending
choice, the computer's temperament and (for anyone but the GM) the hidden "running away cannot
succeed" ruling never enter it. The dice are enumerated, grouped where the rules read only a
difference or a total:

- the escape rolls (two 2d6) by their totals; once settled, a failed escape leaves the same fight
  whichever faces failed, so the blows are enumerated once after one failing set of faces;
- the four combat dice by the two differences that matter: attacker's offence die against the
  defender's defence die, each way (a 6 against a 1 is the only difference of five, so the
  penetrations and counters keep their own class); the other differences of each exchange are
  grouped again by the damage they do, as the turn's own record reports it (the rest of the turn
  reads only the damage each side takes);
- the 1-3 dice of penetrations and counters face by face.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from rules.contract import RuleSystem
from rules.core import State, Viewer, clone
from rules.dice import ScriptedDice
from rules.errors import InvalidDeclaration
from rules.odds.common import (
    PathDice,
    asking_combatant,
    collapse,
    distribution,
    enumerate_dice,
    expectation,
    mean,
    probability,
    tally,
    total,
)

from .turn import resolve_turn

OPTIONS = ("press", "attack", "defend", "run_away")
LABELS = {"press": "press", "attack": "attack", "defend": "defend", "run_away": "run away"}
GM = Viewer.gm()
#: keys of a projected combatant that are no part of a combatant's state (gear is rebuilt below)
PROJECTION_ONLY = frozenset({"weapon", "armour", "choice", "weapon_label", "armour_label", "has_chosen", "mine", "id"})


def _pair_classes() -> list[tuple[tuple[int, int], Fraction]]:
    """``(offence die, defence die)`` representatives of each difference, with the difference's probability."""
    classes = []
    for diff in range(-5, 6):
        pair = next(
            (o, d)
            for o in (2, 3, 4, 5, 6, 1)
            for d in (2, 3, 4, 5, 1, 6)
            if o - d == diff and (o, d) not in ((6, 1), (1, 6)) or o - d == diff and abs(diff) == 5
        )
        classes.append((pair, Fraction(6 - abs(diff), 36)))
    return classes


PAIRS = _pair_classes()


def hypothetical_state(view: Mapping[str, Any], me: str, option: str, foe_option: str) -> State:
    """A state to resolve, built only from a viewer's projection, with both choices set."""
    combatants: dict[str, Any] = {}
    for cid in view["order"]:
        seen = view["combatants"][cid]
        c = {key: clone(value) for key, value in seen.items() if key not in PROJECTION_ONLY}
        for slot in ("weapon", "armour"):
            item = seen.get(slot)
            c[slot] = {k: v for k, v in item.items() if k != "effective"} if item else None
        c["controller"] = "gm"  # nobody picks for the next turn: the odds cover this turn only
        c["seat"] = None
        c.setdefault("destroyed", [])
        c["temperament"] = "steady"
        combatants[cid] = c
    foe = next(cid for cid in view["order"] if cid != me)
    return {
        "system": "phantoms-bane",
        "status": "active",
        "turn": view["turn"],
        "order": list(view["order"]),
        "options": {},
        # only the GM's projection carries the ruling; anyone else asks as if running could succeed
        "escape_possible": bool(view.get("escape_possible", True)),
        "combatants": combatants,
        "choices": {me: option, foe: foe_option},
        "chosen_by": {me: "declared", foe: "declared"},
        "last_turn": None,
        "outcome": None,
    }


def _result(before: State, after: State, me: str, foe: str) -> tuple[int, int, bool, bool, bool, bool]:
    """(damage dealt, damage taken, foe defeated, I am defeated, I escaped, foe escaped)."""
    last = after.get("last_turn") or {}
    damage = last.get("damage") or {}
    dealt = int(damage.get(foe, {}).get("total", 0)) if last.get("dice") else 0
    taken = int(damage.get(me, {}).get("total", 0)) if last.get("dice") else 0
    cs = after["combatants"]
    return dealt, taken, bool(cs[foe]["defeated"]), bool(cs[me]["defeated"]), bool(cs[me]["escaped"]), bool(cs[foe]["escaped"])


def turn_paths(
    system: RuleSystem, state: State, me: str, fights: dict[Any, list[tuple[Fraction, Any]]] | None = None
) -> list[tuple[Fraction, tuple[int, int, bool, bool, bool, bool]]]:
    """Every outcome of this turn from ``state`` (both choices set), with its exact probability.

    ``fights``: the blows already worked out from the same state, by the options that were in effect
    when the dice fell (a runner who failed fights as an attacker): shared between the questions
    of one answer, so the fight after a failed escape is not worked out twice."""
    foe = next(cid for cid in state["order"] if cid != me)
    fights = {} if fights is None else fights

    def run(dice: Any) -> tuple[int, int, bool, bool, bool, bool]:
        # the turn's own resolution (what ``apply`` runs once both have chosen), without the next turn's start
        after = clone(state)
        resolve_turn(after, dice)
        return _result(state, after, me, foe)

    # how many escape rolls (2d6) open the turn: one probe with middling faces
    probe = ScriptedDice([3] * 32)
    probed, _ = system.apply(state, {"type": "force_resolve"}, GM, probe)
    escape_rolls = 0
    for roll in probe.log:
        if roll.notation != "2d6":
            break
        escape_rolls += 1
    if not probe.log:  # settled without dice: both got away, or one ran from a defender
        return [(Fraction(1), _result(state, probed, me, foe))]

    paths: list[tuple[Fraction, Any]] = []
    fight_weight = Fraction(1)
    prefix: tuple[tuple[int, ...], ...] = ()
    effective = (probed["last_turn"] or {}).get("effective")
    if escape_rolls:
        # the escape rolls by their totals; the blows after them are not looked at (fixed faces)
        def escape_only(dice: PathDice) -> tuple[tuple[tuple[int, ...], ...], Any]:
            faces = dice.faces
            rest = _Stub(dice, escape_rolls)
            after, _ = system.apply(state, {"type": "force_resolve"}, GM, rest)
            escaped = after["combatants"][me]["escaped"] or after["combatants"][foe]["escaped"]
            return tuple(faces[:escape_rolls]), (escaped, _result(state, after, me, foe), (after["last_turn"] or {}).get("effective"))

        escapes = enumerate_dice(escape_only, group_sums=True)
        fight_weight = Fraction(0)
        for w, (faces, (escaped, result, in_effect)) in escapes:
            if escaped:
                paths.append((w, result))
            else:
                fight_weight += w
                prefix = faces
                effective = in_effect
        if not fight_weight:
            return paths
    key = tuple(sorted((effective or {}).items()))
    if key not in fights:
        fight: list[tuple[Fraction, Any]] = []
        # first's offence die against second's defence die, and second's offence die against first's defence
        # die: the two exchanges of the turn. The differences that lead to no penetration or counter are
        # grouped further by the damage their exchange does (read from the turn's record, with the other
        # exchange at an even difference): the rest of the turn reads only the damage each side takes
        first, second = state["order"]
        even = next(pair for pair, _w in PAIRS if pair[0] == pair[1])

        def exchange_damage(first_pair: tuple[int, int], second_pair: tuple[int, int], which: int) -> tuple[int, int]:
            after = clone(state)
            faces = prefix + ((first_pair[0],), (second_pair[1],), (second_pair[0],), (first_pair[1],))
            resolve_turn(after, ScriptedDice([f for group in faces for f in group]))
            damage = after["last_turn"]["damage"]
            if which == 1:  # first's blow at second, and second's counter on first
                return damage[first]["counter"], damage[second]["hits"] + damage[second]["penetration"]
            return damage[first]["hits"] + damage[first]["penetration"], damage[second]["counter"]

        groups: list[dict[Any, list[Any]]] = [{}, {}]
        for which in (1, 2):
            for pair, weight in PAIRS:
                special = abs(pair[0] - pair[1]) == 5  # a 6 against a 1: its 1-3 dice are walked below
                if special:
                    group_key: Any = ("special", pair)
                elif which == 1:
                    group_key = exchange_damage(pair, even, 1)
                else:
                    group_key = exchange_damage(even, pair, 2)
                entry = groups[which - 1].setdefault(group_key, [Fraction(0), pair])
                entry[0] += weight
        for w1, (first_offence, second_defence) in groups[0].values():
            for w2, (second_offence, first_defence) in groups[1].values():
                dice_faces = prefix + ((first_offence,), (first_defence,), (second_offence,), (second_defence,))
                for w, result in enumerate_dice(run, prefix=dice_faces):
                    fight.append((w1 * w2 * w, result))
        fights[key] = collapse(fight)
    paths.extend((fight_weight * w, result) for w, result in fights[key])
    return paths


class _Stub:
    """Follows a path for its first ``count`` requests, then shows the lowest face of every die."""

    def __init__(self, path: PathDice, count: int) -> None:
        self.path = path
        self.count = count
        self.seen = 0

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        self.seen += 1
        if self.seen <= self.count:
            return self.path.roll(count, sides, purpose, modifier)
        return ScriptedDice([1] * count).roll(count, sides, purpose, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Any:
        self.seen += 1
        if self.seen <= self.count:
            return self.path.randint(low, high, purpose)
        return ScriptedDice([low]).randint(low, high, purpose)

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        return self.path.integers(low, high, size, purpose)

    def derive(self, label: str) -> _Stub:
        return self


def _case(paths: list[tuple[Fraction, Any]], option: str, foe_option: str) -> dict[str, Any]:
    dealt = tally(paths, lambda r: r[0])
    taken = tally(paths, lambda r: r[1])
    outcomes = [
        probability("deal_damage", "You deal any damage", total(paths, lambda r: r[0] > 0)),
        probability("take_damage", "You take any damage", total(paths, lambda r: r[1] > 0)),
        probability("defeat_foe", "You defeat the foe this turn", total(paths, lambda r: r[2] and not r[3])),
        probability("defeated", "You are defeated this turn", total(paths, lambda r: r[3] and not r[2])),
        probability("draw", "Both fall this turn", total(paths, lambda r: r[2] and r[3])),
    ]
    if option == "run_away":
        outcomes.append(probability("escape", "You get away", total(paths, lambda r: r[4])))
    if foe_option == "run_away":
        outcomes.append(probability("foe_escapes", "The foe gets away", total(paths, lambda r: r[5])))
    return {
        "outcomes": outcomes,
        "expected": [
            expectation("damage_dealt", "Damage you deal (average)", mean(dealt)),
            expectation("damage_taken", "Damage you take (average)", mean(taken)),
        ],
        "distributions": [
            distribution("damage_dealt", "Damage you deal", dealt),
            distribution("damage_taken", "Damage you take", taken),
        ],
    }


def option_odds(
    system: RuleSystem, view: Mapping[str, Any], me: str, option: str, fights: dict[Any, Any] | None = None
) -> dict[str, Any]:
    """One option of ``me`` against each of the foe's four options (and their plain average)."""
    foe = next(cid for cid in view["order"] if cid != me)
    foe_name = view["combatants"][foe]["name"]
    cases = []
    average: dict[str, Fraction] = {}
    expected: dict[str, Fraction] = {}
    labels: dict[str, str] = {}
    for foe_option in OPTIONS:
        paths = collapse(turn_paths(system, hypothetical_state(view, me, option, foe_option), me, fights))
        case = _case(paths, option, foe_option)
        case.update(
            key=f"foe_{foe_option}",
            foe_option=foe_option,
            label=f"If {foe_name} chooses to {LABELS[foe_option]}",
        )
        cases.append(case)
        for item in case["outcomes"]:
            if item["key"] == "foe_escapes":
                continue
            labels[item["key"]] = item["label"]
            average[item["key"]] = average.get(item["key"], Fraction(0)) + Fraction(item["fraction"]) / 4
        for item in case["expected"]:
            labels["e:" + item["key"]] = item["label"]
            expected[item["key"]] = expected.get(item["key"], Fraction(0)) + Fraction(item["fraction"]) / 4
    return {
        "key": option,
        "option": option,
        "label": LABELS[option].capitalize(),
        # the foe's options weighted alike: nothing public says which the foe will take
        "outcomes": [probability(k, labels[k], p) for k, p in average.items()],
        "expected": [expectation(k, labels["e:" + k], v) for k, v in expected.items()],
        "cases": cases,
    }


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Mapping[str, Any]) -> dict[str, Any]:
    me = asking_combatant(state, viewer, declaration, doing="choose", over="the duel is not under way")
    option = declaration.get("option")
    if option is not None and option not in OPTIONS:
        raise InvalidDeclaration(f"option must be one of {', '.join(OPTIONS)} (got {option!r})")
    view = system.view_for(state, viewer)
    options = [option] if option else list(OPTIONS)
    fights: dict[Any, Any] = {}  # the fights shared between the options of this answer
    answers = [option_odds(system, view, me, o, fights) for o in options]
    return {
        "system": system.id,
        "combatant": me,
        "method": "exact",
        "weighting": "The foe's options count alike: its pending choice is never looked at.",
        "choices": answers,
        "outcomes": answers[0]["outcomes"] if len(answers) == 1 else [],
    }
