"""Eclipse Phase odds: the attack being built, against each defence the defender may choose.

The attack is declared through the system's own ``apply`` on a copy of the state (so every
modifier, the cap, the pool's +20, range bands, aims and extra damage dice are the system's), which
gives the pending attack and its target number; the defences and their target numbers come from the
system's ``defence_options``. Both d100 are then walked face by face through the system's ``judge``
and ``contest`` (10,000 pairs), grouped by what the damage reads of the attacker's roll (critical,
superior successes); for each group the system's own ``resolve`` is run once for every possible sum of the
damage dice (weapon, extra and superior dice: ``resolve`` reads only their sum), the blind attack's
d100 by its two halves, and the SOM check's d100 not walked (it decides only knock-down and knock-out,
which are not among the answers). A called shot adds the chance that it comes off (``called``), read from
the exchange the system records; when the defence is hidden, the most it can be (``called_at_most``: the
attacker's own superior or critical success).

What a viewer may not see never enters: a target whose numbers the viewer may not see (someone
else's combatant while the GM has not revealed Durability) is replaced by a stand-in with blank
numbers, and then the answer is only what does not depend on them: the attacker's own test, P(hit)
when the target cannot defend (that is public), and the damage before armour. The GM and the
target's own player get the full answer. Post-roll pool spending (flip, upgrade, soften) is a
choice after the dice, so it is not assumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ...core import State, Viewer, clone
from ...dice import Roll
from ...errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from ...odds.common import (
    asking_combatant,
    by_roll_total,
    distribution,
    expectation,
    mean,
    probability,
    tally,
    total,
)
from .rulings import contest, judge
from .system import EclipsePhase

GM = Viewer.gm()
#: the defence target numbers a viewer who may not see the defender's skills gets a row for
DEFENCE_ROWS = (10, 20, 30, 40, 50, 60, 70, 80, 90)
#: the numbers a viewer sees only of its own combatants (or the GM), blanked in a stand-in
HIDDEN_NUMBERS = {
    "fray": 0, "melee": 0, "guns": 0, "athletics": 0, "som": 0, "som_check": 0, "initiative": 0, "traumas": 0,
    "energy_armour": 0, "kinetic_armour": 0, "morph_type": "biomorph", "base_move": 4, "full_move": 20,
    "aim": None, "modifiers": [], "armour_name": "",
}
#: the numbers the GM's "reveal Durability" shows to everyone
HEALTH_NUMBERS = {"damage": 0, "durability": 50, "wound_threshold": 10, "death_rating": 75}


class _NoDice:
    """Declaring an attack rolls nothing while a defence is awaited: any roll means the exchange started."""

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        raise _Rolled

    def randint(self, low: int, high: int, purpose: str) -> Any:
        raise _Rolled

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        raise _Rolled

    def derive(self, label: str) -> _NoDice:
        return self


class _Rolled(Exception):
    pass


def known_state(system: EclipsePhase, state: State, viewer: Viewer) -> tuple[State, set[str]]:
    """A copy with the numbers ``viewer`` may not see blanked, and the ids whose numbers it sees."""
    new = clone(state)
    sees: set[str] = set()
    for cid, c in new["combatants"].items():
        c["controller"] = "gm"  # the computer acts for nobody while the question is worked out
        c["seat"] = None
        if system.sees_numbers(state, viewer, cid):
            sees.add(cid)
            continue
        c.update(clone(HIDDEN_NUMBERS))
        c["pools"] = {"flex": 0, "vigor": 0}
        c["pools_max"] = {"flex": 0, "vigor": 0}
        if not state.get("reveal_health"):
            c.update(HEALTH_NUMBERS)
    return new, sees


def _pending(system: EclipsePhase, known: State, declaration: Mapping[str, Any]) -> tuple[State, dict[str, Any], bool]:
    """The state with the attack declared (waiting for a defence), and whether the target can defend at all."""
    target = known["combatants"].get(declaration.get("target"))
    if target is None:
        raise InvalidDeclaration("the odds of an attack need its target")
    defenceless = not system.can_defend(target)
    trial = known
    if defenceless:
        # let the declaration wait for a defence instead of rolling at once; nothing it computes
        # reads the target's ability to defend
        trial = clone(known)
        t = trial["combatants"][target["id"]]
        t["state"] = "ok"
        t["conditions"] = [c for c in t["conditions"] if c not in ("surprised", "unconscious")]
    try:
        after, _ = system.apply(trial, {**declaration, "type": "attack"}, GM, _NoDice())
    except _Rolled:  # pragma: no cover - the target was made able to defend
        raise IllegalDeclaration("this attack cannot be worked out in advance") from None
    pending = after.get("pending")
    if not pending or pending.get("phase") != "defence":
        raise IllegalDeclaration("this attack cannot be worked out in advance")
    if defenceless:
        after = clone(after)
        after["combatants"][target["id"]] = clone(known["combatants"][target["id"]])
    return after, pending, defenceless


def hit_classes(attack_target: int, defence_target: int | None) -> dict[tuple[bool, int], tuple[Fraction, int, int | None]]:
    """P of a hit for each (critical, superior) of the attacker's roll, with a pair of faces showing it."""
    counts: dict[tuple[bool, int], list[Any]] = {}
    attack_rolls = [judge(a, attack_target) for a in range(100)]
    defence_rolls = [judge(d, defence_target) for d in range(100)] if defence_target is not None else [None]
    for ar in attack_rolls:
        if not ar["success"]:
            continue
        key = (ar["critical"], ar["superior"])
        for dr in defence_rolls:
            if contest(ar, dr) != "hit":
                continue
            entry = counts.get(key)
            if entry is None:
                counts[key] = [1, ar["roll"], dr["roll"] if dr else None]
            else:
                entry[0] += 1
    pairs = 100 * len(defence_rolls)
    return {key: (Fraction(n, pairs), a_face, d_face) for key, (n, a_face, d_face) in counts.items()}


