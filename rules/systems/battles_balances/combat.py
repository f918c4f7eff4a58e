"""Battles&Balances' dice: pools by size, blessings and curses, the melee blow, the shot, damage
through armour and effects, and the rollers of the GM's checks and contests.

>>> size_bonus(8, 12)
2
>>> threshold_reached(47)
'challenging'
>>> round(chance_at_least(3, 8, 20), 4)
0.0684
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rules import read
from rules.core import Event, State, event
from rules.dice import DiceSource, Roll
from rules.errors import InvalidDeclaration
from rules.physical import rolled_by

from .board import armed
from .data import ATTRIBUTES, THRESHOLDS


def size_bonus(smaller: int, larger: int) -> int:
    """What the smaller side adds: half the size difference, rounded down (0 if not smaller).

    >>> size_bonus(8, 12), size_bonus(12, 8), size_bonus(6, 10)
    (2, 0, 2)
    """
    return max(0, (larger - smaller) // 2)


def threshold_reached(total: int) -> str | None:
    """The hardest named difficulty a three-roll total reaches (None below trivial).

    >>> threshold_reached(9), threshold_reached(70)
    (None, 'impossible')
    """
    reached = None
    for name, value in THRESHOLDS:
        if total >= value:
            reached = name
    return reached


@lru_cache(maxsize=256)
def pool_distribution(count: int, sides: int) -> tuple[float, ...]:
    """Exact probabilities of every total of ``count`` dice with ``sides`` faces (index = total).

    >>> [round(p, 4) for p in pool_distribution(2, 4)]
    [0.0, 0.0, 0.0625, 0.125, 0.1875, 0.25, 0.1875, 0.125, 0.0625]
    """
    dist = [1.0]
    for _ in range(count):
        nxt = [0.0] * (len(dist) + sides)
        for total, p in enumerate(dist):
            if p:
                for face in range(1, sides + 1):
                    nxt[total + face] += p / sides
        dist = nxt
    return tuple(dist)


def chance_at_least(count: int, sides: int, target: int) -> float:
    """Chance that ``count`` dice of ``sides`` faces total at least ``target`` (a check rolls 3 pools,
    so a whole check with ``n`` dice is ``chance_at_least(3 * n, sides, target)``)."""
    if count <= 0 or sides <= 0:
        return 1.0 if target <= 0 else 0.0
    dist = pool_distribution(count, sides)
    return float(sum(dist[max(0, target):]))


def _half_up(value: int) -> int:
    return (value + 1) // 2


def _split_kinds(text: str) -> set[str]:
    return {part.strip().lower() for part in str(text or "").split(",") if part.strip()}



def luck_state(state: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    """What luck this character's next rolls carry (empty meaning when the option is off)."""
    on = state["options"]["blessings"]
    return {
        "enabled": on,
        "blessings": c["blessings"],
        "curses": c["curses"],
        "weapon": c["weapon_luck"] if on else "normal",
        "shield": c["shield_luck"] if on else "normal",
        "attack": _peek_luck(state, c, "weapon_luck"),
        "defence": _peek_luck(state, c, "shield_luck"),
    }


def _peek_luck(state: Mapping[str, Any], c: Mapping[str, Any], gear: str) -> str:
    if not state["options"]["blessings"]:
        return "normal"
    good = c["blessings"] > 0 or c[gear] == "blessed"
    bad = c["curses"] > 0 or c[gear] == "cursed"
    return "blessed" if good and not bad else "cursed" if bad and not good else "normal"


def _use_luck(state: Mapping[str, Any], c: dict[str, Any], gear: str) -> str:
    """The luck of a combat roll, using up one pending blessing and one pending curse."""
    luck = _peek_luck(state, c, gear)
    if state["options"]["blessings"]:
        if c["blessings"] > 0:
            c["blessings"] -= 1
        if c["curses"] > 0:
            c["curses"] -= 1
    return luck


def pool_roll(
    dice: DiceSource, count: int, size: int, purpose: str, luck: str = "normal", bonus: int = 0
) -> tuple[int, list[dict[str, Any]]]:
    """Roll a pool (twice when blessed or cursed, keeping the better or worse); every die is recorded."""
    first = dice.roll(count, size, purpose, bonus)
    if luck == "normal":
        return first.total, [_roll_dict(first, True, luck)]
    second = dice.roll(count, size, purpose + " (second roll)", bonus)
    keep_first = first.total >= second.total if luck == "blessed" else first.total <= second.total
    kept = first if keep_first else second
    return kept.total, [_roll_dict(first, keep_first, luck), _roll_dict(second, not keep_first, luck)]


