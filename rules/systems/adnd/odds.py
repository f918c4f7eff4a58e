"""AD&D 1e odds: P(hit) and expected damage per attack, the chance to slay the target this round, and
for a charge the arrival segment and who strikes first.

One blow is the system's own :func:`~.resolution.attack` (the d20 against THAC0 minus armour class, the damage dice with
their bonus, at least 1) run with every face of the d20 and every total of the damage dice. The blows
of a round are independent, so their damage adds up by convolution; whether the total drops the target
(down at 0 hit points or dead) is then asked of the system's own :func:`~.resolution.deal_damage`. The round's blows are the
combatant's routine attacks (its attacks per round in melee, its rate of fire with missiles, one blow
for a charge); tied initiative can add or take one (the answer says so). A charge's arrival and
retaliators come from the system's :func:`~.charges.charge_view` by position (never from the DM's secret
declarations), the order of blows against a charge from the weapons' lengths, longest first.

A target whose stats the viewer may not see (a monster of the DM's, to a player) is replaced by a
stand-in: the answer then gives P(hit) for every armour class it might have, and no chance to slay.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ...contract import RuleSystem
from ...core import State, Viewer, clone
from ...errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from ...odds.common import (
    asking_combatant,
    distribution,
    enumerate_dice,
    expectation,
    mean,
    probability,
    tally,
    total,
)
from .charges import charge_view
from .combatants import missile_of, sees_stats, weapon_of
from .data import WEAPONS
from .resolution import attack, deal_damage

#: the stats a viewer sees only of its own side's seats (or the GM), blanked in a stand-in
HIDDEN_STATS = {"hp": 10, "hp_max": 10, "ac": 10, "thac0": 20, "to_hit_bonus": 0, "damage_bonus": 0, "attacks": 1,
                "hit_dice": 1, "hit_dice_plus": 0, "morale_mod": 0, "dies_at_zero": False, "damage": "1d4"}
KINDS = ("melee", "missile", "charge")


def known_state(state: State, viewer: Viewer) -> tuple[State, set[str]]:
    new = clone(state)
    sees: set[str] = set()
    for cid, c in new["combatants"].items():
        if sees_stats(state, viewer, cid):
            sees.add(cid)
        else:
            c.update(HIDDEN_STATS)
    # the DM's declarations and the queue are not every viewer's to see; nothing here reads them
    new["declarations"] = {}
    new["queue"] = []
    return new, sees


def blow_paths(known: State, cid: str, tid: str, what: str, damage: str, to_hit: int, bonus: int) -> list[tuple[Fraction, int]]:
    """Damage of one blow (0 for a miss), every face of the d20 and every total of the damage dice."""

    def run(dice: Any) -> int:
        state = dict(known)
        state["combatants"] = {cid: known["combatants"][cid], tid: clone(known["combatants"][tid])}
        dealt = attack(state, cid, tid, what, damage, 1, to_hit, bonus, dice, [])
        return sum(dealt)

    return enumerate_dice(run, group_sums=True)


def _blows(known: State, cid: str, kind: str) -> tuple[str, str, int, int, int]:
    """What a round's blows of this kind are: (words, damage dice, count, to-hit bonus, damage bonus)."""
    c = known["combatants"][cid]
    if kind == "missile":
        m = missile_of(c)
        if m["rate"] <= 0:
            raise IllegalDeclaration(f"{c['name']} has no missile weapon")
        return m["label"].lower(), m["damage"], m["rate"], c["to_hit_bonus"], 0
    w = weapon_of(c)
    count = c["attacks"] if kind == "melee" else 1
    return w["label"].lower(), w["damage"], count, c["to_hit_bonus"], c["damage_bonus"]