def exchange_paths(system: EclipsePhase, after: State, pending: Mapping[str, Any], defence: Mapping[str, Any] | None,
                   defence_target: int | None) -> list[tuple[Fraction, tuple[bool, int, int, str, bool]]]:
    """(hit, wounds, damage before armour, target's state, called shot came off) for every outcome of the exchange."""
    tid = pending["defender"]
    before = after["combatants"][tid]
    paths: list[tuple[Fraction, tuple[bool, int, int, str, bool]]] = []
    classes = hit_classes(pending["target"], defence_target)
    hit_weight = sum((w for w, _a, _d in classes.values()), Fraction(0))
    if hit_weight < 1:
        paths.append((1 - hit_weight, (False, 0, 0, before["state"], False)))
    for w, a_face, d_face in classes.values():
        def run(dice: Any, a_face: int = a_face, d_face: int | None = d_face) -> tuple[bool, int, int, str, bool]:
            state = dict(after)
            state["combatants"] = dict(after["combatants"])
            t = state["combatants"][tid] = clone(before)
            aid = pending["attacker"]
            state["combatants"][aid] = clone(after["combatants"][aid])
            p = clone(pending)
            p["defence"] = clone(defence) if defence is not None else None
            p["rolls"] = {
                "attacker": judge(a_face, pending["target"]),
                "defender": judge(d_face, defence_target) if defence_target is not None and d_face is not None else None,
            }
            p["phase"] = "reaction"
            p["post"] = {"attacker": {"used": True, "accepted": True}}
            state["pending"] = p
            events: list[dict[str, Any]] = []
            system.resolve(state, dice, events)
            exchange = state["last_exchange"] or {}
            called = exchange.get("called_shot") or {}
            return (exchange.get("result") == "hit", t["wounds"] - before["wounds"], int(exchange.get("damage", 0)), t["state"],
                    bool(called.get("came_off")))

        blind: list[bool] = []

        def passes(low: int, high: int, purpose: str, blind: list[bool] = blind) -> int:
            if "blind attack" in purpose:
                blind.append(True)
            return 50  # a blind attack finds its mark on 50-99; the SOM check is not walked (see above)

        found = by_roll_total(run, passes)  # the damage dice are read only through their sum
        share = Fraction(1, 2) if blind else Fraction(1)
        for pw, result in found:
            paths.append((w * share * pw, result))
        if blind:
            paths.append((w * share, run(_Fixed(lambda low, high, purpose: 0 if "blind attack" in purpose else 50))))
    return paths


class _Fixed:
    """Dice for a run that rolls no damage: single numbers from ``pick``."""

    def __init__(self, pick: Any) -> None:
        self.pick = pick

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Any:
        raise IllegalDeclaration("a missed blind attack rolled damage")

    def randint(self, low: int, high: int, purpose: str) -> Any:
        return Roll(f"{low}-{high}", purpose, (self.pick(low, high, purpose),))

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        raise IllegalDeclaration("no mass rolls here")

    def derive(self, label: str) -> _Fixed:
        return self


def _called_outcome(paths: list[tuple[Fraction, tuple[bool, int, int, str, bool]]]) -> dict[str, Any]:
    """The chance that the declared called shot comes off: a hit with a superior success or a critical (ruling 11)."""
    return probability("called", "The called shot comes off", total(paths, lambda r: r[4]))