def _roll_dict(roll: Roll, kept: bool, luck: str) -> dict[str, Any]:
    data = roll.to_dict()
    data["kept"] = kept
    data["luck"] = luck
    return data


def resolve_melee(state: State, attacker: dict[str, Any], target: dict[str, Any], dice: DiceSource) -> list[Event]:
    """Roll a melee attack (or, with the agility-only duel, an exchange) and apply any damage."""
    opts = state["options"]
    a_bonus = size_bonus(attacker["size"], target["size"])
    d_bonus = size_bonus(target["size"], attacker["size"])
    a_weapon = attacker["weapon_attack"] if armed(attacker) else 0
    a_luck = _use_luck(state, attacker, "weapon_luck")
    a_total, rolls = pool_roll(rolled_by(dice, attacker["id"]), attacker["agility"], attacker["size"], f"{attacker['name']} attack (Agility)",
                                a_luck, a_weapon + a_bonus)
    if opts["agility_duel"]:
        d_weapon = target["weapon_attack"] if armed(target) else 0
        d_luck = _use_luck(state, target, "weapon_luck")
        d_total, d_rolls = pool_roll(rolled_by(dice, target["id"]), target["agility"], target["size"], f"{target['name']} duel (Agility)",
                                      d_luck, d_weapon + d_bonus)
    else:
        d_luck = _use_luck(state, target, "shield_luck")
        d_total, d_rolls = pool_roll(rolled_by(dice, target["id"]), target["speed"], target["size"], f"{target['name']} defence (Speed)",
                                      d_luck, target["shield_defence"] + d_bonus)
    rolls += d_rolls
    base = {"attacker": attacker["id"], "target": target["id"], "attack": a_total, "defence": d_total}
    if a_total > d_total:
        margin = a_total - d_total
        ev = event("attack.hit", f"{attacker['name']} attacks {target['name']}: {a_total} against {d_total}, "
                   f"a hit by {margin}.", rolls=rolls, margin=margin, **base)
        return [ev, *deal_damage(state, attacker, target, margin, "melee", dice)]
    if opts["agility_duel"] and d_total > a_total:
        margin = d_total - a_total
        ev = event("attack.turned", f"{attacker['name']} attacks {target['name']}: {a_total} against {d_total}; "
                   f"{target['name']} strikes back by {margin}.", rolls=rolls, margin=margin, **base)
        return [ev, *deal_damage(state, target, attacker, margin, "melee", dice)]
    tie = " (a tie misses)" if a_total == d_total else ""
    return [event("attack.missed", f"{attacker['name']} attacks {target['name']}: {a_total} against {d_total}, "
                  f"a miss{tie}.", rolls=rolls, margin=0, **base)]


def resolve_ranged(state: State, attacker: dict[str, Any], target: dict[str, Any], dice: DiceSource) -> list[Event]:
    """Roll a shot: Focus plus the missile weapon's attack; one round of ammunition is used."""
    attacker["ammo"] -= 1
    a_bonus = size_bonus(attacker["size"], target["size"])
    d_bonus = size_bonus(target["size"], attacker["size"])
    a_luck = _use_luck(state, attacker, "weapon_luck")
    a_total, rolls = pool_roll(rolled_by(dice, attacker["id"]), attacker["focus"], attacker["size"], f"{attacker['name']} shot (Focus)",
                                a_luck, attacker["launcher_attack"] + a_bonus)
    if state["options"]["agility_duel"]:
        d_luck = _use_luck(state, target, "weapon_luck")
        d_total, d_rolls = pool_roll(rolled_by(dice, target["id"]), target["agility"], target["size"], f"{target['name']} dodge (Agility)",
                                      d_luck, d_bonus)
    else:
        d_luck = _use_luck(state, target, "shield_luck")
        d_total, d_rolls = pool_roll(rolled_by(dice, target["id"]), target["speed"], target["size"], f"{target['name']} defence (Speed)",
                                      d_luck, target["shield_defence"] + d_bonus)
    rolls += d_rolls
    base = {"attacker": attacker["id"], "target": target["id"], "attack": a_total, "defence": d_total,
            "ammo": attacker["ammo"]}
    if a_total > d_total:
        margin = a_total - d_total
        ev = event("shot.hit", f"{attacker['name']} shoots at {target['name']}: {a_total} against {d_total}, "
                   f"a hit by {margin}.", rolls=rolls, margin=margin, **base)
        return [ev, *deal_damage(state, attacker, target, margin, "ranged", dice)]
    tie = " (a tie misses)" if a_total == d_total else ""
    return [event("shot.missed", f"{attacker['name']} shoots at {target['name']}: {a_total} against {d_total}, "
                  f"a miss{tie}.", rolls=rolls, margin=0, **base)]


