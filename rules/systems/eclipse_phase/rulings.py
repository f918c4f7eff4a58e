"""Eclipse Phase's pure rules: the d100 test and its degrees, the opposed test, modifiers, range, damage.

Every function here is a ruling of RULINGS.md (Eclipse Phase section) on plain numbers, and the
words the log uses for them.

>>> judge(69, 70)["superior"], judge(0, -20)["critical"], judge(99, 150)["success"]
(2, True, False)
>>> contest(judge(69, 70), judge(7, 30))
'hit'
>>> contest(judge(7, 60), judge(0, 80))
'miss'
>>> halve(65), halve(11), range_band(10, 30)["modifier"], range_band(61, 30)["modifier"]
(33, 6, 0, -30)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ...errors import InvalidDeclaration
from .data import MODIFIER_CAP

DV_PATTERN = re.compile(r"^\s*(\d{1,2})\s*d\s*(\d{1,3})\s*(?:([+-])\s*(\d{1,3}))?\s*$", re.IGNORECASE)


def parse_dv(text: str) -> tuple[int, int, int]:
    """Read a damage value such as ``2d10+3`` into (count, sides, bonus).

    >>> parse_dv("2d10+3"), parse_dv("1d6")
    ((2, 10, 3), (1, 6, 0))
    """
    match = DV_PATTERN.match(text or "")
    if not match:
        raise InvalidDeclaration(f"damage value {text!r} must look like 2d10 or 2d10+3")
    count, sides = int(match[1]), int(match[2])
    bonus = int(match[4] or 0) * (-1 if match[3] == "-" else 1)
    if count < 1 or sides < 2:
        raise InvalidDeclaration(f"damage value {text!r} needs at least one die of two sides or more")
    return count, sides, bonus


# --- the pure rules of the tests -------------------------------------------------------------------


def halve(value: int) -> int:
    """Half a value, rounded to the nearest whole number with halves going up (ruling 4)."""
    return (value + 1) // 2


def round_half_up(value: float) -> int:
    """Nearest whole number, halves up (ruling 4)."""
    return math.floor(value + 0.5)


def wound_threshold(durability: int) -> int:
    """Durability ÷ 5, rounded to nearest, halves up."""
    return max(1, round_half_up(durability / 5))


def death_rating(durability: int, morph_type: str) -> int:
    """Durability × 1.5 for biological bodies (and pods), × 2 for synthetic ones."""
    return durability * 2 if morph_type == "synth" else round_half_up(durability * 1.5)


def is_double(roll: int) -> bool:
    return roll % 11 == 0


def judge(roll: int, target: int, superior_bonus: int = 0) -> dict[str, Any]:
    """The result of one d100 test (00–99) against a target number.

    00 always succeeds critically, 99 always fails critically, other doubles are criticals of the
    result they fall on; a success of 33+ is one superior success, 66+ two (ruling 1 and 2).
    """
    if roll == 0:
        success, critical = True, True
    elif roll == 99:
        success, critical = False, True
    else:
        success, critical = roll <= target, is_double(roll)
    superior = 0
    if success and not critical:
        superior = min(2, (2 if roll >= 66 else 1 if roll >= 33 else 0) + superior_bonus)
    superior_failures = superior_failure_degree(roll) if not success and not critical else 0
    if critical:
        label = "critical success" if success else "critical failure"
    elif success:
        label = ["success", "superior success", "two superior successes"][superior]
    else:
        label = "failure"
    return {"roll": roll, "target": target, "success": success, "critical": critical,
            "superior": superior, "superior_failures": superior_failures, "label": label}


def superior_failure_degree(roll: int) -> int:
    """How bad a plain failure is: the success bands mirrored from the top of the die.

    A success is superior from 33 up, twice from 66 up; a failure is superior at 66 or under, twice at 33 or
    under (the failure's distance from 99 reaching 33 or 66). Only the bare roll counts, as for successes.

    >>> [superior_failure_degree(r) for r in (98, 67, 66, 34, 33, 5)]
    [0, 0, 1, 1, 2, 2]
    """
    return 2 if roll <= 33 else 1 if roll <= 66 else 0


def without_target(result: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A test's result as those who do not see the tester's numbers know it: the die and what it
    means, not the target number.

    >>> without_target(judge(20, 70))["label"], "target" in without_target(judge(20, 70))
    ('success', False)
    """
    return None if result is None else {k: v for k, v in result.items() if k != "target"}


def result_words(result: Mapping[str, Any]) -> str:
    """The result of a test in words, with the degree of a plain failure (for tests outside an attack).

    >>> result_words(judge(60, 40)), result_words(judge(20, 10)), result_words(judge(80, 40))
    ('superior failure', 'two superior failures', 'failure')
    """
    if not result["success"] and not result["critical"] and result.get("superior_failures"):
        superior_failures: int = result["superior_failures"]
        return ["failure", "superior failure", "two superior failures"][superior_failures]
    return str(result["label"])


def contest(attack: Mapping[str, Any], defence: Mapping[str, Any] | None) -> str:
    """``'hit'`` or ``'miss'`` for an opposed combat test (ruling 3). ``defence`` is None without a defence."""
    if not attack["success"]:
        return "miss"
    if defence is None or not defence["success"]:
        return "hit"
    if attack["critical"] != defence["critical"]:
        return "hit" if attack["critical"] else "miss"
    return "hit" if attack["roll"] > defence["roll"] else "miss"


def cap(total: int) -> int:
    """All situational modifiers together stay within ±60 (ruling 5)."""
    return max(-MODIFIER_CAP, min(MODIFIER_CAP, total))


def target_number(skill: int, modifiers: list[dict[str, Any]], pool_bonus: int = 0) -> int:
    """Skill plus the capped sum of the situational modifiers, plus a pool's +20 outside the cap."""
    return skill + cap(sum(m["value"] for m in modifiers)) + pool_bonus


def range_band(metres: float, weapon_range: int) -> dict[str, Any]:
    """The range band and its modifier for a ranged attack (ruling 8).

    A target beyond the weapon's own range takes the beyond-range penalty even when it is within 10 m
    (or 2 m) of a short-ranged weapon: the close bands only apply inside the weapon's range.

    >>> [range_band(d, 30)["modifier"] for d in (1.4, 2, 2.5, 10, 10.5, 30, 31, 60, 61)]
    [10, 10, 0, 0, -10, -10, -20, -20, -30]
    >>> [range_band(d, 4)["modifier"] for d in (2, 4, 5, 8, 9)]
    [10, 0, -20, -20, -30]
    """
    if metres <= weapon_range + 1e-9 or metres <= 0:
        if metres <= 2:
            return {"band": "point blank", "modifier": 10}
        if metres <= 10:
            return {"band": "close", "modifier": 0}
        return {"band": "within range", "modifier": -10}
    multiple = math.ceil(metres / max(1, weapon_range) - 1e-9)
    return {"band": f"beyond range (×{multiple})", "modifier": -10 * multiple}


def wounds_from(damage: int, threshold: int) -> int:
    """Wounds from one hit: whole multiples of the Wound Threshold (ruling 6)."""
    return max(0, damage) // max(1, threshold)


def armour_after_piercing(armour: int, piercing: bool) -> int:
    return halve(armour) if piercing else armour


def flip(roll: int) -> int:
    """Swap the two digits of a d100 roll: 96 -> 69, 7 -> 70."""
    return (roll % 10) * 10 + roll // 10


# --- the log's words ---------------------------------------------------------------------------------


def count_of(n: int, word: str) -> str:
    """``count_of(2, "wound")`` -> ``'2 wounds'``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


def signed(value: int) -> str:
    return f"{value:+d}"


def breakdown(skill_label: str, skill: int, mods: list[dict[str, Any]], pool: int) -> str:
    parts = [f"{skill_label} {skill}"] + [f"{m['label']} {signed(m['value'])}" for m in mods]
    total = sum(m["value"] for m in mods)
    if cap(total) != total:
        parts.append(f"(modifiers capped at {signed(cap(total))})")
    if pool:
        parts.append(f"pool +{pool}")
    return ", ".join(parts)