def _full_case(paths: list[tuple[Fraction, tuple[bool, int, int, str, bool]]], name: str, called: bool) -> dict[str, Any]:
    wounds = tally(paths, lambda r: r[1])
    return {
        "outcomes": [
            probability("hit", "It hits", total(paths, lambda r: r[0])),
            probability("wound", f"{name} takes at least one wound", total(paths, lambda r: r[1] > 0)),
            probability("incapacitated", f"{name} is incapacitated", total(paths, lambda r: r[3] == "incapacitated")),
            probability("dead", f"{name} is killed", total(paths, lambda r: r[3] == "dead")),
        ] + ([_called_outcome(paths)] if called else []),
        "expected": [
            expectation("wounds", f"Wounds {name} takes (average)", mean(wounds)),
            expectation("damage", "Damage before armour (average)", mean(tally(paths, lambda r: r[2]))),
        ],
        "distributions": [distribution("wounds", f"Wounds {name} takes", wounds)],
    }


def odds(system: EclipsePhase, state: State, viewer: Viewer, declaration: Mapping[str, Any]) -> dict[str, Any]:
    if declaration.get("type", "attack") != "attack":
        raise InvalidDeclaration("odds are given for an attack being built")
    aid = asking_combatant(state, viewer, declaration, doing="attack", over="the battle is not running")
    tid = declaration.get("target")
    if not isinstance(tid, str) or tid not in state["combatants"]:
        raise InvalidDeclaration("the odds of an attack need its target")
    known, sees = known_state(system, state, viewer)
    if aid not in sees:
        raise NotPermitted(f"{state['combatants'][aid]['name']}'s numbers are not yours to see")
    after, pending, defenceless = _pending(system, known, declaration)
    name = known["combatants"][tid]["name"]
    sees_target = tid in sees
    called = bool(pending["choices"].get("called_shot"))
    attack = [judge(a, pending["target"]) for a in range(100)]
    answer: dict[str, Any] = {
        "system": system.id,
        "combatant": aid,
        "target": tid,
        "method": "exact",
        "attack_target": pending["target"],
        "attack": [
            probability("attack_succeeds", "Your attack test succeeds", Fraction(sum(r["success"] for r in attack), 100)),
            probability("critical", "A critical success", Fraction(sum(r["success"] and r["critical"] for r in attack), 100)),
            probability("superior", "At least one superior success", Fraction(sum(r["superior"] >= 1 for r in attack), 100)),
            probability("two_superior", "Two superior successes", Fraction(sum(r["superior"] >= 2 for r in attack), 100)),
        ],
        "numbers_known": sees_target,
        "cases": [],
    }
    if defenceless:
        defences: list[tuple[str, str, Mapping[str, Any] | None, int | None]] = [("no_defence", f"{name} cannot defend", None, None)]
    elif sees_target:
        defences = []
        for option in system.defence_options(after, pending):
            way = {"method": option["method"], "skill_label": option["skill_label"], "skill_value": option["skill"],
                   "mods": option["mods"], "pool": None, "target": option["target"]}
            defences.append((f"defence_{option['method']}", f"If {name} defends: {option['label']} (target {option['target']})", way, option["target"]))
    else:
        defences = []
    for key, label, chosen, target in defences:
        paths = exchange_paths(system, after, pending, chosen, target)
        if sees_target:
            case = _full_case(paths, name, called)
        else:
            # the target's armour and health are not the viewer's to see: the hit and the damage dice only
            damage = tally([(w, r) for w, r in paths if r[0]], lambda r: r[2])
            hit = sum(damage.values(), Fraction(0))
            case = {
                "outcomes": [probability("hit", "It hits", hit)] + ([_called_outcome(paths)] if called else []),
                "expected": [expectation("damage", "Damage before armour, if it hits (average)", mean(damage) / hit if hit else Fraction(0))],
                "distributions": [distribution("damage", "Damage before armour, if it hits", {v: w / hit for v, w in damage.items()} if hit else {})],
            }
        case.update(key=key, label=label, defence_target=target)
        answer["cases"].append(case)
    if answer["cases"]:
        likely = max(answer["cases"], key=lambda c: c["defence_target"] if c["defence_target"] is not None else -999)
        answer["most_likely"] = likely["key"]
        answer["outcomes"] = likely["outcomes"]
        answer["expected"] = likely["expected"]
    else:
        answer["most_likely"] = None
        if called:  # the defence is unknown: the most the called shot can hope for is the attacker's own test
            answer["attack"].append(probability(
                "called_at_most", "The called shot can come off (your test is a superior success or a critical; "
                "the defence may still stop it)", Fraction(sum(r["success"] and (r["critical"] or r["superior"] >= 1)
                                                               for r in attack), 100)))
        answer["outcomes"] = answer["attack"]
        answer["expected"] = []
        answer["note"] = (f"{name}'s defence skills are not yours to see: the odds cover your own test, and the "
                          "chance to hit for each target number the defence might have.")
        answer["by_defence_target"] = [
            {**probability(f"hit_vs_{target}", f"Hits if the defence's target number is {target}",
                           sum((w for w, _a, _d in hit_classes(pending["target"], target).values()), Fraction(0))),
             "defence_target": target}
            for target in DEFENCE_ROWS
        ]
    return answer