def deal_damage(
    state: State, attacker: dict[str, Any], target: dict[str, Any], margin: int, mode: str, dice: DiceSource
) -> list[Event]:
    """Damage of a hit: die + damage modifier (melee only) + margin, then armour, effects and wounds."""
    opts = state["options"]
    rolls: list[dict[str, Any]] = []
    parts: list[str] = []
    if mode == "melee":
        die = attacker["weapon_die"] if armed(attacker) else 0
        kinds = _split_kinds(attacker["weapon_kind"]) if armed(attacker) else set()
        effect = attacker["weapon_effect"] if armed(attacker) else ""
        modifier = attacker["damage_modifier"]
    else:
        die = attacker["ammo_die"]
        kinds = _split_kinds(attacker["ammo_kind"])
        effect = attacker["ammo_effect"]
        modifier = 0
    die_value = 0
    if die > 0:
        scale = "normal"
        if opts["weaknesses"]:
            weak = bool(kinds & _split_kinds(target["weak_to"]))
            strong = bool(kinds & _split_kinds(target["resists"]))
            scale = "double" if weak and not strong else "half" if strong and not weak else "normal"
        halve_after = False
        sides = die
        if scale == "double":
            sides = die * 2
            parts.append(f"weakness doubles the die to d{sides}")
        elif scale == "half":
            if opts["halved_die"] == "small":
                sides = _half_up(die)
                parts.append(f"resistance halves the die to d{sides}")
            else:
                halve_after = True
                parts.append("resistance halves the die roll")
        if opts["maximum_damage"]:
            die_value = _half_up(sides) if halve_after else sides
            parts.append(f"maximum damage {die_value}")
        else:
            roll = rolled_by(dice, attacker["id"]).roll(1, sides, f"{attacker['name']} damage")
            rolls.append(_roll_dict(roll, True, "normal"))
            die_value = _half_up(roll.total) if halve_after else roll.total
    raw = die_value + modifier + margin
    damage = raw
    absorbed = 0
    armour_events: list[Event] = []
    protection = target["armour_protection"] if target["armour"] and not target["armour_broken"] else 0
    if protection and damage >= protection:
        damage -= protection
        absorbed = protection
        if opts["armour_wear"]:
            target["armour_wear"] += absorbed // 2
            if target["armour_weight"] and target["armour_wear"] >= target["armour_weight"]:
                target["armour_broken"] = True
                armour_events.append(event("armour.destroyed", f"{target['name']}'s {target['armour']} is worn "
                                           "through and no longer protects.", combatant=target["id"]))
    extra = 0
    effect_events: list[Event] = []
    if opts["persistent_effects"] and effect:
        takes = True
        if attacker["effect_chance"] == "coin":
            coin = rolled_by(dice, attacker["id"]).roll(1, 2, f"{attacker['name']} {effect} coin flip")
            rolls.append(_roll_dict(coin, True, "normal"))
            takes = coin.total == 2
        if takes:
            count = target["effects"].get(effect, 0) + 1
            target["effects"][effect] = count
            extra = count
            effect_events.append(event("effect.worsened", f"{target['name']} suffers {effect} (mark {count}, "
                                       f"+{count} damage).", combatant=target["id"], effect=effect, count=count))
    wounds = max(0, damage) + extra
    target["wounds"] += wounds
    sums = [f"{die_value} from the die"] if die > 0 else ["no damage die"]
    if modifier:
        sums.append(f"{modifier:+d} modifier")
    sums.append(f"{margin} margin")
    detail = ", ".join(sums) + f" = {raw}"
    if absorbed:
        detail += f", armour takes {absorbed}"
    elif protection:
        detail += f", too little for the armour ({protection}) to stop"
    if extra:
        detail += f", {extra} more from {effect}"
    if parts:
        detail = "; ".join(parts) + "; " + detail
    events = [event("damage.dealt", f"{target['name']} takes {wounds} wounds ({detail}); {target['wounds']} of "
                    f"{target['health']}.", rolls=rolls, attacker=attacker["id"], target=target["id"],
                    raw=raw, absorbed=absorbed, extra=extra, wounds=wounds, total_wounds=target["wounds"])]
    events += armour_events + effect_events
    if opts["blessings"] and wounds > 0:
        if attacker["curses_on_hit"]:
            target["curses"] += 1
            events.append(event("luck.changed", f"{target['name']} is cursed by the blow.", combatant=target["id"],
                                blessings=target["blessings"], curses=target["curses"]))
        elif target["player_character"]:
            threshold = 0 if opts["blessing_threshold"] == "any" else target["size"] / 2
            if wounds > threshold:
                target["blessings"] += 1
                events.append(event("luck.changed", f"{target['name']} is blessed after the blow.",
                                    combatant=target["id"], blessings=target["blessings"], curses=target["curses"]))
    if target["wounds"] >= target["health"] and not target["defeated"]:
        target["defeated"] = True
        events.append(event("combatant.defeated", f"{target['name']} is out of play.", combatant=target["id"]))
    return events



