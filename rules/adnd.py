"""AD&D 1e combat run by the Demon Idol round procedure.

The DM steps through a fixed procedure: reaction, surprise, distance and opening morale
checks, the surprise segments, then rounds of declarations (the DM's private notes first, then
each player in a rolled order against a real-time clock), side initiative, resolution in action
letter order with the out-of-sequence cases, bleeding, a recap and the next round or recovery.

Positions are grid squares; one square is one inch of the game's scale (10 ft indoors, 10 yd
outdoors). Distances between combatants are measured base to base: neighbours touch.

>>> charge_per_segment_feet(12, "indoors"), charge_per_segment_feet(12, "outdoors")
(24, 48)
>>> arrival_segment(distance_squares=(3, 0), move=12, scale="indoors", length=Fraction(7, 2))
1
>>> delay_segments(13.9), delay_segments(5.99)
(2, 0)
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from . import contract, read, terrain
from .carry_over import carried_fields, carry_over_help
from .contract import RuleSystem
from .core import (
    GM_ONLY,
    PUBLIC,
    Event,
    Field,
    State,
    Viewer,
    event,
    may_see,
    require,
    told,
)
from .dice import DiceSource, Roll
from .errors import IllegalDeclaration, InvalidDeclaration
from .physical import rolled_by

# --- tables ------------------------------------------------------------------------------------

#: melee weapons: damage against man-sized foes, speed factor, length in feet
WEAPONS: dict[str, dict[str, Any]] = {
    "dagger": {"label": "Dagger", "damage": "1d4", "speed": 2, "length": 1},
    "short_sword": {"label": "Short sword", "damage": "1d6", "speed": 3, "length": 2},
    "long_sword": {"label": "Long sword", "damage": "1d8", "speed": 5, "length": 3.5},
    "broad_sword": {"label": "Broad sword", "damage": "2d4", "speed": 5, "length": 3.5},
    "two_handed_sword": {"label": "Two-handed sword", "damage": "1d10", "speed": 10, "length": 6},
    "mace": {"label": "Footman's mace", "damage": "1d6+1", "speed": 7, "length": 2.5},
    "hammer": {"label": "War hammer", "damage": "1d4+1", "speed": 4, "length": 1.5},
    "flail": {"label": "Footman's flail", "damage": "1d6+1", "speed": 7, "length": 4},
    "morning_star": {"label": "Morning star", "damage": "2d4", "speed": 7, "length": 4},
    "battle_axe": {"label": "Battle axe", "damage": "1d8", "speed": 7, "length": 4},
    "hand_axe": {"label": "Hand axe", "damage": "1d6", "speed": 4, "length": 1.5},
    "club": {"label": "Club", "damage": "1d6", "speed": 4, "length": 3},
    "quarterstaff": {"label": "Quarterstaff", "damage": "1d6", "speed": 4, "length": 7},
    "spear": {"label": "Spear", "damage": "1d6", "speed": 6, "length": 8},
    "halberd": {"label": "Halberd", "damage": "1d10", "speed": 9, "length": 6},
    "pike": {"label": "Awl pike", "damage": "1d6", "speed": 13, "length": 16},
    "natural": {"label": "Claws, teeth or fists (no speed factor)", "damage": "", "speed": None, "length": 1},
}

#: missile weapons: damage, speed factor, shots per round
MISSILES: dict[str, dict[str, Any]] = {
    "none": {"label": "None", "damage": "", "speed": None, "rate": 0},
    "short_bow": {"label": "Short bow", "damage": "1d6", "speed": 7, "rate": 2},
    "long_bow": {"label": "Long bow", "damage": "1d6", "speed": 8, "rate": 2},
    "light_crossbow": {"label": "Light crossbow", "damage": "1d4+1", "speed": 7, "rate": 1},
    "heavy_crossbow": {"label": "Heavy crossbow", "damage": "1d4+2", "speed": 10, "rate": 1},
    "sling": {"label": "Sling", "damage": "1d4+1", "speed": 6, "rate": 1},
    "darts": {"label": "Darts", "damage": "1d3", "speed": 2, "rate": 3},
    "javelin": {"label": "Javelin", "damage": "1d6", "speed": 4, "rate": 1},
}

#: reaction bands: (highest d100 total, key, words)
REACTION_BANDS: tuple[tuple[int, str, str], ...] = (
    (5, "violently_hostile", "violently hostile: they attack at once"),
    (25, "hostile", "hostile: they act against the party at once"),
    (45, "uncertain_negative", "unsure, but leaning towards hostility"),
    (55, "neutral", "neutral and unsure"),
    (75, "uncertain_positive", "unsure, but leaning towards friendliness"),
    (95, "friendly", "friendly: they act in the party's favour at once"),
    (10**6, "enthusiastic", "enthusiastically friendly"),
)

#: action letters in resolution order
LETTERS = ("P", "A", "B", "C", "D", "E", "F", "G")
LETTER_RANK = {letter: i for i, letter in enumerate(LETTERS)}
#: the order value of what comes after both sides' turns (a winner's shooter placed last, ruling AD&D-9)
AFTER_BOTH_SIDES = 10 + len(LETTERS)

#: (letter, kind) -> what it means, in the words the forms show
ACTION_KINDS: dict[str, tuple[str, str]] = {
    "psionic": ("P", "Psionic combat"),
    "flee": ("A", "Flee, get away"),
    "parley": ("B", "Parley"),
    "await": ("C", "Wait and see"),
    "missile": ("D", "Shoot missiles"),
    "spell": ("D", "Cast a spell"),
    "device": ("D", "Use a device"),
    "turn": ("D", "Turn undead"),
    "move": ("E", "Move"),
    "charge": ("E", "Charge"),
    "custom": ("E", "Other task"),
    "set": ("F", "Set vs. charge"),
    "melee": ("G", "Melee"),
    "none": ("-", "Do nothing"),
}
TARGETED = {"missile", "melee", "charge", "turn"}
FEET_PER_INCH = {"indoors": 10, "outdoors": 30}
SECONDS_PER_SEGMENT = 6
DICE_RE = re.compile(r"^\s*(\d{1,2})d(\d{1,3})\s*([+-]\s*\d{1,3})?\s*$")


def parse_dice(text: str) -> tuple[int, int, int]:
    """``"2d4+1"`` -> ``(2, 4, 1)``; raises :class:`InvalidDeclaration` for anything else.

    >>> parse_dice("1d6-1")
    (1, 6, -1)
    """
    m = DICE_RE.match(text or "")
    if not m:
        raise InvalidDeclaration(f"damage {text!r} must look like 1d8 or 2d4+1")
    count, sides = int(m.group(1)), int(m.group(2))
    if count < 1 or sides < 1:
        raise InvalidDeclaration(f"damage {text!r} needs at least one die with one side")
    mod = int(m.group(3).replace(" ", "")) if m.group(3) else 0
    return count, sides, mod


def reaction_band(total: int) -> tuple[str, str]:
    """The band of a reaction total (d100 plus adjustment).

    >>> reaction_band(5)[0], reaction_band(6)[0], reaction_band(96)[0]
    ('violently_hostile', 'hostile', 'enthusiastic')
    """
    for top, key, words in REACTION_BANDS:
        if total <= top:
            return key, words
    raise AssertionError("unreachable")  # pragma: no cover


def surprise_result(dice_by_side: Mapping[str, int]) -> tuple[str | None, int]:
    """Who is surprised and for how many segments, from each side's d6.

    A face of 1 or 2 means surprised for that many segments; when both sides are surprised
    only the difference counts.

    >>> surprise_result({"A": 1, "B": 5}), surprise_result({"A": 1, "B": 2}), surprise_result({"A": 2, "B": 2})
    (('A', 1), ('B', 1), (None, 0))
    """
    surprised = {side: face for side, face in dice_by_side.items() if face <= 2}
    if not surprised:
        return None, 0
    if len(surprised) == 1:
        side, face = next(iter(surprised.items()))
        return side, face
    (s1, f1), (s2, f2) = sorted(surprised.items(), key=lambda kv: kv[1])
    if f1 == f2:
        return None, 0
    return s2, f2 - f1


def morale_score(hit_dice: int, plus: int = 0, modifier: int = 0) -> int:
    """Morale in percent of a monster of ``hit_dice``+``plus`` Hit Dice: 50, +5 per Hit Die above 1,
    +1 per point of the "+M", + modifier. It belongs to the monster type: current hit points never
    enter it (ruling AD&D-4).

    >>> morale_score(4, 4), morale_score(1), morale_score(3, 1, -10)
    (69, 50, 51)
    """
    return 50 + 5 * max(0, hit_dice - 1) + max(0, plus) + modifier


#: what a failed morale check does, by how far the roll went over the score:
#: (highest margin, key, words for the log, status while it lasts)
MORALE_BANDS: tuple[tuple[int, str, str, str], ...] = (
    (15, "fall_back", "falls back, fighting", "falling back"),
    (30, "retreat", "disengages to retreat", "retreating"),
    (50, "panic", "flees in panic", "fleeing in panic"),
    (10**6, "surrender", "surrenders", "surrendered"),
)


def morale_failure(margin: int) -> tuple[str, str]:
    """The band of a failed morale check (``margin`` = roll + modifiers - score, at least 1).

    >>> morale_failure(15), morale_failure(16)[0], morale_failure(31)[0], morale_failure(51)[0]
    (('fall_back', 'falls back, fighting'), 'retreat', 'panic', 'surrender')
    """
    for top, key, words, _status in MORALE_BANDS:
        if margin <= top:
            return key, words
    raise AssertionError("unreachable")  # pragma: no cover


def delay_segments(seconds: float) -> int:
    """Each full 6 seconds a player takes to declare costs that character one segment."""
    return max(0, math.floor(seconds / SECONDS_PER_SEGMENT + 1e-9))


def charge_per_segment_feet(move: int, scale: str) -> int:
    """Feet a charger covers each segment: charging doubles the move indoors, adds a third outdoors."""
    per_inch = FEET_PER_INCH[scale]
    if scale == "indoors":
        return move * 2 * per_inch // 10
    return move * 4 * per_inch // 30


def arrival_segment(
    *, distance_squares: tuple[int, int], move: int, scale: str, length: Fraction | float | int, limit: int = 10,
    way_squares: float | None = None,
) -> int | None:
    """First segment a charger ends within its weapon's length of the target (None if not this round).

    ``distance_squares`` is the (dx, dy) between the two tokens; tokens in touching squares
    are at distance 0.
    """
    dx, dy = distance_squares
    per_inch = FEET_PER_INCH[scale]
    centre_sq = (dx * dx + dy * dy) * per_inch * per_inch
    if way_squares is not None:  # the way around blocked squares, in squares, instead of the straight line
        centre_sq = Fraction(way_squares * way_squares) * per_inch * per_inch
    reach = Fraction(length) + per_inch
    if centre_sq <= reach * reach:
        return 1
    step = charge_per_segment_feet(move, scale)
    if step <= 0:
        return None
    for segment in range(1, limit + 1):
        r = reach + segment * step
        if centre_sq <= r * r:
            return segment
    return None


def chebyshev(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    return max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"]))


def _minus(n: int) -> str:
    """A signed adjustment as the queue writes it: −2, +1."""
    return f"−{-n}" if n < 0 else f"+{n}"


def _add_reason(state: Mapping[str, Any], a: dict[str, Any], words: str, told: str) -> None:
    """Add why an action goes when it does: ``told`` is the reason as the table hears it when the
    actor is an NPC (``words`` hold its numbers, the DM's alone)."""
    a["why"].append(words)
    if told != words and state["combatants"][a["combatant"]]["controller"] != "seat":
        a.setdefault("why_told", {})[str(len(a["why"]) - 1)] = told


def _told_why(a: Mapping[str, Any]) -> list[str]:
    """An action's reasons as the table hears them (see :func:`_add_reason`)."""
    told = a.get("why_told") or {}
    return [told.get(str(i), words) for i, words in enumerate(a["why"])]


def _label(cid: str, state: Mapping[str, Any]) -> str:
    return state["combatants"].get(cid, {}).get("name", cid)


def _weapon(c: Mapping[str, Any]) -> dict[str, Any]:
    w = dict(WEAPONS.get(c.get("weapon", "natural"), WEAPONS["natural"]))
    if c.get("weapon") == "natural" or not w["damage"]:
        w["damage"] = c.get("damage") or "1d4"
    return w


def _missile(c: Mapping[str, Any]) -> dict[str, Any]:
    return dict(MISSILES.get(c.get("missile", "none"), MISSILES["none"]))


def _able(c: Mapping[str, Any]) -> bool:
    return c.get("condition", "ok") == "ok"


COMBATANT_FIELDS = [
    Field("hp", "Hit points", "int", 8, -9, 300, help="Current hit points at the start of the fight (0 or less: "
          "down, carried from an earlier fight).", group="Vitals"),
    Field("ac", "Armour class", "int", 10, -10, 10, help="Lower is better; 10 is unarmoured.", group="Vitals"),
    Field("thac0", "To hit AC 0", "int", 20, 1, 25,
          help="The d20 score needed to hit armour class 0 (THAC0), read from the attack matrix.", group="Attack"),
    Field("hit_dice", "Level or Hit Dice", "int", 1, 0, 20, help="The N of a monster written N+M Hit Dice; "
          "sets the morale score.", group="Vitals"),
    Field("hit_dice_plus", "Hit Dice plus (the +M of N+M)", "int", 0, 0, 20,
          help="A 4+4 monster has 4 here; each point adds 1% to morale. Current hit points never change "
               "morale.", group="Vitals"),
    Field("weapon", "Melee weapon", "choice", "long_sword",
          choices=tuple((k, v["label"]) for k, v in WEAPONS.items()), group="Attack",
          help="Sets damage, speed factor and length. Natural attacks have no speed factor."),
    Field("damage", "Natural attack damage", "text", "1d6", 0, 12,
          help="Dice for claws, bites or fists, like 1d6 or 2d4+1 (only for natural attacks).", group="Attack"),
    Field("attacks", "Attack routines per round", "int", 1, 1, 6,
          help="Two or more lets this combatant slot one attack in before the foe's first.", group="Attack"),
    Field("missile", "Missile weapon", "choice", "none",
          choices=tuple((k, v["label"]) for k, v in MISSILES.items()), group="Attack"),
    Field("to_hit_bonus", "To-hit bonus", "int", 0, -5, 5, group="Attack"),
    Field("damage_bonus", "Damage bonus", "int", 0, -5, 10, group="Attack"),
    Field("move", "Movement (inches)", "int", 12, 1, 30, help="MV per round; a charge adds to it.", group="Movement"),
    Field("reaction_mod", "Reaction adjustment", "int", 0, -3, 5,
          help="Dexterity reaction bonus: shifts missile timing and protects during surprise.", group="Movement"),
    Field("caster", "Casts spells", "bool", False, group="Magic"),
    Field("psionic", "Psionic", "bool", False, help="Offers psionic combat (P) in the declarations.", group="Magic"),
    Field("dies_at_zero", "Dies at 0 hit points", "bool", False,
          help="Most monsters die at 0; characters fall unconscious and bleed.", group="Vitals"),
    Field("morale_mod", "Morale adjustment (%)", "int", 0, -50, 50, group="Vitals"),
]

OPTION_FIELDS = [
    Field("scale", "Scale", "choice", "indoors",
          choices=(("indoors", "Indoors (1 inch = 10 ft)"), ("outdoors", "Outdoors (1 inch = 10 yd)")),
          help="Sets the encounter distance roll, the grid scale and how far a charge goes."),
    Field("bleed_at_zero", "Bleed from exactly 0 hit points", "bool", False,
          help="Off: only those below 0 bleed. On: those at exactly 0 bleed too."),
    Field("fast_weapon_extra", "Extra attacks for much faster weapons on tied initiative", "bool", False,
          help="On a tie, against a foe who also strikes in melee: a weapon with at most half the foe's speed "
               "factor, or 5 or more lower, strikes twice before it; 10 or more lower, twice before and once "
               "more with it. Never while either is closing (not yet in striking range) or charging."),
    Field("width", "Grid width (squares)", "int", 20, 8, 60),
    Field("height", "Grid height (squares)", "int", 20, 8, 60),
]

PRESETS: list[dict[str, Any]] = [
    {"name": "Fighter (1st level)", "side": "A", "hp": 9, "ac": 4, "thac0": 20, "hit_dice": 1, "weapon": "long_sword",
     "missile": "short_bow", "move": 9},
    {"name": "Fighter (5th level)", "side": "A", "hp": 33, "ac": 2, "thac0": 16, "hit_dice": 5, "weapon": "broad_sword",
     "attacks": 1, "to_hit_bonus": 1, "damage_bonus": 1, "move": 9},
    {"name": "Cleric (2nd level)", "side": "A", "hp": 11, "ac": 3, "thac0": 20, "hit_dice": 2, "weapon": "mace",
     "caster": True, "move": 9},
    {"name": "Magic-user (1st level)", "side": "A", "hp": 4, "ac": 10, "thac0": 21, "hit_dice": 1, "weapon": "dagger",
     "missile": "darts", "caster": True, "reaction_mod": 1},
    {"name": "Thief (2nd level)", "side": "A", "hp": 7, "ac": 8, "thac0": 21, "hit_dice": 2, "weapon": "short_sword",
     "missile": "sling", "reaction_mod": 2},
    {"name": "Orc", "side": "B", "hp": 5, "ac": 6, "thac0": 19, "hit_dice": 1, "weapon": "spear", "move": 9,
     "dies_at_zero": True},
    {"name": "Goblin", "side": "B", "hp": 4, "ac": 6, "thac0": 20, "hit_dice": 1, "weapon": "short_sword",
     "move": 6, "dies_at_zero": True, "morale_mod": -5},
    {"name": "Gnoll", "side": "B", "hp": 10, "ac": 5, "thac0": 16, "hit_dice": 2, "weapon": "halberd", "move": 9,
     "dies_at_zero": True},
    {"name": "Bugbear", "side": "B", "hp": 15, "ac": 5, "thac0": 16, "hit_dice": 3, "hit_dice_plus": 1,
     "weapon": "morning_star", "move": 9, "dies_at_zero": True},
    {"name": "Ogre", "side": "B", "hp": 22, "ac": 5, "thac0": 15, "hit_dice": 4, "hit_dice_plus": 1,
     "weapon": "natural", "damage": "1d10", "move": 9, "dies_at_zero": True},
    {"name": "Owlbear", "side": "B", "hp": 30, "ac": 5, "thac0": 15, "hit_dice": 5, "hit_dice_plus": 2,
     "weapon": "natural", "damage": "1d8", "attacks": 3, "move": 12, "dies_at_zero": True},
    {"name": "Giant rat", "side": "B", "hp": 2, "ac": 7, "thac0": 20, "hit_dice": 0, "weapon": "natural",
     "damage": "1d3", "move": 12, "dies_at_zero": True},
]

HELP = [
    {"title": "How a fight runs",
     "text": "The DM steps through a checklist. First come the encounter checks: how the other side reacts, "
             "who is caught off guard, how far apart the parties stand and whether anyone loses heart at once. "
             "Any check can be skipped with a note when the DM already knows the answer. If one side is caught "
             "off guard, the other gets that many free segments, each declared and resolved on its own. Then "
             "rounds follow: declarations, initiative, resolution segment by segment, bleeding and a recap."},
    {"title": "Declaring",
     "text": "The DM first writes down, in secret, what every non-player combatant will do. Then a die picks "
             "which player declares first, following the roster order. Each player has a clock: every full "
             "6 seconds of thinking makes that character act one segment later. Questions to the DM do not "
             "count, so the DM can pause the clock. A declaration is final, but it can be called off while "
             "the round is resolved. You can also prepare an action with a trigger; it is readied when it "
             "would have happened and fires when you say the trigger has come."},
    {"title": "Action letters",
     "text": "Each declaration gets a letter: P psionics, A avoid or flee, B parley, C wait, D missiles, "
             "spells, devices or turning, E movement and charges, F set a weapon against a charge, G melee. "
             "The side that wins initiative (a d6 each, higher wins) resolves its actions in letter order, "
             "then the other side does. On a tie both sides go letter by letter together, and melee goes in "
             "order of weapon speed factor, lowest first, equal ones at once; attacks with no speed factor "
             "always happen on a tie, with the fastest weapons. Segments lost to slow declaring add to that "
             "number. A slow weapon never loses its blow for being slow, even when its number passes 10: it "
             "comes after the faster ones in the same round. Only a wielder who falls before it comes loses it."},
    {"title": "Out of turn",
     "text": "Several cases jump the queue. A combatant with two or more attack routines slips one attack in "
             "just before the enemy's first. A missile shooter's reaction adjustment added to their side's "
             "die is compared with the enemy's die: higher shoots first, equal shoots together with the "
             "enemy's missiles, lower shoots last. Last means last: an archer whose side won the die but "
             "whose sum falls short waits until the losing side has done everything it declared, its melee "
             "blows too, and the queue says why (\"shoots last: reaction −2 + 3 < 4\"). Spells aimed at each other go by casting time, then by initiative. Missiles and turning "
             "aimed at a charger always come before the charge. Melee against a caster compares the casting "
             "time with the weapon's speed factor, or with the caster's initiative die for weapons without "
             "one: a shorter casting time goes first, equal happens together. A caster who takes any damage "
             "before the spell is done loses it. Whatever happens in the same step always fully happens."},
    {"title": "Charges",
     "text": "A charge doubles movement indoors and adds a third outdoors. The charger covers a tenth of that "
             "each segment and strikes in the first segment it ends within its weapon's length of the target "
             "(tokens in touching squares are at distance 0). Missiles and turning aimed at the charger come "
             "first. The target and anyone beside it who set a weapon (F), waits (C), or meant to strike the "
             "charger (G) hit back: the longest weapon strikes first, equal lengths at once, the charger "
             "among them. Speed factors do not count during a charge. Select a token to see its charge "
             "reach, and a target to see the arrival segment and who can hit back."},
    {"title": "Wounds and bleeding",
     "text": "Characters at 0 hit points or less fall; at -10 they die. Anyone below 0 when a round began "
             "loses 1 more hit point in the bleeding step unless first aid has been given. An option makes "
             "those at exactly 0 bleed too. Monsters marked so die at 0."},
    {"title": "Checks and tables",
     "text": "Reaction: d100 plus the charisma adjustment; 5 or less violently hostile, up to 25 hostile, up to "
             "45 unsure leaning hostile, up to 55 neutral, up to 75 unsure leaning friendly, up to 95 "
             "friendly, above that enthusiastic. Surprise: a d6 per side, 1 or 2 means surprised for that "
             "many segments; if both are, only the difference counts. Distance indoors: d6+4 inches, or 1 to 3 "
             "if someone is surprised; outdoors 6d4 inches less the surprised side's die."},
    {"title": "Morale",
     "text": "A morale score belongs to the kind of creature, not to how hurt it is: 50%, plus 5 for each Hit "
             "Die above the first, plus 1 for each point of the +M of a monster written N+M Hit Dice (a 4+4 "
             "monster has 69%), plus its own adjustment. Current hit points never change it: the DM puts "
             "wounds, fallen friends and other circumstances into the check's modifier. The check holds when "
             "d100 plus the modifier is at most the score. A failure acts by how far it went over: 1 to 15, "
             "the creature falls back but keeps fighting; 16 to 30, it disengages and retreats; 31 to 50, it "
             "flees in panic; 51 or more, it surrenders. Retreat and flight replace its action and take it "
             "out of the fight; one who surrenders stays on the board, no longer acts and is no longer a "
             "target."},
    {"title": "What the board leaves to the DM",
     "text": "The board keeps the order, the clock, the dice and the bookkeeping. The DM still judges: what a "
             "spell or a device does beyond plain damage (saving throws are rolled at the table), the result of "
             "turning undead, psionic combat, parleys, pursuit, and where tokens stand (drag them). A charge "
             "strikes once; retaliation is automatic for those who set a weapon, wait, or meant to strike the "
             "charger. Use the hit point tool for healing and anything else the board does not track."},
    {"title": "Options",
     "text": "Scale: indoors (1 inch = 10 ft) or outdoors (1 inch = 10 yd), also switchable during the fight. "
             "Bleeding from exactly 0: off by default. Extra attacks for a much faster weapon on a tie: off by "
             "default. When on, on a tied round, a combatant who strikes a foe who also strikes in melee gets "
             "extra blows if its weapon is much faster: a speed factor at most half the foe's, or 5 or more "
             "lower, gives two blows before the foe's; 10 or more lower gives two before and a third at the "
             "same moment as the foe's. Never in a round in which either of them is closing in (not yet side "
             "by side or within weapon's length of its target) or charging."},
]

PHASE_LABELS = {
    "reaction": "Reaction check",
    "surprise": "Surprise check",
    "distance": "Distance check",
    "morale": "Opening morale check",
    "surprise_segments": "Surprise segments",
    "declarations": "Declarations",
    "initiative": "Initiative",
    "resolution": "Resolution",
    "bleeding": "Bleeding",
    "recap": "Recap",
    "recovery": "Reset or recovery",
}


class AdndDemonIdol(RuleSystem):
    """AD&D 1e combat, stepped through the Demon Idol procedure by the DM.

    >>> from rules.dice import ScriptedDice
    >>> system = AdndDemonIdol()
    >>> lineup = [{"id": "hero", "name": "Hero", "side": "A", "controller": "seat", "seat": "s1"},
    ...           {"id": "orc", "name": "Orc", "side": "B", "hp": 5, "dies_at_zero": True}]
    >>> state, _ = system.setup(system.validate_lineup(lineup), system.validate_options({}), ScriptedDice([]))
    >>> state["phase"]
    'reaction'
    >>> state, events = system.apply(state, {"type": "check_reaction"}, Viewer.gm(), ScriptedDice([30]))
    >>> events[0]["text"]
    'Reaction roll 30: unsure, but leaning towards hostility.'
    """

    id = "adnd"
    name = "AD&D 1e (Demon Idol procedure)"
    summary = ("Declarations from phones against a real-time clock, side initiative, action letters, "
               "segments and charges, with the DM stepping through a checklist.")
    #: the declaration clock reads when each declaration arrived (its ``at``)
    needs_now = True
    min_combatants = 2
    max_combatants = 40
    sides = ("A", "B")

    # --- forms ---------------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return list(COMBATANT_FIELDS) + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return list(OPTION_FIELDS)

    def presets(self) -> list[dict[str, Any]]:
        return copy.deepcopy(PRESETS)

    def help(self) -> list[dict[str, str]]:
        return [dict(h) for h in HELP] + carry_over_help(self.id)

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        entry = super().validate_combatant(data, index)
        if entry["weapon"] == "natural":
            parse_dice(entry["damage"])
        return entry

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        cleaned = super().validate_lineup(lineup)
        if len({c["side"] for c in cleaned}) < 2:
            raise InvalidDeclaration("a battle needs combatants on both sides A and B")
        return cleaned

    def assign(
        self, state: State, combatant_id: str, controller: str, seat: str | None, dice: DiceSource | None = None
    ) -> tuple[State, list[Event]]:
        """Hand a combatant over; a combatant given to the computer during declarations declares at once."""
        new, events = super().assign(state, combatant_id, controller, seat)
        if (new.get("phase") == "declarations" and controller == "computer" and dice is not None
                and combatant_id in self._actors(new) and combatant_id not in new["declarations"]):
            new["declarations"][combatant_id] = self._computer_declaration(new, combatant_id, dice)
            events.append(event("declaration.made", f"The computer notes {_label(combatant_id, new)}'s action: "
                                f"{self._describe(new, new['declarations'][combatant_id])}.",
                                visibility=GM_ONLY, combatant=combatant_id))
            self._maybe_finish_declarations(new, dice, events)
        return new, events

    # --- setup ---------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        lineup = self.validate_lineup(lineup)
        raw_blocked = options.get("blocked") if isinstance(options, Mapping) else None
        options = self.validate_options(options)
        if len(lineup) < self.min_combatants:
            raise InvalidDeclaration(f"a battle needs at least {self.min_combatants} combatants")
        sides = {c["side"] for c in lineup}
        if len(sides) < 2:
            raise InvalidDeclaration("a battle needs combatants on both sides A and B")
        combatants: dict[str, Any] = {}
        for c in lineup:
            # hit points carried from an earlier fight may sit below the full ones, or at 0 or
            # less: down, and bound after that fight (rules/carry_over.py)
            combatants[c["id"]] = {**c, "hp_max": max(c["hp"], c.get("hp_max") or 0), "x": 0, "y": 0,
                                   "condition": "ok" if c["hp"] > 0 else "down", "stable": c["hp"] <= 0,
                                   "morale": None, "morale_margin": 0}
        state: State = {
            "system": self.id,
            "status": "active",
            "phase": "reaction",
            "options": options,
            "scale": options["scale"],
            "grid": {"width": options["width"], "height": options["height"]},
            # blocked squares come from the table's board (not an option of the form)
            "blocked": terrain.clean_blocked(raw_blocked, options["width"], options["height"]),
            "combatants": combatants,
            "order": [c["id"] for c in lineup],
            "encounter": {},
            "steps": {},
            "round": 0,
            "surprise": {"side": None, "segments": 0, "segment": 0},
            "decl": None,
            "declarations": {},
            "initiative": None,
            "queue": [],
            "casting": {},
            "round_log": [],
            "recap": None,
            "round_start_hp": {},
            "last_key": None,
            "last_at": None,
            "outcome": None,
        }
        self._place(state, 0)
        names = ", ".join(c["name"] for c in lineup)
        return state, [event("battle.started", f"The encounter begins: {names}. Next: the reaction check.")]

    def _place(self, state: State, distance: int) -> None:
        """Set the two parties ``distance`` inches apart (side A above, side B below)."""
        by_side: dict[str, list[str]] = {"A": [], "B": []}
        for cid in state["order"]:
            by_side[state["combatants"][cid]["side"]].append(cid)
        grid = state["grid"]
        grid["width"] = max(grid["width"], max(len(v) for v in by_side.values()) + 2)
        grid["height"] = max(grid["height"], distance + 4)
        rows = {"A": 1, "B": 1 + distance + 1 if distance else 3}
        blocked = terrain.blocked_of(state)
        taken: set[tuple[int, int]] = set()
        for side, members in by_side.items():
            start = max(0, (grid["width"] - len(members)) // 2)
            for i, cid in enumerate(members):
                x, y = start + i, rows[side]
                if (x, y) in blocked or (x, y) in taken:  # the nearest free square instead
                    free = [sq for sq in terrain.free_squares(grid["width"], grid["height"], blocked) if sq not in taken]
                    if free:
                        x, y = min(free, key=lambda sq, x=x, y=y: ((sq[0] - x) ** 2 + (sq[1] - y) ** 2, sq[1], sq[0]))
                taken.add((x, y))
                state["combatants"][cid]["x"] = x
                state["combatants"][cid]["y"] = y

    # --- authorisation and dispatch ------------------------------------------------------------
    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = require(declaration, "type", str, "a type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if kind in self.gm_declarations and not viewer.is_gm:
            raise IllegalDeclaration(f"only the DM may {kind.replace('_', ' ')}")
        if state.get("status") != "active":
            raise IllegalDeclaration("the battle is not running")
        at = declaration.get("at")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int | float)):
            raise InvalidDeclaration("the time stamp 'at' must be a number of seconds")
        new = copy.deepcopy(state)
        events: list[Event] = []
        handler(new, declaration, viewer, dice, events)
        if at is not None:
            new["last_at"] = float(at)
        for e in events:
            if e["type"] not in ("declaration.made",):
                line = {"type": e["type"], "text": e["text"], "visibility": e["visibility"]}
                if e.get("others"):
                    line["others"] = e["others"]["text"]
                new["round_log"].append(line)
        return new, events

    def _expect(self, state: State, *phases: str) -> None:
        if state["phase"] not in phases:
            wanted = " or ".join(PHASE_LABELS.get(p, p) for p in phases)
            raise IllegalDeclaration(
                f"that belongs to the {wanted} step; we are at the {PHASE_LABELS.get(state['phase'], state['phase'])}"
            )

    def _skip(self, state: State, key: str, declaration: Mapping[str, Any], events: list[Event]) -> bool:
        if not declaration.get("skip"):
            return False
        note = read.text(declaration, "note", 200)
        state["steps"][key] = {"skipped": True, "note": note}
        words = f" ({note})" if note else ""
        events.append(event("check.skipped", f"The DM skips the {PHASE_LABELS[key].lower()}{words}.", step=key))
        return True

    # --- phase 1 to 4: encounter checks --------------------------------------------------------
    @contract.declaration("check_reaction", by="gm")
    def _do_check_reaction(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "reaction")
        if not self._skip(state, "reaction", d, events):
            adj = read.whole(d, "adjustment", -50, 50, default=0)
            roll = rolled_by(dice, "gm").randint(1, 100, "reaction (d100)")
            total = roll.total + adj
            key, words = reaction_band(total)
            private = bool(d.get("private"))
            state["encounter"]["reaction"] = {"roll": roll.total, "adjustment": adj, "total": total,
                                              "band": key, "words": words, "private": private}
            state["steps"]["reaction"] = {"skipped": False, "note": f"{total}: {words}", "private": private}
            shown = f"{roll.total}{adj:+d} = {total}" if adj else f"{total}"
            vis = GM_ONLY if d.get("private") else PUBLIC
            events.append(event("reaction.checked", f"Reaction roll {shown}: {words}.", visibility=vis,
                                rolls=[roll], total=total, band=key))
        state["phase"] = "surprise"

    @contract.declaration("check_surprise", by="gm")
    def _do_check_surprise(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "surprise")
        if not self._skip(state, "surprise", d, events):
            sides = d.get("sides", list(self.sides))
            if not isinstance(sides, list) or any(s not in self.sides for s in sides):
                raise InvalidDeclaration("sides must list the sides that could be surprised (A, B)")
            faces: dict[str, int] = {}
            rolls: list[Roll] = []
            for side in self.sides:
                if side in sides:
                    r = rolled_by(dice, f"side:{side}").roll(1, 6, f"surprise, side {side}")
                    rolls.append(r)
                    faces[side] = r.total
            side, segments = surprise_result(faces)
            state["surprise"] = {"side": side, "segments": segments, "segment": 0, "faces": faces}
            state["encounter"]["surprise"] = {"faces": faces, "side": side, "segments": segments}
            dice_words = ", ".join(f"side {s} rolled {f}" for s, f in faces.items()) or "nobody rolled"
            if side is None:
                text = f"Surprise: {dice_words}; nobody is surprised."
            else:
                other = "B" if side == "A" else "A"
                text = (f"Surprise: {dice_words}; side {side} is surprised for {segments} segment"
                        f"{'s' if segments > 1 else ''}, so side {other} acts alone first.")
            state["steps"]["surprise"] = {"skipped": False, "note": text}
            events.append(event("surprise.checked", text, rolls=rolls, side=side, segments=segments))
        state["phase"] = "distance"

    @contract.declaration("check_distance", by="gm")
    def _do_check_distance(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "distance")
        if d.get("skip"):
            distance = read.whole(d, "distance", 0, 60)
            self._skip(state, "distance", d, events)
        else:
            surprised = state["surprise"].get("side")
            rolls: list[Roll] = []
            if state["scale"] == "indoors":
                if surprised:
                    r = rolled_by(dice, "gm").randint(1, 3, "distance indoors with surprise (1-3)")
                    distance = r.total
                else:
                    r = rolled_by(dice, "gm").roll(1, 6, "distance indoors (d6+4)", 4)
                    distance = r.total
                rolls.append(r)
            else:
                r = rolled_by(dice, "gm").roll(6, 4, "distance outdoors (6d4)")
                rolls.append(r)
                distance = r.total
                if surprised:
                    distance = max(1, distance - state["surprise"]["faces"][surprised])
            unit = "ft" if state["scale"] == "indoors" else "yd"
            text = f"The parties are {_inches(distance)} apart ({distance * 10} {unit})."
            state["steps"]["distance"] = {"skipped": False, "note": text}
            events.append(event("distance.checked", text, rolls=rolls, distance=distance))
        state["encounter"]["distance"] = distance
        self._place(state, distance)
        events.append(event("parties.placed", f"The DM sets the parties {_inches(distance)} apart on the grid.",
                            distance=distance))
        state["phase"] = "morale"

    @contract.declaration("check_morale", by="gm")
    def _do_check_morale(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "morale", "declarations", "resolution", "recap")
        opening = state["phase"] == "morale"
        if opening and self._skip(state, "morale", d, events):
            self._after_opening(state, dice, events)
            return
        group = d.get("combatants")
        if group is None:
            side = d.get("side", "B")
            if side not in self.sides:
                raise InvalidDeclaration("side must be A or B")
            group = [cid for cid in state["order"] if state["combatants"][cid]["side"] == side]
        if (not isinstance(group, list) or not group
                or any(not isinstance(c, str) or c not in state["combatants"] for c in group)):
            raise InvalidDeclaration("combatants must list the ids of the group that checks morale")
        modifier = read.whole(d, "modifier", -100, 100, default=0)
        roll = rolled_by(dice, "gm").randint(1, 100, "morale (d100)")
        total = roll.total + modifier
        # the score is the monster type's (ruling AD&D-4): hit dice and the +M, never current hit points
        parts: list[str] = []
        told_parts: list[str] = []  # an NPC's score (its hit dice) stays the DM's: the others hear the outcome
        margins: dict[str, int] = {}
        results: dict[str, str] = {}
        for cid in dict.fromkeys(group):
            c = state["combatants"][cid]
            if not _able(c):
                continue
            score = morale_score(c["hit_dice"], c.get("hit_dice_plus", 0), c["morale_mod"])
            shown = c["controller"] == "seat"
            if total <= score:
                parts.append(f"{_label(cid, state)} holds ({score}%)")
                told_parts.append(parts[-1] if shown else f"{_label(cid, state)} holds")
                if c.get("morale") == "fall_back":
                    c["morale"] = None  # it stands its ground again
                continue
            margins[cid] = total - score
            results[cid], words = morale_failure(total - score)
            parts.append(f"{_label(cid, state)} fails by {total - score} ({score}%) and {words}")
            told_parts.append(parts[-1] if shown else f"{_label(cid, state)} fails and {words}")
        text = f"Morale check, d100 {roll.total}{modifier:+d} = {total}: " + ("; ".join(parts) or "nobody able")
        public = f"Morale check, d100 {roll.total}{modifier:+d} = {total}: " + ("; ".join(told_parts) or "nobody able")
        events.append(event("morale.checked", text + ".", rolls=[roll], visibility=PUBLIC if public == text else GM_ONLY,
                            others=told(public + ".", rolls=[roll], total=total, failed=list(results), results=results),
                            total=total, failed=list(results), results=results))
        for cid, band in results.items():
            self._morale_fails(state, cid, band, margins[cid], events)
        if state["phase"] == "declarations" and results:
            self._maybe_finish_declarations(state, dice, events)
        if opening:
            state["steps"]["morale"] = {"skipped": False, "note": text, "told": public}
            self._after_opening(state, dice, events)

    def _after_opening(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        if state["surprise"].get("side") and state["surprise"]["segments"] > 0:
            state["surprise"]["segment"] = 1
            events.append(event("surprise.started",
                                f"Surprise segment 1 of {state['surprise']['segments']}: only side "
                                f"{self._surprising_side(state)} acts."))
        else:
            state["round"] = 1
            events.append(event("round.started", "Round 1 begins."))
        self._open_declarations(state, dice, events)

    def _surprising_side(self, state: State) -> str | None:
        side = state["surprise"].get("side")
        if not side or not state["surprise"].get("segment"):
            return None
        return "B" if side == "A" else "A"

    # --- phase 6: declarations -----------------------------------------------------------------
    def _actors(self, state: State) -> list[str]:
        """Who declares now: every able combatant, or only the surprising side during surprise."""
        side = self._surprising_side(state)
        return [cid for cid in state["order"] if _able(state["combatants"][cid])
                and (side is None or state["combatants"][cid]["side"] == side)]

    def _open_declarations(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        state["phase"] = "declarations"
        state["declarations"] = {}
        state["queue"] = []
        state["initiative"] = None
        state["last_key"] = None
        if not self._surprising_side(state):
            state["round_start_hp"] = {cid: c["hp"] for cid, c in state["combatants"].items()}
            state["recap"] = None
            state["round_log"] = []
        state["decl"] = {"order": None, "index": 0, "open_at": None, "paused_total": 0.0,
                         "paused_since": None, "roll": None}
        for cid in self._actors(state):
            c = state["combatants"][cid]
            spell = state["casting"].get(cid)
            if spell and spell.get("kind", "spell") != "spell":
                state["declarations"][cid] = {
                    **_auto_decl(spell["kind"]), "segments": spell["remaining"], "note": spell.get("note", ""),
                    "continuing": True,
                }
                events.append(event("declaration.made", f"{c['name']} carries on with the task begun in surprise.",
                                    visibility=self._decl_visibility(state, cid), combatant=cid))
            elif spell:
                state["declarations"][cid] = {
                    "kind": "spell", "letter": "D", "target": spell.get("target"), "spell": spell["spell"],
                    "casting_time": spell["remaining"], "damage": spell.get("damage", ""), "continuing": True,
                    "prepared": False, "trigger": "", "note": "", "delay": 0, "seconds": 0, "by": "auto",
                }
                events.append(event("declaration.made", f"{c['name']} keeps casting {spell['spell']}.",
                                    visibility=self._decl_visibility(state, cid), combatant=cid))
            elif c.get("morale") in ("retreat", "panic") or c.get("morale_failed"):
                band = c.get("morale") or "panic"
                state["declarations"][cid] = self._flight_declaration(c)
                words = "disengages and retreats" if band == "retreat" else "flees in panic"
                events.append(event("declaration.made", f"{c['name']} has lost heart and {words}.",
                                    visibility=self._decl_visibility(state, cid), combatant=cid))
            elif c["controller"] == "computer":
                state["declarations"][cid] = self._computer_declaration(state, cid, dice)
                events.append(event("declaration.made",
                                    f"The computer notes {c['name']}'s action: "
                                    f"{self._describe(state, state['declarations'][cid])}.",
                                    visibility=GM_ONLY, combatant=cid))
        self._maybe_finish_declarations(state, dice, events)

    @staticmethod
    def _stats_visibility(state: State, *cids: str) -> str:
        """Who may see words with the numbers of these combatants: everyone when all are the players'
        (their sheets are on the table), else the DM alone (an NPC's numbers are the DM's)."""
        return PUBLIC if all(state["combatants"][cid]["controller"] == "seat" for cid in cids) else GM_ONLY

    def _decl_visibility(self, state: State, cid: str) -> str:
        return PUBLIC if state["combatants"][cid]["controller"] == "seat" else GM_ONLY

    def _players_to_declare(self, state: State) -> list[str]:
        return [cid for cid in self._actors(state) if state["combatants"][cid]["controller"] == "seat"
                and cid not in state["declarations"]]

    def _npcs_to_declare(self, state: State) -> list[str]:
        return [cid for cid in self._actors(state) if state["combatants"][cid]["controller"] != "seat"
                and cid not in state["declarations"]]

    def _awaited(self, state: State) -> str | None:
        decl = state.get("decl") or {}
        if state["phase"] != "declarations" or decl.get("order") is None:
            return None
        late = [c for c in self._players_to_declare(state) if c not in decl["order"]]
        for cid in list(decl["order"]) + late:
            c = state["combatants"][cid]
            if cid not in state["declarations"] and _able(c) and c["controller"] == "seat":
                return cid
        return None

    @contract.declaration("roll_order", by="gm")
    def _do_roll_order(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                       events: list[Event]) -> None:
        self._expect(state, "declarations")
        if state["decl"]["order"] is not None:
            raise IllegalDeclaration("the order of declaring is already rolled")
        npcs = self._npcs_to_declare(state)
        if npcs:
            names = ", ".join(_label(c, state) for c in npcs)
            raise IllegalDeclaration(f"first note the declarations of the DM's combatants: {names}")
        roster = [cid for cid in self._actors(state) if state["combatants"][cid]["controller"] == "seat"]
        pending = [cid for cid in roster if cid not in state["declarations"]]
        if not pending:
            state["decl"]["order"] = []
            self._maybe_finish_declarations(state, dice, events)
            return
        rolls: list[Roll] = []
        first = 0
        if len(roster) > 1:
            roll = dice.randint(1, len(roster), f"first to declare (1-{len(roster)})")
            rolls.append(roll)
            first = roll.total - 1
        order = roster[first:] + roster[:first]
        state["decl"].update({"order": order, "index": 0, "open_at": d.get("at"), "paused_total": 0.0,
                              "paused_since": None, "roll": first + 1})
        names = ", then ".join(_label(c, state) for c in order if c in pending)
        lead = f"Roll {first + 1} on the roster: " if rolls else ""
        events.append(event("order.rolled", f"{lead}{names} declare{'s' if len(order) == 1 else ''} "
                                            f"{'in that order' if len(order) > 1 else 'now'}.",
                            rolls=rolls, order=order))

    def _elapsed(self, state: State, at: float | None) -> float:
        decl = state["decl"]
        if at is None or decl.get("open_at") is None:
            return 0.0
        end = decl["paused_since"] if decl.get("paused_since") is not None else at
        return max(0.0, float(end) - float(decl["open_at"]) - float(decl["paused_total"]))

    @contract.declaration("pause_clock", by="gm")
    def _do_pause_clock(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        self._expect(state, "declarations")
        awaited = self._awaited(state)
        if awaited is None:
            raise IllegalDeclaration("no player's clock is running")
        if state["decl"]["paused_since"] is not None:
            raise IllegalDeclaration("the clock is already paused")
        at = _at(d)
        state["decl"]["paused_since"] = at
        events.append(event("clock.paused", f"The DM pauses {_label(awaited, state)}'s clock for a question.",
                            combatant=awaited, at=at))

    @contract.declaration("resume_clock", by="gm")
    def _do_resume_clock(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "declarations")
        decl = state["decl"]
        if decl["paused_since"] is None:
            raise IllegalDeclaration("the clock is not paused")
        at = _at(d)
        decl["paused_total"] = float(decl["paused_total"]) + max(0.0, at - float(decl["paused_since"]))
        decl["paused_since"] = None
        awaited = self._awaited(state)
        events.append(event("clock.resumed", f"{_label(awaited or '', state)}'s clock runs again.", at=at))

    @contract.declaration("declare")
    def _do_declare(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        self._expect(state, "declarations")
        cid = read.combatant(d, "combatant", state)
        if not viewer.controls(state, cid):
            raise IllegalDeclaration("you can declare only for your own combatants")
        c = state["combatants"][cid]
        if cid in state["declarations"]:
            raise IllegalDeclaration(f"{c['name']} has already declared; a declaration cannot be changed")
        if cid not in self._actors(state):
            raise IllegalDeclaration(f"{c['name']} cannot act now")
        action = self._clean_action(state, cid, d)
        delay, seconds = 0, 0.0
        if c["controller"] == "seat":
            if state["decl"]["order"] is None:
                raise IllegalDeclaration("the players declare after the DM has rolled who goes first")
            awaited = self._awaited(state)
            if awaited != cid:
                raise IllegalDeclaration(f"it is {_label(awaited or '', state)}'s turn to declare")
            seconds = self._elapsed(state, d.get("at"))
            delay = delay_segments(seconds)
            state["decl"]["open_at"] = d.get("at")
            state["decl"]["paused_total"] = 0.0
            state["decl"]["paused_since"] = None
        action.update({"delay": delay, "seconds": round(seconds, 1), "by": "dm" if viewer.is_gm else "player"})
        state["declarations"][cid] = action
        what = self._describe(state, action)
        if c["controller"] == "seat":
            late = f" after {seconds:.0f} s, so {delay} segment{'s' if delay != 1 else ''} late" if delay else ""
            events.append(event("declaration.made", f"{c['name']} declares: {what}{late}.", combatant=cid,
                                letter=action["letter"], delay=delay, seconds=round(seconds, 1)))
        else:
            events.append(event("declaration.made", f"The DM notes {c['name']}'s action: {what}.",
                                visibility=GM_ONLY, combatant=cid, letter=action["letter"]))
            events.append(event("declaration.noted", f"The DM has noted a secret action for {c['name']}.",
                                combatant=cid))
        self._maybe_finish_declarations(state, dice, events)

    def _maybe_finish_declarations(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        if self._npcs_to_declare(state) or self._players_to_declare(state):
            return
        if state["decl"]["order"] is None and any(
            state["combatants"][c]["controller"] == "seat" and state["declarations"][c].get("by") != "auto"
            for c in state["declarations"]
        ):
            return
        if state["decl"]["order"] is None:
            state["decl"]["order"] = []
        if self._surprising_side(state):
            state["initiative"] = None
            self._build_queue(state, events)
            state["phase"] = "resolution"
        else:
            state["phase"] = "initiative"
            events.append(event("declarations.closed", "Everyone has declared. The DM rolls initiative."))

    def _clean_action(self, state: State, cid: str, d: Mapping[str, Any]) -> dict[str, Any]:
        c = state["combatants"][cid]
        kind = d.get("kind")
        if kind not in ACTION_KINDS:
            raise InvalidDeclaration(f"kind must be one of {', '.join(ACTION_KINDS)} (got {kind!r})")
        letter = ACTION_KINDS[kind][0]
        out: dict[str, Any] = {"kind": kind, "letter": letter, "target": None, "prepared": False, "trigger": "",
                               "note": read.text(d, "note", 80)}
        target = d.get("target")
        if kind in TARGETED or (kind == "spell" and target):
            if not isinstance(target, str) or target not in state["combatants"]:
                raise InvalidDeclaration(f"{ACTION_KINDS[kind][1].lower()} needs a target combatant")
            t = state["combatants"][target]
            if t["condition"] in ("dead", "fled"):
                raise IllegalDeclaration(f"{t['name']} is no longer in the fight")
            if t["condition"] == "surrendered" and kind in ("melee", "missile", "charge"):
                raise IllegalDeclaration(f"{t['name']} has surrendered and is no longer a target")
            if kind in ("melee", "missile", "charge") and (target == cid or t["side"] == c["side"]):
                raise IllegalDeclaration(f"{c['name']} cannot attack {t['name']}, who is on the same side")
            seg = state["surprise"].get("segment") if self._surprising_side(state) else 0
            if seg and target != cid and t["reaction_mod"] >= seg:
                raise IllegalDeclaration(
                    f"{t['name']} reacts too fast to be targeted in surprise segment {seg}")
            out["target"] = target
        if kind == "spell":
            if not c["caster"]:
                raise IllegalDeclaration(f"{c['name']} does not cast spells")
            out["spell"] = read.text(d, "spell", 40) or "a spell"
            out["casting_time"] = read.whole(d, "casting_time", 1, 10, default=1)
            dmg = read.text(d, "damage", 12)
            if dmg:
                parse_dice(dmg)
            out["damage"] = dmg
        if kind == "missile" and _missile(c)["rate"] <= 0:
            raise IllegalDeclaration(f"{c['name']} has no missile weapon")
        if kind == "turn" and not c["caster"]:
            raise IllegalDeclaration(f"{c['name']} cannot turn undead")
        if kind == "psionic" and not c.get("psionic"):
            raise IllegalDeclaration(f"{c['name']} has no psionic powers")
        if kind in ("device", "custom"):
            out["segments"] = read.whole(d, "segments", 1, 10, default=1)
        if kind == "move" and (d.get("x") is not None or d.get("y") is not None):
            x = read.whole(d, "x", 0, state["grid"]["width"] - 1, default=0)
            y = read.whole(d, "y", 0, state["grid"]["height"] - 1, default=0)
            if [x, y] in state.get("blocked", []):
                raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
            way = terrain.path_length((c["x"], c["y"]), (x, y), terrain.blocked_of(state), state["grid"]["width"],
                                      state["grid"]["height"])
            if way is None:
                raise IllegalDeclaration(f"blocked squares leave {c['name']} no way to ({x}, {y})")
            dist = way
            limit = c["move"] / 10 if self._surprising_side(state) else c["move"]
            if dist > limit + 1e-9:
                raise IllegalDeclaration(f"{c['name']} can move at most {limit:g} inches now")
            out["x"], out["y"] = x, y
        if d.get("prepared"):
            if kind in ("none", "psionic"):
                raise IllegalDeclaration("only a real action can be prepared")
            out["prepared"] = True
            out["trigger"] = read.text(d, "trigger", 80) or "when the moment comes"
        return out

    def _describe(self, state: State, a: Mapping[str, Any], *, note: bool = True) -> str:
        """A declared action in words; ``note``: with the note written on it (the DM's notes on an
        NPC's action are the DM's alone: they never leave the DM's screen)."""
        kind = a["kind"]
        target = _label(a["target"], state) if a.get("target") else ""
        words = {
            "psionic": "psionic combat", "flee": "flee", "parley": "parley", "await": "wait and watch",
            "missile": f"shoot at {target}", "device": "use a device", "turn": f"turn {target}",
            "move": "move", "charge": f"charge {target}", "custom": "a task", "set": "set weapon against a charge",
            "melee": f"attack {target}", "none": "nothing",
        }.get(kind, kind)
        if kind == "spell":
            words = f"cast {a.get('spell', 'a spell')} ({a.get('casting_time', 1)} seg.)"
            if target:
                words += f" at {target}"
        if note and a.get("note"):
            words += f" ({a['note']})"
        if a.get("prepared"):
            words = f"prepare to {words}, {a.get('trigger')}"
        return f"[{a['letter']}] {words}"

    def _computer_declaration(self, state: State, cid: str, dice: DiceSource) -> dict[str, Any]:
        """A simple choice for a computer-run combatant, from what its side can see (positions)."""
        c = state["combatants"][cid]
        foes = [f for f in self._actors_all(state) if state["combatants"][f]["side"] != c["side"]]
        if self._surprising_side(state):
            seg = state["surprise"]["segment"]
            foes = [f for f in foes if state["combatants"][f]["reaction_mod"] < seg]
        if not foes:
            return _auto_decl("await", by="computer")
        best = min(chebyshev(c, state["combatants"][f]) for f in foes)
        near = [f for f in foes if chebyshev(c, state["combatants"][f]) == best]
        target = near[0]
        if len(near) > 1:
            target = near[dice.randint(1, len(near), f"{c['name']} picks a target").total - 1]
        if best <= 1:
            return _auto_decl("melee", target, by="computer")
        if _missile(c)["rate"] > 0:
            return _auto_decl("missile", target, by="computer")
        if c.get("morale") == "fall_back":
            return _auto_decl("await", by="computer")  # falling back: it fights where it stands, no charge
        return _auto_decl("charge", target, by="computer")

    def _actors_all(self, state: State) -> list[str]:
        return [cid for cid in state["order"] if state["combatants"][cid]["condition"] in ("ok", "down")]

    # --- phase 7: initiative, and the order of resolution --------------------------------------
    @contract.declaration("roll_initiative", by="gm")
    def _do_roll_initiative(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        self._expect(state, "initiative")
        ra = rolled_by(dice, "side:A").roll(1, 6, "initiative, side A")
        rb = rolled_by(dice, "side:B").roll(1, 6, "initiative, side B")
        faces = {"A": ra.total, "B": rb.total}
        winner = None if ra.total == rb.total else ("A" if ra.total > rb.total else "B")
        state["initiative"] = {"dice": faces, "winner": winner}
        if winner:
            text = f"Initiative: side A {ra.total}, side B {rb.total}. Side {winner} wins and acts first."
        else:
            text = f"Initiative: both sides rolled {ra.total}. A tie: both sides go letter by letter together."
        events.append(event("initiative.rolled", text, rolls=[ra, rb], dice=faces, winner=winner))
        self._build_queue(state, events)
        state["phase"] = "resolution"

    def _build_queue(self, state: State, events: list[Event]) -> None:
        init = state["initiative"]
        surprise_side = self._surprising_side(state)
        winner = init["winner"] if init else surprise_side
        tie = init is not None and init["winner"] is None
        faces = init["dice"] if init else {}
        combatants = state["combatants"]

        def block(side: str, letter: str) -> int:
            if letter == "P":
                return 0
            rank = LETTER_RANK[letter]
            return rank if tie or side == winner else 10 + rank

        tie_speeds = [WEAPONS[combatants[c]["weapon"]]["speed"] for c, a in state["declarations"].items()
                      if a["kind"] == "melee" and WEAPONS[combatants[c]["weapon"]]["speed"]]
        fastest = min(tie_speeds) if tie_speeds else 1
        queue: list[dict[str, Any]] = []
        for n, cid in enumerate(state["order"]):
            a = state["declarations"].get(cid)
            if a is None or a["kind"] == "none":
                continue
            c = combatants[cid]
            side, letter, delay = c["side"], a["letter"], a.get("delay", 0)
            why: list[str] = []
            if surprise_side:
                why.append(f"surprise segment {state['surprise']['segment']}: only side {side} acts")
            elif tie:
                why.append(f"tied initiative: letter {letter} for both sides")
            else:
                why.append(f"side {side} {'won' if side == winner else 'lost'} initiative: letter {letter}")
            always = False
            base = 1
            if surprise_side:
                base = 1
            elif a["kind"] == "spell":
                base = a["casting_time"]
                why.append(f"casting time {base} segment{'s' if base > 1 else ''}")
            elif a["kind"] in ("device", "custom"):
                base = a["segments"]
            elif a["kind"] == "charge":
                arrival = self._arrival(state, cid, a["target"])
                base = arrival or 10
                why.append(f"reaches striking range in segment {arrival}" if arrival
                           else "too far to reach the target this round")
            elif a["kind"] == "melee" and tie:
                speed = WEAPONS[c["weapon"]]["speed"]
                if speed:
                    base = speed
                    why.append(f"weapon speed factor {speed}")
                else:
                    base, always = fastest, True
                    why.append("no speed factor: always strikes on a tie, with the fastest weapons")
            seg = base + delay
            if delay:
                why.append(f"{delay} segment{'s' if delay > 1 else ''} late for slow declaring")
            act = {
                "id": f"{state['round']}.{state['surprise'].get('segment', 0)}.{cid}", "combatant": cid,
                "side": side, "letter": letter, "kind": a["kind"], "target": a.get("target"),
                "segment": seg, "key": [block(side, letter), seg, 0], "n": n, "status": "pending",
                "why": why, "hidden": c["controller"] != "seat", "prepared": a.get("prepared", False),
                "trigger": a.get("trigger", ""), "attacks": c["attacks"] if a["kind"] == "melee" else 1,
                "always": always, "delay": delay, "label": self._describe(state, a),
                # the label the table sees once the action is out: an NPC's without the DM's note
                "told": self._describe(state, a, note=c["controller"] == "seat"),
            }
            for k in ("spell", "casting_time", "damage", "segments", "x", "y", "continuing", "note", "morale"):
                if k in a:
                    act[k] = a[k]
            if a.get("morale"):
                what = "retreats" if a["morale"] == "retreat" else "flees in panic"
                why.append(f"lost heart (morale failed by {a.get('morale_margin', 0)}): {what}")
            if seg > 10 and a["kind"] == "melee":
                # ruling AD&D-8: the number orders blows, it does not place them in segments
                why.append(f"order {seg}: after every faster blow, still this round")
            elif seg > 10:
                act["status"] = "lost"
                why.append("that pushes it past segment 10: the action is lost this round")
            queue.append(act)
        if not surprise_side:
            self._out_of_sequence(state, queue, faces, winner, tie)
        queue.sort(key=lambda a: (tuple(a["key"]), a["n"]))
        state["queue"] = queue

    def _arrival(self, state: State, cid: str, target: str, limit: int = 10) -> int | None:
        c, t = state["combatants"][cid], state["combatants"][target]
        way = self._charge_way(state, cid, target)
        if way is None:
            return None
        return arrival_segment(distance_squares=(t["x"] - c["x"], t["y"] - c["y"]), move=c["move"],
                               scale=state["scale"], length=Fraction(str(WEAPONS[c["weapon"]]["length"])),
                               limit=limit, way_squares=way[1])

    def _charge_way(self, state: State, cid: str, target: str) -> tuple[list[tuple[int, int]], float | None] | None:
        """The corners of a charger's way to its target around blocked squares and its length in squares
        (None for a straight line in plain sight, which the straight formula measures), or None: no way."""
        c, t = state["combatants"][cid], state["combatants"][target]
        a, b = (c["x"], c["y"]), (t["x"], t["y"])
        blocked = terrain.blocked_of(state) - {b}
        if terrain.line_clear(a, b, blocked):
            return [a, b], None
        corners = terrain.path(a, b, blocked, state["grid"]["width"], state["grid"]["height"])
        if corners is None:
            return None
        length = sum(math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in zip(corners, corners[1:], strict=False))
        return corners, length

    def _out_of_sequence(self, state: State, queue: list[dict[str, Any]], faces: Mapping[str, int],
                         winner: str | None, tie: bool) -> None:
        combatants = state["combatants"]
        live = [a for a in queue if a["status"] == "pending"]
        caster_act = {a["combatant"]: a for a in live if a["kind"] in ("spell", "device")}

        def other(side: str) -> str:
            return "B" if side == "A" else "A"

        def place(a: dict[str, Any], anchor: dict[str, Any], offset: int, reason: str) -> None:
            a["key"] = [anchor["key"][0], anchor["key"][1], anchor["key"][2] + offset]
            a["why"].append(reason)

        def before(a: dict[str, Any], b: dict[str, Any]) -> bool:
            return (tuple(a["key"]), a["n"]) < (tuple(b["key"]), b["n"])

        # missiles shifted by the shooter's reaction adjustment
        for a in live:
            if a["kind"] != "missile":
                continue
            mod = combatants[a["combatant"]]["reaction_mod"]
            own, enemy = faces[a["side"]] + mod, faces[other(a["side"])]
            if mod == 0:
                continue
            # (the reaction adjustment is the shooter's own number: an NPC's reasons have words for the table)
            if tie:
                a["key"][2] += -1 if mod > 0 else 1
                then = f"shoots {'before' if mod > 0 else 'after'} the other missiles"
                _add_reason(state, a, f"reaction adjustment {mod:+d}: {then}", f"reaction adjustment: {then}")
            elif a["side"] != winner and own >= enemy:
                a["key"] = [LETTER_RANK["D"], a["key"][1], -1 if own > enemy else 0]
                then = f"shoots {'before' if own > enemy else 'together with'} the winning side's missiles"
                _add_reason(state, a, f"die {faces[a['side']]}{mod:+d} = {own} against {enemy}: {then}",
                            f"die {faces[a['side']]} and its reaction adjustment against {enemy}: {then}")
            elif a["side"] == winner and own < enemy:
                # ruling AD&D-9: after the losing side's whole turn, its melee blows included
                a["key"] = [AFTER_BOTH_SIDES, a["key"][1], 0]
                then = f"after everything side {other(a['side'])} does this round"
                _add_reason(state, a, f"shoots last: reaction {_minus(mod)} + {faces[a['side']]} < {enemy}, {then}",
                            f"shoots last: its reaction adjustment leaves die {faces[a['side']]} short of {enemy}, {then}")
            elif a["side"] == winner and own == enemy:
                a["key"] = [10 + LETTER_RANK["D"], a["key"][1], 0]
                then = "shoots together with the losing side's missiles"
                _add_reason(state, a, f"die {faces[a['side']]}{mod:+d} = {own} against {enemy}: {then}",
                            f"die {faces[a['side']]} and its reaction adjustment against {enemy}: {then}")
        # spell against spell, casters targeting each other
        for a in live:
            b = caster_act.get(a.get("target") or "")
            if a["kind"] != "spell" or b is None or b["kind"] != "spell" or b.get("target") != a["combatant"]:
                continue
            if a["n"] > b["n"]:
                continue
            if a["segment"] != b["segment"]:
                fast, slow = (a, b) if a["segment"] < b["segment"] else (b, a)
                if not before(fast, slow):
                    place(slow, fast, 1, f"casting time {slow['segment']} is longer than "
                                         f"{_label(fast['combatant'], state)}'s {fast['segment']}")
            elif faces.get(a["side"]) == faces.get(b["side"]):
                b["key"] = list(a["key"])
                a["why"].append("same casting time and same initiative: both spells go off together")
                b["why"].append("same casting time and same initiative: both spells go off together")
            else:
                high, low = (a, b) if faces[a["side"]] > faces[b["side"]] else (b, a)
                if not before(high, low):
                    place(low, high, 1, "same casting time: the higher initiative die finishes first")
        # on a tie, missiles or turning against a spell: the caster's die against the casting time
        if tie:
            for m in live:
                s = caster_act.get(m.get("target") or "")
                if s is None and m["kind"] in ("missile", "turn"):
                    s = next((x for x in live if x["kind"] == "spell" and x.get("target") == m["combatant"]), None)
                if m["kind"] not in ("missile", "turn") or s is None or s["side"] == m["side"]:
                    continue
                self._order_against_caster(state, m, s, faces[s["side"]], "the caster's initiative die", place)
        # charges against casters, then missiles and turning against chargers
        for a in live:
            s = caster_act.get(a.get("target") or "")
            if a["kind"] == "charge" and s is not None:
                self._order_against_caster(state, a, s, a["segment"], "the charge's arrival segment", place)
        for a in live:
            if a["kind"] not in ("missile", "turn"):
                continue
            charge = next((x for x in live if x["combatant"] == a.get("target") and x["kind"] == "charge"), None)
            if charge is not None and not before(a, charge):
                place(a, charge, -1, f"aimed at {_label(charge['combatant'], state)}, who charges: "
                                     "missiles and turning come first")
        # a blow aimed at a charger still out of reach waits for the charge to arrive
        for a in live:
            if a["kind"] != "melee":
                continue
            charge = next((x for x in live if x["combatant"] == a.get("target") and x["kind"] == "charge"), None)
            if charge is None or chebyshev(combatants[a["combatant"]], combatants[charge["combatant"]]) <= 1:
                continue
            if before(a, charge):
                place(a, charge, 1, f"{_label(charge['combatant'], state)} is charging from out of reach: "
                                    "this blow waits for the charge to arrive")
        # melee against a caster: speed factor (or the caster's die) against the casting time
        for a in live:
            s = caster_act.get(a.get("target") or "")
            if a["kind"] != "melee" or s is None or s["side"] == a["side"]:
                continue
            speed = WEAPONS[combatants[a["combatant"]]["weapon"]]["speed"]
            if speed:
                value, what = speed + a["delay"], f"speed factor {speed}"
            else:
                value, what = faces[s["side"]] + a["delay"], "the caster's initiative die"
            a["segment"] = value
            self._order_against_caster(state, a, s, value, what, place)
        # multiple attack routines: one blow slips in before the enemy's first
        if not tie:
            for a in list(live):
                if a["kind"] != "melee" or a["attacks"] < 2 or a["side"] == winner:
                    continue
                if a.get("target") in caster_act:
                    continue
                enemy = [x for x in live if x["kind"] == "melee" and x["side"] == winner
                         and x["status"] == "pending"]
                if not enemy:
                    continue
                first = min(enemy, key=lambda x: (tuple(x["key"]), x["n"]))
                part = copy.deepcopy(a)
                part.update({"id": a["id"] + ".1", "attacks": 1, "why": list(a["why"])})
                place(part, first, -1, f"{a['attacks']} attack routines: one blow slips in just before "
                                       f"{_label(first['combatant'], state)}'s first")
                a["attacks"] -= 1
                queue.append(part)
        # option (ruling AD&D-7): a much faster weapon strikes twice before the slower on a tie, and
        # a third time with it when 10 or more faster; never while either of the two is closing or charging
        if tie and state["options"].get("fast_weapon_extra"):
            by_cid = {a["combatant"]: a for a in live if a["kind"] == "melee"}
            for a in list(live):
                t = by_cid.get(a.get("target") or "")
                if a["kind"] != "melee" or t is None:
                    continue
                mine = WEAPONS[combatants[a["combatant"]]["weapon"]]["speed"]
                theirs = WEAPONS[combatants[t["combatant"]]["weapon"]]["speed"]
                if not mine or not theirs or mine >= theirs:
                    continue
                if theirs - mine >= 10:
                    reason = "10 or more faster"
                elif theirs >= 2 * mine:
                    reason = "at most half"
                elif theirs - mine >= 5:
                    reason = "5 or more faster"
                else:
                    continue
                closing = [x for x in (a, t) if not self._in_striking_range(state, x["combatant"], x["target"])]
                if closing:
                    who = _label(closing[0]["combatant"], state)
                    a["why"].append(f"{who} is closing to striking range: no extra blows this round (option)")
                    continue
                name = _label(t["combatant"], state)
                a["attacks"] += 1
                a["why"].append(f"speed factor {mine} against {theirs}: {reason}, two blows first (option)")
                if theirs - mine >= 10:
                    part = copy.deepcopy(a)
                    part.update({"id": a["id"] + ".3", "attacks": 1, "segment": t["segment"], "why": a["why"][:-1]})
                    place(part, t, 0, f"speed factor {mine} against {theirs}: 10 or more faster, a third blow "
                                      f"with {name}'s (option)")
                    queue.append(part)

    def _in_striking_range(self, state: State, cid: str, target: str) -> bool:
        """Side by side, or within the weapon's length base to base (a melee blow needs no closing)."""
        c, t = state["combatants"][cid], state["combatants"][target]
        if chebyshev(c, t) <= 1:
            return True
        per_inch = FEET_PER_INCH[state["scale"]]
        gap = math.hypot(t["x"] - c["x"], t["y"] - c["y"]) * per_inch - per_inch
        return gap <= float(WEAPONS[c["weapon"]]["length"]) + 1e-9

    def _order_against_caster(self, state: State, a: dict[str, Any], spell: dict[str, Any], value: int,
                              what: str, place: Any) -> None:
        """Order action ``a`` against the spell (or device) it is aimed at: shorter time goes first."""
        cast = spell["segment"]
        name = _label(spell["combatant"], state)
        key_a, key_s = (tuple(a["key"]), a["n"]), (tuple(spell["key"]), spell["n"])
        if cast < value:
            if key_a < key_s:
                place(a, spell, 1, f"{name}'s casting time {cast} is shorter than {what} ({value}): "
                                   "the spell goes first")
            else:
                a["why"].append(f"{name}'s casting time {cast} is shorter than {what} ({value})")
        elif cast == value:
            place(a, spell, 0, f"{name}'s casting time {cast} equals {what}: both happen together")
        elif key_a > key_s:
            place(a, spell, -1, f"{what} ({value}) beats {name}'s casting time {cast}: this comes first")
        else:
            a["why"].append(f"{what} ({value}) beats {name}'s casting time {cast}")

    # --- phase 8: resolution -------------------------------------------------------------------
    def _next_group(self, state: State) -> list[dict[str, Any]]:
        pending = [a for a in state["queue"] if a["status"] == "pending"]
        if not pending:
            return []
        first = min(pending, key=lambda a: (tuple(a["key"]), a["n"]))
        return [a for a in pending if a["key"] == first["key"]]

    @contract.declaration("resolve_next", by="gm")
    def _do_resolve_next(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "resolution")
        group = self._next_group(state)
        if group:
            self._resolve_group(state, group, dice, events)
        if not self._next_group(state):
            self._end_resolution(state, dice, events)

    @contract.declaration("resolve_all", by="gm")
    def _do_resolve_all(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        self._expect(state, "resolution")
        for _ in range(500):
            if state["phase"] != "resolution":
                break
            self._do_resolve_next(state, d, viewer, dice, events)

    def _resolve_group(self, state: State, group: list[dict[str, Any]], dice: DiceSource,
                       events: list[Event]) -> None:
        state["last_key"] = list(group[0]["key"])
        shown = [a for a in group if not (a["prepared"] and not a.get("triggered"))]
        if len(shown) > 1:
            names = ", ".join(_label(a["combatant"], state) for a in shown)
            events.append(event("actions.simultaneous", f"At the same moment: {names}. All of it happens.",
                                combatants=[a["combatant"] for a in shown]))
        hits: list[tuple[str, int, str]] = []
        finishing = {a["combatant"] for a in group if a["kind"] == "spell"}
        able_at_start = {a["combatant"]: _able(state["combatants"][a["combatant"]]) for a in group}
        for a in group:
            c = state["combatants"][a["combatant"]]
            if not able_at_start[a["combatant"]]:
                a["status"] = "lost"
                events.append(event("action.lost", f"{c['name']} is {c['condition']}: the action is lost.",
                                    combatant=a["combatant"], action=a["id"]))
                continue
            if a["prepared"] and not a.get("triggered"):
                a["status"] = "readied"
                events.append(event("action.readied", f"{c['name']} is ready to act: {a['label']}.",
                                    visibility=self._decl_visibility(state, a["combatant"]),
                                    combatant=a["combatant"], action=a["id"]))
                continue
            a["status"] = "resolved"
            self._resolve_action(state, a, dice, events, hits)
        for target, amount, source in hits:
            self._damage(state, target, amount, source, events, spare=finishing)

    def _resolve_action(self, state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                        hits: list[tuple[str, int, str]]) -> None:
        cid, kind = a["combatant"], a["kind"]
        c = state["combatants"][cid]
        why = self._why_text(a)
        data = {"combatant": cid, "action": a["id"], "letter": a["letter"], "segment": a["segment"], "why": a["why"]}
        if kind == "melee":
            w = _weapon(c)
            events.append(event("action.resolved", f"{c['name']} strikes at {_label(a['target'], state)}{why}.",
                                **data))
            for amount in self._attack(state, cid, a["target"], w["label"].lower(), w["damage"], a["attacks"],
                                       c["to_hit_bonus"], c["damage_bonus"], dice, events):
                hits.append((a["target"], amount, c["name"]))
        elif kind == "missile":
            m = _missile(c)
            shoots = f"{c['name']} shoots {m['rate']} time{'s' if m['rate'] > 1 else ''} at {_label(a['target'], state)} ({m['label'].lower()})"
            told_why = self._why_text(a, told=True)  # an NPC's reaction adjustment is the DM's
            events.append(event("action.resolved", f"{shoots}{why}.", visibility=PUBLIC if told_why == why else GM_ONLY,
                                others=told(f"{shoots}{told_why}.", **{**data, "why": _told_why(a)}), **data))
            for amount in self._attack(state, cid, a["target"], m["label"].lower(), m["damage"], m["rate"],
                                       c["to_hit_bonus"], 0, dice, events):
                hits.append((a["target"], amount, c["name"]))
        elif kind == "charge":
            self._resolve_charge(state, a, dice, events, why)
        elif kind == "spell":
            self._resolve_spell(state, a, dice, events, hits, why)
        elif kind == "flee":
            c["condition"] = "fled"
            if self._surprising_side(state) and state["scale"] == "outdoors":
                why = " (outdoors, with the foe surprised, the encounter is simply avoided)"
            verb = {"retreat": "disengages and retreats from the fight",
                    "panic": "flees the fight in panic"}.get(a.get("morale") or "", "flees the fight")
            events.append(event("combatant.fled", f"{c['name']} {verb}{why}.", **data))
        elif kind == "move":
            if a.get("x") is not None:
                c["x"], c["y"] = a["x"], a["y"]
                text = f"{c['name']} moves to square {a['x']}, {a['y']}{why}."
            else:
                text = f"{c['name']} moves (the DM places the token){why}."
            events.append(event("combatant.moved", text, **data))
        elif kind == "turn":
            roll = rolled_by(dice, cid).roll(1, 20, f"{c['name']} turns undead")
            events.append(event("turning.attempted",
                                f"{c['name']} presents a holy symbol to {_label(a['target'], state)} and rolls "
                                f"{roll.total}; the DM reads the turning table{why}.", rolls=[roll], **data))
        elif kind in ("device", "custom") and self._surprising_side(state) and a.get("segments", 1) > 1:
            remaining = a["segments"] - 1
            state["casting"][cid] = {"kind": kind, "spell": "a task", "remaining": remaining, "note": a.get("note", "")}
            events.append(event("task.started", f"{c['name']} {'carries on' if a.get('continuing') else 'starts'} "
                                                f"{'using a device' if kind == 'device' else 'a task'}: {remaining} more "
                                                f"segment{'s' if remaining > 1 else ''} to go.", **data))
        else:
            if kind in ("device", "custom"):
                state["casting"].pop(cid, None)
            words = {"psionic": "psionic combat", "parley": "calls for a parley", "await": "waits and watches",
                     "device": "uses a device", "custom": "finishes the task", "set": "sets a weapon against "
                     "a charge"}.get(kind, kind)
            noted = f" ({a['note']})" if a.get("note") else ""
            private = bool(noted) and c["controller"] != "seat"  # the DM's note on an NPC's action
            events.append(event("action.resolved", f"{c['name']} {words}{noted}{why}.", visibility=GM_ONLY if private else PUBLIC,
                                others=told(f"{c['name']} {words}{why}.", **data), **data))

    def _why_text(self, a: Mapping[str, Any], *, told: bool = False) -> str:
        """The reasons after an action's first, for its log line (``told``: as the table hears them)."""
        extra = [w for w in (_told_why(a) if told else a["why"])[1:] if w]
        return f" ({'; '.join(extra)})" if extra else ""

    def _attack(self, state: State, cid: str, target: str, with_what: str, damage: str, count: int,
                to_hit: int, bonus: int, dice: DiceSource, events: list[Event]) -> list[int]:
        c, t = state["combatants"][cid], state["combatants"][target]
        if t["condition"] in ("dead", "fled"):
            events.append(event("attack.wasted", f"{t['name']} is {t['condition']}: {c['name']}'s attack finds "
                                                 "nobody.", attacker=cid, target=target))
            return []
        if t["condition"] == "surrendered":
            shot = with_what in {m["label"].lower() for m in MISSILES.values()}
            events.append(event("attack.held", f"{t['name']} has surrendered: {c['name']} holds "
                                               f"{'fire' if shot else 'the blow'}.", attacker=cid, target=target))
            return []
        need = c["thac0"] - t["ac"]
        # the number needed tells an NPC's THAC0 or AC: the whole line for the DM when either is one
        shown = self._stats_visibility(state, cid, target)
        n, sides, mod = parse_dice(damage)
        dealt = []
        for _ in range(count):
            roll = rolled_by(dice, cid).roll(1, 20, f"{c['name']} attacks {t['name']}", to_hit)
            if roll.total >= need:
                dmg = rolled_by(dice, cid).roll(n, sides, f"{c['name']}'s {with_what} damage", mod + bonus)
                amount = max(1, dmg.total)
                dealt.append(amount)
                hit = f"{c['name']} hits {t['name']} with the {with_what}: "
                events.append(event("attack.hit", f"{hit}{roll.total} against {need} needed, {amount} damage.", visibility=shown,
                                    others=told(f"{hit}rolled {roll.total}, {amount} damage.", rolls=[roll, dmg], attacker=cid, target=target,
                                                damage=amount),
                                    rolls=[roll, dmg], attacker=cid, target=target, damage=amount))
            else:
                miss = f"{c['name']} misses {t['name']}: "
                events.append(event("attack.missed", f"{miss}{roll.total} against {need} needed.", visibility=shown,
                                    others=told(f"{miss}rolled {roll.total}.", rolls=[roll], attacker=cid, target=target),
                                    rolls=[roll], attacker=cid, target=target))
        return dealt

    def _damage(self, state: State, target: str, amount: int, source: str, events: list[Event],
                spare: set[str] | frozenset[str] = frozenset()) -> None:
        t = state["combatants"][target]
        if t["condition"] in ("dead", "fled"):
            return
        before = t["hp"]
        t["hp"] -= amount
        t["stable"] = False
        words = self._condition_after(state, target)
        # an NPC's hit points are the DM's: the table hears the damage and what it did
        events.append(event("damage.dealt", f"{t['name']} takes {amount} damage from {source} "
                                            f"({before} to {t['hp']}){words}.", visibility=self._stats_visibility(state, target),
                            others=told(f"{t['name']} takes {amount} damage from {source}{words}.", combatant=target, amount=amount),
                            combatant=target, amount=amount, hp=t["hp"]))
        if target in spare:
            return
        lost = [a for a in state["queue"] if a["combatant"] == target and a["kind"] == "spell"
                and a["status"] in ("pending", "readied")]
        for a in lost:
            a["status"] = "lost"
            a["why"].append("the caster was hurt before the spell was done")
            events.append(event("spell.lost", f"{t['name']} is hurt before {a.get('spell', 'the spell')} is "
                                              "done: the spell is lost.", combatant=target, action=a["id"]))
        if target in state["casting"] and not lost:
            spell = state["casting"].pop(target)
            events.append(event("spell.lost", f"{t['name']} is hurt while casting {spell['spell']}: the spell is "
                                              "lost.", combatant=target))
        elif target in state["casting"]:
            state["casting"].pop(target)

    def _condition_after(self, state: State, cid: str) -> str:
        t = state["combatants"][cid]
        if t["hp"] > 0:
            return ""
        if t["dies_at_zero"] or t["hp"] <= -10:
            t["condition"] = "dead"
            return " and dies"
        t["condition"] = "down"
        return " and falls unconscious" + (", bleeding" if t["hp"] < 0 else "")

    def _resolve_spell(self, state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                       hits: list[tuple[str, int, str]], why: str) -> None:
        cid = a["combatant"]
        c = state["combatants"][cid]
        data = {"combatant": cid, "action": a["id"], "letter": "D", "segment": a["segment"], "why": a["why"]}
        if self._surprising_side(state) and a["casting_time"] > 1:
            remaining = a["casting_time"] - 1
            state["casting"][cid] = {"spell": a["spell"], "target": a.get("target"), "damage": a.get("damage", ""),
                                     "remaining": remaining}
            verb = "keeps casting" if a.get("continuing") else "begins to cast"
            events.append(event("spell.started", f"{c['name']} {verb} {a['spell']}: {remaining} more "
                                                 f"segment{'s' if remaining > 1 else ''} to go.", **data))
            return
        state["casting"].pop(cid, None)
        target = a.get("target")
        at = f" at {_label(target, state)}" if target else ""
        events.append(event("spell.completed", f"{c['name']}'s {a['spell']} goes off{at}{why}.", **data))
        if a.get("damage") and target:
            n, sides, mod = parse_dice(a["damage"])
            roll = rolled_by(dice, cid).roll(n, sides, f"{c['name']}'s {a['spell']}", mod)
            amount = max(1, roll.total)
            events.append(event("spell.damaged", f"{a['spell']} deals {amount} damage to {_label(target, state)}.",
                                rolls=[roll], combatant=cid, target=target, damage=amount))
            hits.append((target, amount, f"{c['name']}'s {a['spell']}"))

    def _resolve_charge(self, state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                        why: str) -> None:
        cid, target = a["combatant"], a["target"]
        c, t = state["combatants"][cid], state["combatants"][target]
        data = {"combatant": cid, "action": a["id"], "letter": "E", "segment": a["segment"], "why": a["why"]}
        if t["condition"] in ("dead", "fled"):
            events.append(event("charge.wasted", f"{c['name']} charges, but {t['name']} is {t['condition']}.",
                                **data))
            return
        surprise = bool(self._surprising_side(state))
        limit = 1 if surprise else max(1, 10 - a["delay"])
        arrival = self._arrival(state, cid, target, limit)
        if arrival is None:
            segs = limit
            self._move_toward(state, cid, target, Fraction(charge_per_segment_feet(c["move"], state["scale"]) * segs,
                                                           FEET_PER_INCH[state["scale"]]))
            events.append(event("charge.fell_short", f"{c['name']} charges {t['name']} but does not reach "
                                                     f"striking range this {'segment' if surprise else 'round'}.",
                                **data))
            return
        self._move_beside(state, cid, target)
        seg = arrival + (0 if surprise else a["delay"])
        seg = max(seg, a["segment"]) if not surprise else seg
        why = self._why_text({"why": [w for w in a["why"] if not w.startswith("reaches striking")]})
        events.append(event("charge.arrived", f"{c['name']} charges {t['name']} and reaches striking range in "
                                              f"segment {seg}{why}.", **data))
        fighters = [(cid, target)] + [(r, cid) for r in self._retaliators(state, cid, target, spend=True)]
        lengths = sorted({Fraction(str(WEAPONS[state["combatants"][f]["weapon"]]["length"])) for f, _ in fighters},
                         reverse=True)
        if len(fighters) > 1:
            order = "; ".join(
                f"{_label(f, state)} ({WEAPONS[state['combatants'][f]['weapon']]['label'].lower()}, "
                f"{float(Fraction(str(WEAPONS[state['combatants'][f]['weapon']]['length']))):g} ft)"
                for f, _ in sorted(fighters, key=lambda p: -Fraction(str(
                    WEAPONS[state["combatants"][p[0]]["weapon"]]["length"]))))
            events.append(event("charge.met", f"Blows against the charge go by weapon length, longest first: "
                                              f"{order}.", combatant=cid))
        ready = {f: f == cid or _able(state["combatants"][f]) for f, _ in fighters}
        for length in lengths:
            hits: list[tuple[str, int, str]] = []
            for f, foe in fighters:
                fc = state["combatants"][f]
                if Fraction(str(WEAPONS[fc["weapon"]]["length"])) != length or not ready[f]:
                    continue
                w = _weapon(fc)
                for amount in self._attack(state, f, foe, w["label"].lower(), w["damage"], 1, fc["to_hit_bonus"],
                                           fc["damage_bonus"], dice, events):
                    hits.append((foe, amount, fc["name"]))
            for foe, amount, source in hits:
                self._damage(state, foe, amount, source, events)
                if not _able(state["combatants"][foe]):
                    ready[foe] = False

    def _retaliators(self, state: State, cid: str, target: str, spend: bool = False) -> list[str]:
        """Who strikes back at a charge: the target and foes of the charger within 1 inch of it who set a
        weapon, wait, or meant to strike the charger (that blow is spent on the charge)."""
        charger = state["combatants"][cid]
        t = state["combatants"][target]
        found = []
        for rid in state["order"]:
            r = state["combatants"][rid]
            if rid == cid or r["side"] == charger["side"] or not _able(r):
                continue
            if rid != target and not self._touching(state, r, t):
                continue
            decl = state["declarations"].get(rid)
            if state["phase"] not in ("resolution",) or decl is None:
                found.append(rid)
                continue
            acts = [a for a in state["queue"] if a["combatant"] == rid and a["status"] != "cancelled"]
            if decl["kind"] in ("set", "await"):
                found.append(rid)
            elif decl["kind"] == "melee" and decl.get("target") == cid:
                pending = [a for a in acts if a["kind"] == "melee" and a["status"] == "pending"]
                if pending:
                    found.append(rid)
                    if spend:
                        p = pending[-1]
                        if p["attacks"] > 1:
                            p["attacks"] -= 1
                        else:
                            p["status"] = "resolved"
                            p["why"].append("spent against the charge")
        return found

    def _touching(self, state: State, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        """Within an inch (touching squares), not parted by two blocked squares corner to corner."""
        if chebyshev(a, b) > 1:
            return False
        if not state.get("blocked"):
            return True
        return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                     state["grid"]["width"], state["grid"]["height"]) == 1

    def _move_beside(self, state: State, cid: str, target: str) -> None:
        c, t = state["combatants"][cid], state["combatants"][target]
        if self._touching(state, c, t):
            return
        blocked = terrain.blocked_of(state)
        taken = {(o["x"], o["y"]) for k, o in state["combatants"].items() if k != cid and o["condition"] != "fled"}
        cells = [(t["x"] + dx, t["y"] + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
        cells = [p for p in cells if 0 <= p[0] < state["grid"]["width"] and 0 <= p[1] < state["grid"]["height"]
                 and p not in taken and p not in blocked and self._touching(state, {"x": p[0], "y": p[1]}, t)]
        if blocked:  # the square beside the target at the end of the shortest way round
            lengths = terrain.path_lengths((c["x"], c["y"]), blocked, state["grid"]["width"], state["grid"]["height"])
            cells = [p for p in cells if p in lengths]
            if not cells:
                return
            x, y = min(cells, key=lambda p: (lengths[p], p))
        else:
            x, y = min(cells or [(t["x"], t["y"])], key=lambda p: ((p[0] - c["x"]) ** 2 + (p[1] - c["y"]) ** 2, p))
        c["x"], c["y"] = x, y

    def _move_toward(self, state: State, cid: str, target: str, inches: Fraction) -> None:
        c, t = state["combatants"][cid], state["combatants"][target]
        way = self._charge_way(state, cid, target)
        if way is None:  # blocked squares leave no way: the charger stays where it is
            return
        if way[1] is not None:  # along the way round the blocked squares
            self._walk_along(state, cid, way[0], float(inches))
            return
        dx, dy = t["x"] - c["x"], t["y"] - c["y"]
        dist = math.hypot(dx, dy)
        if dist == 0:
            return
        f = min(1.0, float(inches) / dist)
        c["x"], c["y"] = c["x"] + int(dx * f), c["y"] + int(dy * f)

    def _walk_along(self, state: State, cid: str, corners: list[tuple[int, int]], inches: float) -> None:
        """Set a token down at the farthest free square it passes within ``inches`` along a way."""
        c = state["combatants"][cid]
        blocked = terrain.blocked_of(state)
        taken = {(o["x"], o["y"]) for k, o in state["combatants"].items() if k != cid and o["condition"] != "fled"}
        best = (c["x"], c["y"])
        travelled = 0.0
        while travelled <= inches + 1e-9:
            px, py = terrain.point_along(corners, travelled)
            sq = (math.floor(px + 0.5), math.floor(py + 0.5))
            if sq not in blocked and sq not in taken and sq != corners[-1]:
                best = sq
            travelled += 0.25
        c["x"], c["y"] = best

    def _end_resolution(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        for a in state["queue"]:
            if a["status"] == "readied":
                a["status"] = "lapsed"
                events.append(event("action.lapsed", f"{_label(a['combatant'], state)}'s prepared action was never "
                                                     "triggered.", visibility=self._decl_visibility(state, a["combatant"]),
                                    combatant=a["combatant"]))
        sur = state["surprise"]
        if self._surprising_side(state):
            if sur["segment"] < sur["segments"]:
                sur["segment"] += 1
                events.append(event("surprise.segment_started", f"Surprise segment {sur['segment']} of "
                                                                f"{sur['segments']}."))
            else:
                sur["segment"] = 0
                state["round"] = 1
                events.append(event("surprise.ended", "The surprise is over. Round 1 begins."))
            self._open_declarations(state, dice, events)
            return
        state["phase"] = "bleeding"
        events.append(event("resolution.finished", f"Every action of round {state['round']} is resolved."))

    def _find_act(self, state: State, cid: str, statuses: tuple[str, ...]) -> dict[str, Any]:
        acts = [a for a in state["queue"] if a["combatant"] == cid and a["status"] in statuses]
        if not acts:
            raise IllegalDeclaration(f"{_label(cid, state)} has no action that can be {'triggered' if statuses == ('readied',) else 'called off'} now")
        return acts[0]

    @contract.declaration("cancel")
    def _do_cancel(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        self._expect(state, "resolution")
        cid = self._own(state, d, viewer)
        acts = [a for a in state["queue"] if a["combatant"] == cid and a["status"] in ("pending", "readied")
                and a["kind"] != "flee"]
        if not acts:
            raise IllegalDeclaration(f"{_label(cid, state)} has no action left to call off")
        for a in acts:
            a["status"] = "cancelled"
        state["casting"].pop(cid, None)
        events.append(event("action.cancelled", f"{_label(cid, state)} calls off the declared action.",
                            combatant=cid))
        if not self._next_group(state):
            self._end_resolution(state, dice, events)

    @contract.declaration("trigger")
    def _do_trigger(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        self._expect(state, "resolution")
        cid = self._own(state, d, viewer)
        a = self._find_act(state, cid, ("readied",))
        a["triggered"] = True
        told_label = a.get("told", a["label"])
        events.append(event("action.triggered", f"{_label(cid, state)}'s trigger comes: {a['label']}.",
                            visibility=PUBLIC if told_label == a["label"] else GM_ONLY,
                            others=told(f"{_label(cid, state)}'s trigger comes: {told_label}.", combatant=cid),
                            combatant=cid))
        if a["kind"] == "spell" and not self._surprising_side(state):
            last = state["last_key"] or a["key"]
            seg = min(10, last[1] + a["casting_time"])
            a.update({"status": "pending", "segment": seg, "key": [last[0], seg, 0]})
            a["why"].append(f"casting starts now and ends in segment {seg}")
            return
        a["status"] = "pending"
        self._resolve_group(state, [a], dice, events)
        if not self._next_group(state):
            self._end_resolution(state, dice, events)

    def _own(self, state: State, d: Mapping[str, Any], viewer: Viewer) -> str:
        cid = read.combatant(d, "combatant", state)
        if not viewer.controls(state, cid):
            raise IllegalDeclaration("you can act only for your own combatants")
        return cid

    # --- phases 9 to 11 ------------------------------------------------------------------------
    def _bleeders(self, state: State) -> list[str]:
        at_zero = state["options"].get("bleed_at_zero")
        out = []
        for cid in state["order"]:
            c = state["combatants"][cid]
            start = state["round_start_hp"].get(cid, c["hp"])
            if c["condition"] == "down" and not c["stable"] and (start < 0 or (at_zero and start <= 0)):
                out.append(cid)
        return out

    @contract.declaration("bleed", by="gm")
    def _do_bleed(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        self._expect(state, "bleeding")
        if not self._skip(state, "bleeding", d, events):
            bleeders = self._bleeders(state)
            for cid in bleeders:
                c = state["combatants"][cid]
                c["hp"] -= 1
                words = self._condition_after(state, cid)
                dies = " and dies" if "dies" in words else ""
                events.append(event("combatant.bled", f"{c['name']} bleeds: 1 hit point lost ({c['hp']}){dies}.",
                                    visibility=self._stats_visibility(state, cid),
                                    others=told(f"{c['name']} bleeds: 1 hit point lost{dies}.", combatant=cid),
                                    combatant=cid, hp=c["hp"]))
            if not bleeders:
                events.append(event("bleeding.checked", "Nobody is bleeding."))
        self._make_recap(state)
        state["phase"] = "recap"
        events.append(event("recap.ready", f"Recap of round {state['round']} is ready."))

    def _standing(self, state: State) -> dict[str, int]:
        return {side: sum(1 for c in state["combatants"].values() if c["side"] == side and _able(c))
                for side in self.sides}

    def _make_recap(self, state: State) -> None:
        skip = {"declaration.made", "declaration.noted", "clock.paused", "clock.resumed", "recap.ready",
                "declarations.closed", "action.resolved", "actions.simultaneous"}
        lines = [dict(e) for e in state["round_log"] if e["type"] not in skip]
        for side in self.sides:
            members = [c for c in (state["combatants"][k] for k in state["order"]) if c["side"] == side]
            public = ", ".join(f"{c['name']} {self._condition_word(c)}" for c in members)
            lines.append({"type": "side.summary", "text": f"Side {side}: {public}.", "visibility": PUBLIC})
            hidden = [c for c in members if c["controller"] != "seat"]
            if hidden:
                hp = ", ".join(f"{c['name']} {c['hp']}/{c['hp_max']} hp" for c in hidden)
                lines.append({"type": "side.summary", "text": f"(DM) side {side}: {hp}.", "visibility": GM_ONLY})
        standing = self._standing(state)
        decided = [s for s, n in standing.items() if n == 0]
        if decided:
            lines.append({"type": "battle.decided", "text": "One side can fight no more: time to end the encounter.",
                          "visibility": PUBLIC})
        state["recap"] = {"round": state["round"], "lines": lines}

    def _condition_word(self, c: Mapping[str, Any]) -> str:
        band = c.get("morale")
        if c["condition"] == "ok":
            status = next((st for _top, key, _words, st in MORALE_BANDS if key == band), None)
            if status:
                return f"wounded, {status}" if c["hp"] < c["hp_max"] else status
            return "fighting" if c["hp"] >= c["hp_max"] else "wounded"
        if c["condition"] == "fled" and band in ("retreat", "panic"):
            return "retreated" if band == "retreat" else "fled in panic"
        return {"down": "down" + (" (stable)" if c["stable"] else ""), "dead": "dead", "fled": "fled",
                "surrendered": "surrendered"}[c["condition"]]

    @contract.declaration("next_round", by="gm")
    def _do_next_round(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                       events: list[Event]) -> None:
        self._expect(state, "recap")
        state["round"] += 1
        events.append(event("round.started", f"Round {state['round']} begins."))
        self._open_declarations(state, dice, events)

    @contract.declaration("end_encounter", by="gm")
    def _do_end_encounter(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                          events: list[Event]) -> None:
        self._expect(state, "recap", "declarations")
        state["phase"] = "recovery"
        state["queue"] = []
        events.append(event("encounter.resolved", "The fight is over. One turn passes while the survivors "
                                                  "recover: wounds can be bound, prisoners tied, spells cast."))

    @contract.declaration("finish", by="gm")
    def _do_finish(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        self._expect(state, "recovery")
        standing = self._standing(state)
        alive = [s for s, n in standing.items() if n > 0]
        winner = alive[0] if len(alive) == 1 else None
        text = f"The encounter ends: side {winner} holds the field." if winner else "The encounter ends."
        state["status"] = "ended"
        state["phase"] = "ended"
        state["outcome"] = {"winner": winner, "rounds": state["round"], "text": text}
        events.append(event("battle.ended", text, winner=winner))

    # --- DM tools, any time --------------------------------------------------------------------
    @contract.declaration("move", by="gm")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                 events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        x, y = read.square(d, state["grid"]["width"], state["grid"]["height"])
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        c["x"], c["y"] = x, y
        events.append(event("token.moved", f"The DM moves {c['name']} to square {c['x']}, {c['y']}.",
                            combatant=cid, x=c["x"], y=c["y"]))

    @contract.declaration("set_blocked", by="gm")
    def _do_set_blocked(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        """The DM marks the blocked squares (the whole list): no token enters or crosses them."""
        blocked = terrain.clean_blocked(d.get("blocked"), state["grid"]["width"], state["grid"]["height"])
        for c in state["combatants"].values():
            if c["condition"] not in ("dead", "fled") and [c["x"], c["y"]] in blocked:
                raise IllegalDeclaration(f"{c['name']} stands on ({c['x']}, {c['y']}): move it before blocking that square")
        state["blocked"] = blocked
        events.append(event("board.blocked", f"The DM marks {len(blocked)} blocked square{'s' if len(blocked) != 1 else ''}.",
                            blocked=blocked))

    @contract.declaration("set_scale", by="gm")
    def _do_set_scale(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        scale = d.get("scale")
        if scale not in FEET_PER_INCH:
            raise InvalidDeclaration("scale must be indoors or outdoors")
        state["scale"] = scale
        unit = "10 ft" if scale == "indoors" else "10 yd"
        events.append(event("scale.changed", f"The grid is now at the {scale} scale: 1 inch = {unit}.", scale=scale))

    @contract.declaration("first_aid", by="gm")
    def _do_first_aid(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        if c["condition"] != "down":
            raise IllegalDeclaration(f"{c['name']} is not down and dying")
        c["stable"] = True
        events.append(event("bleeding.stopped", f"{c['name']}'s wounds are bound: no more bleeding.", combatant=cid))

    @contract.declaration("set_hp", by="gm")
    def _do_set_hp(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        before = self._condition_word(c)
        c["hp"] = read.whole(d, "hp", -20, 500)
        if c["hp"] > 0 and c["condition"] in ("down", "dead"):
            c["condition"] = "ok"
        self._condition_after(state, cid)
        # an NPC's hit points are the DM's: the table hears of them only if they change its state
        after = self._condition_word(c)
        others = told(f"The DM changes {c['name']}'s state: now {after}.", combatant=cid) if after != before else None
        events.append(event("hp.set", f"The DM sets {c['name']}'s hit points to {c['hp']}.",
                            visibility=self._stats_visibility(state, cid), others=others, combatant=cid))

    def _morale_fails(self, state: State, cid: str, band: str, margin: int, events: list[Event]) -> None:
        """What a failed morale check does (ruling AD&D-4): falling back keeps the declared action;
        a retreat or a panic replaces it with flight; a surrender ends the combatant's part in the fight."""
        c = state["combatants"][cid]
        c["morale"], c["morale_margin"] = band, margin
        if band in ("retreat", "panic"):
            self._replace_with_flight(state, cid, events)
        elif band == "surrender":
            c["condition"] = "surrendered"
            state["casting"].pop(cid, None)
            if state["phase"] == "declarations":
                state["declarations"].pop(cid, None)
            for a in state["queue"]:
                if a["combatant"] == cid and a["status"] in ("pending", "readied"):
                    a["status"] = "cancelled"
                    a["why"].append("surrendered")
            events.append(event("combatant.surrendered", f"{c['name']} surrenders and stops fighting.",
                                combatant=cid))

    def _flight_declaration(self, c: Mapping[str, Any]) -> dict[str, Any]:
        band = c.get("morale") or "panic"
        return {**_auto_decl("flee"), "morale": band, "morale_margin": c.get("morale_margin", 0)}

    def _replace_with_flight(self, state: State, cid: str, events: list[Event]) -> None:
        c = state["combatants"][cid]
        if state["phase"] == "declarations" and cid in self._actors(state):
            state["declarations"][cid] = self._flight_declaration(c)
        if state["phase"] == "resolution":
            for a in state["queue"]:
                if a["combatant"] == cid and a["status"] in ("pending", "readied"):
                    a["status"] = "cancelled"
            last = state["last_key"] or [0, 0, 0]
            band = c.get("morale") or "panic"
            what = "retreat" if band == "retreat" else "flight"
            state["queue"].append({
                "id": f"{state['round']}.flee.{cid}", "combatant": cid, "side": c["side"], "letter": "A",
                "kind": "flee", "target": None, "segment": last[1], "key": [last[0], last[1], last[2] + 1],
                "n": -1, "status": "pending",
                "why": ["morale", f"morale failed by {c.get('morale_margin', 0)}: {what} replaces the declared action"],
                "hidden": False, "prepared": False, "trigger": "", "attacks": 1, "always": False, "delay": 0,
                "label": "[A] flee", "morale": band,
            })

    # --- projections ---------------------------------------------------------------------------
    def is_checkpoint(self, state: State) -> bool:
        if state.get("phase") == "reaction":
            return True
        if state.get("phase") != "declarations":
            return False
        made = [a for a in state.get("declarations", {}).values() if a.get("by") not in ("auto", "computer")]
        return not made and (state.get("decl") or {}).get("order") is None

    def _sees_stats(self, state: State, viewer: Viewer, cid: str) -> bool:
        c = state["combatants"][cid]
        return viewer.is_gm or c["controller"] == "seat"

    def _act_visible(self, state: State, viewer: Viewer, a: Mapping[str, Any]) -> bool:
        return viewer.is_gm or not a["hidden"] or a["status"] in ("resolved", "lost") or viewer.controls(
            state, a["combatant"])

    def charge_view(self, state: State, cid: str, positional: bool = True) -> dict[str, Any]:
        """Charge reach of one combatant this round, and its arrival and retaliation against each foe."""
        c = state["combatants"][cid]
        per_inch = FEET_PER_INCH[state["scale"]]
        step = charge_per_segment_feet(c["move"], state["scale"])
        length = Fraction(str(WEAPONS[c["weapon"]]["length"]))
        targets: dict[str, Any] = {}
        for tid in state["order"]:
            t = state["combatants"][tid]
            if tid == cid or t["side"] == c["side"] or t["condition"] in ("dead", "fled"):
                continue
            centre = math.hypot(t["x"] - c["x"], t["y"] - c["y"]) * per_inch
            way = self._charge_way(state, cid, tid)
            corners = None
            if way is not None and way[1] is not None:  # round blocked squares: the way's length and bends
                corners, centre = way[0], way[1] * per_inch
            phase = state["phase"]
            if positional:
                state = {**state, "phase": "preview"}
            retaliators = self._retaliators(state, cid, tid)
            state = {**state, "phase": phase}
            arrival = self._arrival(state, cid, tid)
            stop = max(0.0, centre - per_inch - float(length))
            path = []
            for seg in range(1, (arrival or 10) + 1):
                travelled = min(seg * step, stop)
                if corners is not None:
                    px, py = terrain.point_along(corners, travelled / per_inch)
                    path.append([round(px, 3), round(py, 3)])
                    continue
                f = travelled / centre if centre else 0.0
                path.append([round(c["x"] + (t["x"] - c["x"]) * f, 3), round(c["y"] + (t["y"] - c["y"]) * f, 3)])
            targets[tid] = {
                "distance_feet": round(max(0.0, centre - per_inch), 2),
                "arrival_segment": arrival,
                "retaliators": retaliators,
                "path": path,
            }
        return {
            "move": c["move"],
            "per_segment_feet": step,
            "per_segment_inches": round(step / per_inch, 3),
            "reach_feet": step * 10,
            "reach_inches": round(step * 10 / per_inch, 3),
            "weapon_length_feet": float(length),
            "strike_radius_inches": [round(float((per_inch + length + s * step) / per_inch), 3)
                                     for s in range(1, 11)],
            "targets": targets,
        }

    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        gm = viewer.is_gm
        mine = set(viewer.own_combatants(state))
        scale = state["scale"]
        combatants = []
        for cid in state["order"]:
            c = state["combatants"][cid]
            w = WEAPONS[c["weapon"]]
            entry: dict[str, Any] = {
                "id": cid, "name": c["name"], "side": c["side"], "seat": c["seat"], "controller": c["controller"],
                "x": c["x"], "y": c["y"], "condition": c["condition"], "status": self._condition_word(c),
                "mine": cid in mine, "weapon": w["label"], "declared": cid in state["declarations"],
                "casting": bool(state["casting"].get(cid)) and self._sees_stats(state, viewer, cid),
            }
            if self._sees_stats(state, viewer, cid):
                entry.update({
                    "hp": c["hp"], "hp_max": c["hp_max"], "ac": c["ac"], "thac0": c["thac0"], "move": c["move"],
                    "attacks": c["attacks"], "speed_factor": w["speed"], "length_feet": w["length"],
                    "damage": _weapon(c)["damage"], "missile": MISSILES[c["missile"]]["label"],
                    "reaction_mod": c["reaction_mod"], "caster": c["caster"], "stable": c["stable"],
                    "hit_dice": c["hit_dice"], "hit_dice_plus": c.get("hit_dice_plus", 0),
                    "morale_score": morale_score(c["hit_dice"], c.get("hit_dice_plus", 0), c["morale_mod"]),
                })
            combatants.append(entry)
        declarations = []
        for cid in state["order"]:
            a = state["declarations"].get(cid)
            if a is None:
                continue
            if gm or state["combatants"][cid]["controller"] == "seat" or cid in mine:
                declarations.append({"combatant": cid, "name": _label(cid, state), "label": self._describe(state, a),
                                     "letter": a["letter"], "kind": a["kind"], "target": a.get("target"),
                                     "delay": a.get("delay", 0), "seconds": a.get("seconds", 0),
                                     "prepared": a.get("prepared", False)})
        ordered = sorted(state["queue"], key=lambda a: (tuple(a["key"]), a["n"]))
        groups: list[list[Any]] = []
        for a in ordered:
            if not groups or groups[-1][0] != a["key"]:
                groups.append([a["key"], []])
            groups[-1][1].append(a)
        track = []
        step_no = 0
        for _key, acts in groups:
            shown = [a for a in acts if self._act_visible(state, viewer, a)]
            if not shown:
                continue
            step_no += 1
            for a in shown:
                track.append({
                    "id": a["id"], "combatant": a["combatant"], "name": _label(a["combatant"], state),
                    "side": a["side"], "letter": a["letter"], "kind": a["kind"],
                    "label": a["label"] if gm else a.get("told", a["label"]),
                    "target": a.get("target"), "segment": min(10, a["segment"]), "step": step_no,
                    "status": a["status"], "why": list(a["why"]) if gm else _told_why(a), "attacks": a["attacks"],
                    "together": len(shown) > 1,
                })
        spells = []
        for a in ordered:
            if a["kind"] == "spell" and a["status"] in ("pending", "readied") and self._act_visible(state, viewer, a):
                spells.append({"caster": a["combatant"], "name": _label(a["combatant"], state),
                               "spell": a.get("spell", "a spell"), "completes_segment": a["segment"],
                               "target": a.get("target"), "status": a["status"]})
        for cid, s in state["casting"].items():
            if self._sees_stats(state, viewer, cid) and not any(x["caster"] == cid for x in spells):
                spells.append({"caster": cid, "name": _label(cid, state), "spell": s["spell"],
                               "completes_segment": None, "remaining": s["remaining"], "target": s.get("target"),
                               "status": "casting"})
        charges = {cid: self.charge_view(state, cid, positional=not gm) for cid in state["order"]
                   if _able(state["combatants"][cid]) and self._sees_stats(state, viewer, cid)}
        encounter = copy.deepcopy(state["encounter"])
        if not gm and encounter.get("reaction", {}).get("private"):
            encounter.pop("reaction")
        recap = None
        if state["recap"]:
            recap = {"round": state["recap"]["round"],  # each line in the words written for this viewer
                     "lines": [ln["text"] if may_see(ln["visibility"], viewer, state) else ln["others"]
                               for ln in state["recap"]["lines"] if may_see(ln["visibility"], viewer, state) or ln.get("others")]}
        return {
            "system": self.id,
            "status": state["status"],
            "phase": state["phase"],
            "phase_label": PHASE_LABELS.get(state["phase"], state["phase"]),
            "round": state["round"],
            "surprise": {k: state["surprise"].get(k) for k in ("side", "segments", "segment")},
            "scale": scale,
            "grid": {**state["grid"], "feet_per_inch": FEET_PER_INCH[scale],
                     "unit": "1 inch = 10 ft" if scale == "indoors" else "1 inch = 10 yd"},
            "blocked": copy.deepcopy(state.get("blocked", [])),
            "combatants": combatants,
            "declarations": declarations,
            "initiative": copy.deepcopy(state["initiative"]),
            "encounter": encounter,
            "procedure": self._procedure(state, viewer),
            "clock": self._clock(state),
            "track": track,
            "current_segment": (state["last_key"] or [0, 0])[1] if state["phase"] == "resolution" else None,
            "spells": spells,
            "charges": charges,
            "recap": recap,
            "options": dict(state["options"]),
            "outcome": copy.deepcopy(state.get("outcome")),
            "legal": self._legal(state, viewer),
        }

    def _clock(self, state: State) -> dict[str, Any] | None:
        awaited = self._awaited(state)
        if awaited is None:
            return None
        decl = state["decl"]
        return {"combatant": awaited, "name": _label(awaited, state), "seat": state["combatants"][awaited]["seat"],
                "open_at": decl["open_at"], "paused_since": decl["paused_since"],
                "server_time": state.get("last_at"),
                "delay_at_server_time": delay_segments(self._elapsed(state, state.get("last_at"))),
                "paused_total": decl["paused_total"], "seconds_per_segment": SECONDS_PER_SEGMENT}

    def _procedure(self, state: State, viewer: Viewer) -> dict[str, Any]:
        phase = state["phase"]
        encounter_keys = ["reaction", "surprise", "distance", "morale"]
        surprise_on = bool(state["surprise"].get("side")) and state["surprise"].get("segments", 0) > 0
        if surprise_on:
            encounter_keys.append("surprise_segments")
        round_keys = ["declarations", "initiative", "resolution", "bleeding", "recap", "recovery"]
        in_surprise = bool(self._surprising_side(state))
        if phase in encounter_keys:
            current = phase
        elif in_surprise:
            current = "surprise_segments"
        else:
            current = phase
        keys = encounter_keys + round_keys
        steps = []
        reached = False
        pos = keys.index(current) if current in keys else len(keys)
        for i, key in enumerate(keys):
            info = state["steps"].get(key, {})
            if key == current:
                st = "current"
                reached = True
            elif i < pos and key in encounter_keys:
                st = "skipped" if info.get("skipped") else "done"
            elif in_surprise and key in round_keys:
                st = "upcoming"
            elif not reached and i < pos:
                st = "done"
            else:
                st = "upcoming"
            note = info.get("note", "") if (viewer.is_gm or not info.get("private")) else "rolled in secret"
            if not viewer.is_gm and "told" in info:  # the step's words for the table (no NPC's numbers)
                note = info["told"]
            steps.append({"key": key, "label": PHASE_LABELS[key], "state": st, "note": note})
        return {"steps": steps, "current": current, "round": state["round"], "pending": self._pending(state, viewer),
                "awaiting": self._clock(state)}

    def _pending(self, state: State, viewer: Viewer) -> list[str]:
        phase = state["phase"]
        if state["status"] != "active":
            return []
        if phase in ("reaction", "surprise", "distance", "morale"):
            return [f"The DM makes the {PHASE_LABELS[phase].lower()} (or skips it with a note)."]
        if phase == "declarations":
            npcs = self._npcs_to_declare(state)
            if npcs:
                if viewer.is_gm:
                    return ["The DM notes secret declarations for: " + ", ".join(_label(c, state) for c in npcs)]
                return ["The DM is noting secret declarations."]
            if state["decl"]["order"] is None:
                return ["The DM rolls who declares first."]
            awaited = self._awaited(state)
            if awaited:  # (by the combatant's name: a seat's id means nothing to the table)
                paused = " (clock paused)" if state["decl"]["paused_since"] is not None else ""
                return [f"Waiting for {_label(awaited, state)} to declare{paused}."]
        if phase == "initiative":
            return ["The DM rolls initiative: a d6 for each side."]
        if phase == "resolution":
            group = self._next_group(state)
            if group:
                shown = [a for a in group if self._act_visible(state, viewer, a)]
                who = ", ".join(_label(a["combatant"], state) for a in shown) or "a secret action"
                seg = group[0]["segment"]
                when = f"after segment 10, order {seg}" if seg > 10 else f"segment {seg}"
                return [f"Next to resolve ({when}): {who}."]
        if phase == "bleeding":
            return ["The DM applies bleeding: " + (", ".join(_label(c, state) for c in self._bleeders(state))
                                                   or "nobody bleeds") + "."]
        if phase == "recap":
            return ["Read the recap aloud, then start the next round or end the encounter."]
        if phase == "recovery":
            return ["One turn of recovery; the DM finishes the encounter."]
        return []

    # --- what each viewer may declare ----------------------------------------------------------
    def _declare_template(self, state: State, cid: str) -> dict[str, Any]:
        c = state["combatants"][cid]
        foes = [t for t in state["order"] if state["combatants"][t]["side"] != c["side"]
                and state["combatants"][t]["condition"] not in ("dead", "fled", "surrendered")]
        seg = state["surprise"].get("segment") if self._surprising_side(state) else 0
        if seg:
            foes = [t for t in foes if state["combatants"][t]["reaction_mod"] < seg]
        everyone = [t for t in state["order"] if state["combatants"][t]["condition"] not in ("dead", "fled")]
        actions = []
        for kind, (letter, label) in ACTION_KINDS.items():
            if kind in ("spell", "turn") and not c["caster"] or kind == "psionic" and not c.get("psionic"):
                continue
            if kind == "missile" and _missile(c)["rate"] <= 0:
                continue
            targets = foes if kind in ("melee", "missile", "charge") else everyone if kind in ("turn", "spell") else []
            if kind in ("melee", "missile", "charge") and not targets:
                continue
            actions.append({"kind": kind, "letter": letter, "label": f"{letter} · {label}" if letter != "-" else label,
                            "targets": [{"id": t, "name": _label(t, state)} for t in targets],
                            "needs_target": kind in TARGETED})
        return {
            "type": "declare", "combatant": cid, "label": f"Declare for {c['name']}", "testid": f"declare-{cid}",
            "actions": actions,
            "fields": [
                Field("spell", "Spell", "text", "", 0, 40, group="spell").to_dict(),
                Field("casting_time", "Casting time (segments)", "int", 1, 1, 10, group="spell").to_dict(),
                Field("damage", "Spell damage (optional)", "text", "", 0, 12, group="spell").to_dict(),
                Field("segments", "Segments needed", "int", 1, 1, 10, group="device custom").to_dict(),
                Field("prepared", "Prepare it with a trigger", "bool", False).to_dict(),
                Field("trigger", "Trigger", "text", "", 0, 80).to_dict(),
                Field("note", "Note", "text", "", 0, 80).to_dict(),
            ],
            "clock": self._clock(state) if self._awaited(state) == cid else None,
        }

    def _legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        if state["status"] != "active" or viewer.role == "spectator":
            return []
        phase = state["phase"]
        out: list[dict[str, Any]] = []
        note = Field("note", "Why skip", "text", "", 0, 200).to_dict()
        if viewer.is_gm:
            checks = {"reaction": ("check_reaction", "Roll reaction (d100)",
                                   [Field("adjustment", "Charisma adjustment (%)", "int", 0, -50, 50).to_dict(),
                                    Field("private", "Roll in secret", "bool", False).to_dict()]),
                      "surprise": ("check_surprise", "Roll surprise (d6 per side)", []),
                      "distance": ("check_distance", "Roll distance and place the parties", []),
                      "morale": ("check_morale", "Roll opening morale",
                                 [Field("side", "Side that checks", "choice", "B",
                                        choices=(("A", "Side A"), ("B", "Side B"))).to_dict(),
                                  Field("modifier", "Modifier (%)", "int", 0, -100, 100).to_dict()])}
            if phase in checks:
                kind, label, fields = checks[phase]
                out.append({"type": kind, "label": label, "fields": fields, "testid": f"gm-{kind}"})
                skip_fields = [note]
                if phase == "distance":
                    skip_fields = [Field("distance", "Known distance (inches)", "int", 3, 0, 60).to_dict(), note]
                out.append({"type": kind, "label": "Skip with a note", "fixed": {"skip": True},
                            "fields": skip_fields, "testid": f"gm-skip-{phase}"})
            elif phase == "declarations":
                npcs = self._npcs_to_declare(state)
                for cid in npcs:
                    out.append(self._declare_template(state, cid))
                if not npcs and state["decl"]["order"] is None:
                    out.append({"type": "roll_order", "label": "Roll who declares first", "fields": [],
                                "testid": "gm-roll-order"})
                awaited = self._awaited(state)
                if awaited:
                    paused = state["decl"]["paused_since"] is not None
                    out.append({"type": "resume_clock" if paused else "pause_clock",
                                "label": "Resume the clock" if paused else "Pause the clock (question to the DM)",
                                "fields": [], "testid": "gm-clock"})
                    out.append(self._declare_template(state, awaited))
            elif phase == "initiative":
                out.append({"type": "roll_initiative", "label": "Roll initiative (d6 per side)", "fields": [],
                            "testid": "gm-initiative"})
            elif phase == "resolution":
                out.append({"type": "resolve_next", "label": "Resolve the next step", "fields": [],
                            "testid": "gm-resolve-next"})
                out.append({"type": "resolve_all", "label": "Resolve the rest of the round", "fields": [],
                            "testid": "gm-resolve-all"})
            elif phase == "bleeding":
                out.append({"type": "bleed", "label": "Apply bleeding", "fields": [], "testid": "gm-bleed"})
                out.append({"type": "bleed", "label": "Skip with a note", "fixed": {"skip": True}, "fields": [note],
                            "testid": "gm-skip-bleeding"})
            elif phase == "recap":
                out.append({"type": "next_round", "label": "Next round", "fields": [], "testid": "gm-next-round"})
                out.append({"type": "end_encounter", "label": "End the encounter", "fields": [],
                            "testid": "gm-end-encounter"})
            elif phase == "recovery":
                out.append({"type": "finish", "label": "Finish after the recovery turn", "fields": [],
                            "testid": "gm-finish"})
            if phase in ("declarations", "resolution", "recap"):
                out.append({"type": "check_morale", "label": "Morale check for a side", "testid": "gm-morale",
                            "fields": [Field("side", "Side", "choice", "B",
                                             choices=(("A", "Side A"), ("B", "Side B"))).to_dict(),
                                       Field("modifier", "Modifier (%)", "int", 0, -100, 100).to_dict()]})
            alive = [(cid, _label(cid, state)) for cid in state["order"]
                     if state["combatants"][cid]["condition"] != "fled"]
            out.append({"type": "move", "label": "Move a token", "testid": "gm-move",
                        "fields": [Field("combatant", "Combatant", "choice", alive[0][0] if alive else "",
                                         choices=tuple(alive)).to_dict(),
                                   Field("x", "Column", "int", 0, 0, state["grid"]["width"] - 1).to_dict(),
                                   Field("y", "Row", "int", 0, 0, state["grid"]["height"] - 1).to_dict()]})
            out.append({"type": "set_scale", "label": "Switch scale", "testid": "gm-scale",
                        "fields": [Field("scale", "Scale", "choice", state["scale"],
                                         choices=(("indoors", "Indoors"), ("outdoors", "Outdoors"))).to_dict()]})
            out.append({"type": "set_hp", "label": "Set hit points (healing, adjustments)", "testid": "gm-set-hp",
                        "fields": [Field("combatant", "Combatant", "choice", alive[0][0] if alive else "",
                                         choices=tuple(alive)).to_dict(),
                                   Field("hp", "Hit points", "int", 1, -20, 500).to_dict()]})
            down = [(cid, _label(cid, state)) for cid in state["order"]
                    if state["combatants"][cid]["condition"] == "down" and not state["combatants"][cid]["stable"]]
            if down:
                out.append({"type": "first_aid", "label": "First aid (stops bleeding)", "testid": "gm-first-aid",
                            "fields": [Field("combatant", "Combatant", "choice", down[0][0],
                                             choices=tuple(down)).to_dict()]})
        else:
            awaited = self._awaited(state)
            if phase == "declarations" and awaited and viewer.controls(state, awaited):
                out.append(self._declare_template(state, awaited))
        if phase == "resolution":
            for a in state["queue"]:
                if not viewer.controls(state, a["combatant"]):
                    continue
                if a["status"] == "pending" and a["kind"] != "flee":
                    out.append({"type": "cancel", "combatant": a["combatant"], "fields": [],
                                "label": f"Call off {_label(a['combatant'], state)}'s action",
                                "testid": f"cancel-{a['combatant']}"})
                elif a["status"] == "readied":
                    out.append({"type": "trigger", "combatant": a["combatant"], "fields": [],
                                "label": f"Trigger {_label(a['combatant'], state)}: {a['trigger']}",
                                "testid": f"trigger-{a['combatant']}"})
        seen: set[tuple[str, str]] = set()
        unique = []
        for t in out:
            k = (t["type"], str(t.get("combatant")) + str(t.get("fixed")))
            if k not in seen:
                seen.add(k)
                unique.append(t)
        return unique


def _auto_decl(kind: str, target: str | None = None, by: str = "auto") -> dict[str, Any]:
    return {"kind": kind, "letter": ACTION_KINDS[kind][0], "target": target, "prepared": False, "trigger": "",
            "note": "", "delay": 0, "seconds": 0, "by": by}


def _at(d: Mapping[str, Any]) -> float:
    at = d.get("at")
    if at is None or isinstance(at, bool) or not isinstance(at, int | float):
        raise InvalidDeclaration("the declaration needs its time stamp 'at'")
    return float(at)


def _inches(distance: int) -> str:
    """``1 inch``, ``3 inches``."""
    return f"{distance} inch" if distance == 1 else f"{distance} inches"