def _convolve(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + p * q
    return out


def _fate(known: State, tid: str, amount: int) -> str:
    """The target's condition after ``amount`` damage, by the system's own :func:`~.resolution.deal_damage`."""
    state = dict(known)
    state["combatants"] = dict(known["combatants"])
    state["combatants"][tid] = clone(known["combatants"][tid])
    state["queue"] = []
    state["casting"] = {}
    if amount:
        deal_damage(state, tid, amount, "odds", [])
    return str(state["combatants"][tid]["condition"])


def charge_answer(known: State, cid: str, tid: str) -> dict[str, Any]:
    view = charge_view(known, cid, positional=True)
    target = view["targets"].get(tid)
    if target is None:
        raise IllegalDeclaration("that target cannot be charged")
    fighters = [cid] + list(target["retaliators"])
    lengths: dict[str, float] = {f: float(WEAPONS[known["combatants"][f]["weapon"]]["length"]) for f in fighters}
    order: list[dict[str, Any]] = []
    for length in sorted(set(lengths.values()), reverse=True):
        order.append({"length_feet": length, "combatants": [f for f in fighters if lengths[f] == length],
                      "names": [known["combatants"][f]["name"] for f in fighters if lengths[f] == length]})
    first = order[0]["names"] if order else []
    return {
        "arrival_segment": target["arrival_segment"],
        "reaches": target["arrival_segment"] is not None,
        "retaliators": list(target["retaliators"]),
        "strike_order": order,
        "first": " and ".join(first) + (" strike first" if len(first) > 1 else " strikes first") if first else "",
    }


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Mapping[str, Any]) -> dict[str, Any]:
    cid = asking_combatant(state, viewer, declaration, doing="attack", over="the encounter is over")
    kind = declaration.get("kind", "melee")
    if kind not in KINDS:
        raise InvalidDeclaration(f"odds are given for {', '.join(KINDS)}")
    tid = declaration.get("target")
    if not isinstance(tid, str) or tid not in state["combatants"] or tid == cid:
        raise InvalidDeclaration("the odds of an attack need its target")
    known, sees = known_state(state, viewer)
    if cid not in sees:
        raise NotPermitted(f"{state['combatants'][cid]['name']}'s stats are not yours to see")
    c, t = known["combatants"][cid], known["combatants"][tid]
    if t["side"] == c["side"]:
        raise IllegalDeclaration(f"{c['name']} cannot attack {t['name']}, who is on the same side")
    if t["condition"] in ("dead", "fled"):
        raise IllegalDeclaration(f"{t['name']} is no longer in the fight")
    what, damage, count, to_hit, bonus = _blows(known, cid, kind)
    answer: dict[str, Any] = {"system": system.id, "combatant": cid, "target": tid, "kind": kind, "method": "exact",
                              "blows": count, "stats_known": tid in sees}
    if kind == "charge":
        answer["charge"] = charge_answer(known, cid, tid)
    if tid not in sees:
        # the target's armour class and hit points are not the viewer's to see: a row per armour class
        rows = []
        for ac in range(10, -11, -1):
            trial = clone(known)
            trial["combatants"][tid]["ac"] = ac
            paths = blow_paths(trial, cid, tid, what, damage, to_hit, bonus)
            rows.append({**probability(f"hit_ac_{ac}", f"Hits armour class {ac}", total(paths, lambda r: r > 0)), "ac": ac})
        hits = [(w, r) for w, r in blow_paths(known, cid, tid, what, damage, to_hit, bonus) if r > 0]
        hit_weight = total(hits, lambda r: True)
        answer.update(
            outcomes=[],
            by_armour_class=rows,
            expected=[expectation("damage_per_hit", "Damage of a blow that hits (average)",
                                  mean(tally(hits, lambda r: r)) / hit_weight if hit_weight else Fraction(0))],
            note=f"{t['name']}'s armour class and hit points are not yours to see: the chance to hit is given for each armour class.",
        )
        return answer
    one = tally(blow_paths(known, cid, tid, what, damage, to_hit, bonus), lambda r: r)
    round_total = {0: Fraction(1)}
    for _ in range(count):
        round_total = _convolve(round_total, one)
    fates: dict[int, str] = {amount: _fate(known, tid, amount) for amount in round_total}
    p_hit = sum((w for v, w in one.items() if v > 0), Fraction(0))
    answer.update(
        outcomes=[
            probability("hit", "One blow hits", p_hit),
            probability("any_hit", f"At least one of {count} blows hits" if count > 1 else "The blow hits",
                        1 - round_total.get(0, Fraction(0))),  # a blow that hits deals at least 1
            probability("slay", f"{t['name']} drops (0 hit points or fewer) this round",
                        sum((w for v, w in round_total.items() if fates[v] in ("down", "dead")), Fraction(0))),
            probability("kill", f"{t['name']} is killed this round",
                        sum((w for v, w in round_total.items() if fates[v] == "dead"), Fraction(0))),
        ],
        expected=[
            expectation("damage_per_attack", "Damage per blow (average, misses count 0)", mean(one)),
            expectation("damage_this_round", f"Damage of {count} blow{'s' if count > 1 else ''} this round (average)", mean(round_total)),
        ],
        distributions=[distribution("damage_this_round", "Damage this round", round_total)],
    )
    return answer