def roller(state: Mapping[str, Any], d: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Who rolls in a check or contest: a combatant's attribute, or a named pool typed by the GM."""
    cid = d.get(prefix + "combatant") or ""
    luck = d.get(prefix + "luck") or "normal"
    if luck not in ("normal", "blessed", "cursed", "pending"):
        raise InvalidDeclaration(f"{prefix}luck must be normal, blessed, cursed or pending")
    bonus = read.whole(d, prefix + "bonus", -100, 100, default=0)
    consume = None
    if luck == "pending" and not cid:
        raise InvalidDeclaration(f"{prefix}luck 'pending' needs a character whose blessing or curse is used")
    if cid:
        cid = read.combatant(d, prefix + "combatant", state)
        c = state["combatants"][cid]
        if luck == "pending":
            good, bad = c["blessings"] > 0, c["curses"] > 0
            luck = "normal"
            if state["options"]["blessings"] and good != bad:
                luck = "blessed" if good else "cursed"
            consume = cid
        attribute = d.get(prefix + "attribute")
        if attribute not in ATTRIBUTES:
            raise InvalidDeclaration(f"{prefix}attribute must be one of {', '.join(ATTRIBUTES)}")
        name, count, size = c["name"], c[attribute], c["size"]
        pool_name = f"{attribute.capitalize()} {count}d{size}"
    else:
        name = read.text(d, prefix + "name", 80, "Someone")
        count = read.whole(d, prefix + "dice", 0, 50)
        size = read.whole(d, prefix + "size", 2, 100, default=8)
        pool_name = f"{count}d{size}"
    if bonus:
        pool_name += f"{bonus:+d}"
    return {"name": name, "dice": count, "size": size, "luck": luck, "bonus": bonus, "pool": pool_name,
            "combatant": cid or None, "consume": consume}


def spend_pending_luck(state: State, who: Mapping[str, Any]) -> None:
    """A check or contest rolled with the character's pending luck uses up one blessing and one curse."""
    if who["consume"] and state["options"]["blessings"]:
        c = state["combatants"][who["consume"]]
        c["blessings"] = max(0, c["blessings"] - 1)
        c["curses"] = max(0, c["curses"] - 1)


def three_rolls(dice: DiceSource, who: Mapping[str, Any], label: str) -> tuple[list[int], list[dict[str, Any]]]:
    totals: list[int] = []
    rolls: list[dict[str, Any]] = []
    for i in range(3):
        t, r = pool_roll(rolled_by(dice, who["combatant"] or "gm"), who["dice"], who["size"], f"{who['name']} {label} roll {i + 1}", who["luck"],
                          who["bonus"])
        totals.append(t)
        rolls += r
    return totals, rolls
