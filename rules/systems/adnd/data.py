"""AD&D 1e tables as data: weapons, missiles, the reaction, surprise and morale tables, the action
letters, the forms' fields, the presets and the help, and the small functions that read the tables.

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

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ...core import Field
from ...errors import InvalidDeclaration

#: the two sides of an encounter
SIDES = ("A", "B")

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
    centre_sq: int | Fraction = (dx * dx + dy * dy) * per_inch * per_inch
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
