"""Battles&Balances: dice pools, borrowed action points, reach and range, contests and checks.

Every attribute is a number of dice of the character's size: an average human with Muscle 3 rolls
3d8 for Muscle. A melee attack is Agility plus the weapon's attack score against the defender's
Speed plus shield; half the size difference goes to the smaller side and a tie misses. Damage is
the weapon die plus the damage modifier plus the margin; armour takes off its protection only if
the damage reaches it. Wounds that reach health put a character out of play.

There are no common rounds. Characters take turns in lineup order; each action costs action points
(AP). With at least one AP left a character may act and borrow (go negative); at zero or less its
turn is spent recovering its full allowance. So each character refreshes at its own moment.

Contests (opposed rolls) and static checks are GM tools that work in any battle status.

>>> bb = BattlesAndBalances()
>>> derived(bb.validate_combatant(PRINCE, 0))
{'health': 16, 'damage_modifier': 4, 'ap_max': 16, 'attack_cost': 5}
>>> size_bonus(8, 12)
2
>>> threshold_reached(47)
'challenging'
>>> round(chance_at_least(3, 8, 20), 4)
0.0684
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from . import contract, read, terrain
from .carry_over import carried_fields, carry_over_help, parse_effects
from .contract import RuleSystem
from .core import (
    GM_ONLY,
    Event,
    Field,
    State,
    Viewer,
    event,
)
from .dice import DiceSource, Roll
from .errors import IllegalDeclaration, InvalidDeclaration
from .physical import rolled_by

ATTRIBUTES = ("muscle", "stamina", "agility", "speed", "focus")
LUCK_CHOICES = (("normal", "Normal"), ("blessed", "Blessed"), ("cursed", "Cursed"))

#: the named difficulty thresholds of a static check, lowest first
THRESHOLDS: tuple[tuple[str, int], ...] = (
    ("trivial", 10),
    ("easy", 20),
    ("routine", 30),
    ("challenging", 40),
    ("difficult", 50),
    ("unlikely", 60),
    ("impossible", 70),
)
THRESHOLD_VALUES = dict(THRESHOLDS)


#: how many future turns the timeline shows
TIMELINE_LENGTH = 12
#: safety cap on computer-played turns run inside one declaration
COMPUTER_TURN_CAP = 400


# --------------------------------------------------------------------------------------------
# Small pure helpers
# --------------------------------------------------------------------------------------------


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


def distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    """Squares between two positions; a diagonal step counts as one square."""
    return max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"]))


def walk(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]) -> int | None:
    """Steps from ``a`` to ``b`` around the blocked squares, a diagonal counting one (None: no way);
    with nothing blocked, :func:`distance`."""
    if not state.get("blocked"):
        return distance(a, b)
    opts = state["options"]
    return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                 opts["grid_width"], opts["grid_height"])


def in_reach(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any], reach: int) -> bool:
    """``b`` lies within ``reach`` squares of ``a``, counted around blocked squares."""
    if distance(a, b) > reach:
        return False
    steps = walk(state, a, b)
    return steps is not None and steps <= reach


def _half_up(value: int) -> int:
    return (value + 1) // 2


def _split_kinds(text: str) -> set[str]:
    return {part.strip().lower() for part in str(text or "").split(",") if part.strip()}


# --------------------------------------------------------------------------------------------
# Character sheet: fields and derived numbers
# --------------------------------------------------------------------------------------------


def _combatant_fields() -> list[Field]:
    attr_help = {
        "muscle": "Dice for strength; also sets the damage modifier.",
        "stamina": "Dice for endurance; health is Stamina times size (at least 1: Health 0 is defeated).",
        "agility": "Dice rolled to hit in melee.",
        "speed": "Dice rolled to defend; action points are Speed times size.",
        "focus": "Dice rolled to hit with missiles.",
    }
    fields = [
        Field("size", "Size die", "int", 8, 2, 100, help="Sides of the die this character rolls (d4 tiny, d8 human, d12 huge).", group="Body"),
    ]
    fields += [
        Field(a, a.capitalize(), "int", 3, 0, 30, help=attr_help[a], group="Body") for a in ATTRIBUTES
    ]
    fields += [
        Field("player_character", "Player character", "bool", False, help="Player characters receive blessings when hurt (if blessings are on).", group="Body"),
        Field("weapon", "Weapon", "text", "", 0, 40, help="Name of the melee weapon; empty means unarmed.", group="Weapon"),
        Field("weapon_attack", "Weapon attack", "int", 0, 0, 50, help="Added to the Agility roll.", group="Weapon"),
        Field("weapon_die", "Weapon damage die", "int", 0, 0, 100, help="Sides of the damage die (6 for 1-6); 0 for none.", group="Weapon"),
        Field("weapon_weight", "Weapon weight", "int", 0, 0, 50, help="Action points it takes to draw the weapon.", group="Weapon"),
        Field("weapon_reach", "Melee reach", "int", 1, 1, 10, help="Squares the weapon reaches (1 = adjacent).", group="Weapon"),
        Field("weapon_drawn", "Weapon in hand", "bool", True, help="Off means it must be drawn first.", group="Weapon"),
        Field("weapon_kind", "Weapon damage kinds", "text", "", 0, 60, help="Comma-separated, e.g. silver, blade (for weaknesses).", group="Weapon"),
        Field("weapon_effect", "Weapon effect", "text", "", 0, 30, help="A lasting effect its hits cause, e.g. poison.", group="Weapon"),
        Field("weapon_luck", "Weapon blessing", "choice", "normal", choices=LUCK_CHOICES, help="A blessed or cursed weapon makes every attack roll so.", group="Weapon"),
        Field("launcher", "Missile weapon", "text", "", 0, 40, help="Bow, sling, blaster...; empty means none.", group="Missile"),
        Field("launcher_attack", "Missile attack", "int", 0, 0, 50, help="Added to the Focus roll.", group="Missile"),
        Field("ammo_die", "Ammunition damage die", "int", 6, 0, 100, help="Sides of the ammunition's damage die.", group="Missile"),
        Field("ammo", "Ammunition", "int", 0, 0, 999, help="Shots left.", group="Missile"),
        Field("missile_range", "Missile range", "int", 8, 1, 100, help="Squares the missile weapon reaches.", group="Missile"),
        Field("ammo_kind", "Ammunition damage kinds", "text", "", 0, 60, group="Missile"),
        Field("ammo_effect", "Ammunition effect", "text", "", 0, 30, group="Missile"),
        Field("shield", "Shield", "text", "", 0, 40, group="Shield"),
        Field("shield_defence", "Shield defence", "int", 0, 0, 50, help="Added to the Speed roll.", group="Shield"),
        Field("shield_luck", "Shield blessing", "choice", "normal", choices=LUCK_CHOICES, help="A blessed or cursed shield makes every defence roll so.", group="Shield"),
        Field("armour", "Armour", "text", "", 0, 40, group="Armour"),
        Field("armour_protection", "Armour protection", "int", 0, 0, 100, help="Taken off any damage that reaches it.", group="Armour"),
        Field("armour_weight", "Armour weight", "int", 0, 0, 100, help="With armour wear on, the armour fails when its wear reaches this.", group="Armour"),
        Field("armour_wear", "Armour wear", "int", 0, 0, 100, group="Armour"),
        Field("weak_to", "Weak to", "text", "", 0, 60, help="Damage kinds that double the damage die.", group="Traits"),
        Field("resists", "Resists", "text", "", 0, 60, help="Damage kinds that halve the damage die.", group="Traits"),
        Field("effect_chance", "Effect chance", "choice", "always", choices=(("always", "Every hit"), ("coin", "Coin flip")), help="How often its weapon or ammunition effect takes hold.", group="Traits"),
        Field("curses_on_hit", "Curses on hit", "bool", False, help="Its hits curse the target instead of blessing (undead and such).", group="Traits"),
        Field("health_override", "Health (0 = Stamina x size)", "int", 0, 0, 9999, group="Overrides"),
        Field("damage_modifier_override", "Damage modifier (empty = derived)", "text", "", 0, 6, group="Overrides"),
        Field("ap_override", "Action points (0 = Speed x size)", "int", 0, 0, 9999, group="Overrides"),
        Field("attack_cost_override", "Attack cost (0 = size - 3)", "int", 0, 0, 999, group="Overrides"),
        Field("x", "Column (-1 = automatic)", "int", -1, -1, 99, group="Position"),
        Field("y", "Row (-1 = automatic)", "int", -1, -1, 99, group="Position"),
        Field("notes", "GM notes", "text", "", 0, 200, help="Seen only by the GM.", group="GM"),
    ]
    return fields


def _option_fields() -> list[Field]:
    return [
        Field("agility_duel", "Agility-only duel", "bool", False, help="Melee without Speed or shields: both roll Agility and the higher deals damage to the other.", group="Optional rules"),
        Field("maximum_damage", "Maximum damage", "bool", False, help="Damage dice are not rolled: every hit does the die's highest face.", group="Optional rules"),
        Field("weaknesses", "Weaknesses and resistances", "bool", False, help="A weakness doubles the damage die, a resistance halves it.", group="Optional rules"),
        Field("halved_die", "Halved die", "choice", "small", choices=(("small", "Roll the smaller die (d3 for d6)"), ("halve", "Roll the full die, halve rounding up")), group="Optional rules"),
        Field("persistent_effects", "Persistent effects", "bool", False, help="Poison, fire and such: each new dose adds a growing amount of extra damage until cured.", group="Optional rules"),
        Field("armour_wear", "Armour wear", "bool", False, help="Armour wears by half of what it absorbs and fails when its wear reaches its weight.", group="Optional rules"),
        Field("blessings", "Blessings and curses", "bool", False, help="Blessed rolls take the better of two, cursed the worse; player characters are blessed when hurt.", group="Optional rules"),
        Field("blessing_threshold", "Blessed when hurt by", "choice", "half_size", choices=(("any", "Any damage"), ("half_size", "More than half their size")), group="Optional rules"),
        Field("contest_mode", "Contests", "choice", "summed", choices=(("summed", "Three rolls summed"), ("best_of_three", "Best two of three")), group="Contests"),
        Field("move_cost", "AP per square moved", "int", 1, 0, 50, help="The GM's cost of a step; leaving an opponent's reach adds that opponent's size.", group="Time"),
        Field("grid_width", "Grid columns", "int", 12, 4, 40, group="Grid"),
        Field("grid_height", "Grid rows", "int", 8, 4, 40, group="Grid"),
    ]


def derived(c: Mapping[str, Any]) -> dict[str, int]:
    """Health, damage modifier, action points and attack cost, honouring the GM's overrides."""
    size = c["size"]
    health = c.get("health_override") or c["stamina"] * size
    dm_text = str(c.get("damage_modifier_override") or "").strip()
    damage_modifier = int(dm_text) if dm_text else int((c["muscle"] - 3) * size / 2)
    ap_max = c.get("ap_override") or c["speed"] * size
    attack_cost = c.get("attack_cost_override") or max(1, size - 3)
    return {"health": health, "damage_modifier": damage_modifier, "ap_max": ap_max, "attack_cost": attack_cost}


# --------------------------------------------------------------------------------------------
# Presets: the characters of the text plus a few ready-made foes
# --------------------------------------------------------------------------------------------

PRINCE: dict[str, Any] = {
    "name": "Prince Vasyl of Ostgrund", "size": 8, "muscle": 4, "stamina": 2, "agility": 4, "speed": 2, "focus": 3,
    "player_character": True, "weapon": "Hardlight sword", "weapon_attack": 5, "weapon_die": 6, "weapon_weight": 3,
    "weapon_kind": "blade", "shield": "Hardlight kite", "shield_defence": 5, "armour": "Liquid metal",
    "armour_protection": 5, "armour_weight": 10,
}
SHOCK_TROOPER: dict[str, Any] = {
    "name": "Shock Trooper", "size": 12, "muscle": 5, "stamina": 4, "agility": 2, "speed": 2, "focus": 2,
    "notes": "Power armour counts as a bigger body (d12); disarmed at the start.",
}
PRESETS: list[dict[str, Any]] = [
    PRINCE,
    SHOCK_TROOPER,
    {"name": "Baerg the Fighter", "size": 8, "muscle": 5, "stamina": 4, "agility": 3, "speed": 3, "focus": 2,
     "player_character": True, "weapon": "Axe", "weapon_attack": 3, "weapon_die": 8, "weapon_weight": 4,
     "armour": "Mail", "armour_protection": 4, "armour_weight": 8},
    {"name": "Huge Orc", "size": 10, "muscle": 4, "stamina": 3, "agility": 2, "speed": 2, "focus": 2,
     "weapon": "Club", "weapon_attack": 2, "weapon_die": 6, "weapon_weight": 3},
    {"name": "Jinx the Thief", "size": 6, "muscle": 2, "stamina": 3, "agility": 4, "speed": 4, "focus": 3,
     "player_character": True, "weapon": "Dagger", "weapon_attack": 2, "weapon_die": 4, "weapon_weight": 1,
     "launcher": "Sling", "launcher_attack": 1, "ammo_die": 4, "ammo": 10, "missile_range": 6},
    {"name": "Goblin Archer", "size": 6, "muscle": 2, "stamina": 2, "agility": 3, "speed": 3, "focus": 3,
     "weapon": "Knife", "weapon_attack": 1, "weapon_die": 4, "weapon_weight": 1,
     "launcher": "Short bow", "launcher_attack": 2, "ammo_die": 6, "ammo": 12, "missile_range": 8},
    {"name": "Skeleton", "size": 8, "muscle": 3, "stamina": 2, "agility": 3, "speed": 2, "focus": 1,
     "weapon": "Rusty blade", "weapon_attack": 2, "weapon_die": 6, "weapon_weight": 3, "weak_to": "silver",
     "curses_on_hit": True},
    {"name": "Rock Elemental", "size": 12, "muscle": 5, "stamina": 5, "agility": 2, "speed": 1, "focus": 1,
     "resists": "blade", "armour": "Stone skin", "armour_protection": 6, "armour_weight": 30},
    {"name": "Venom Spider", "size": 6, "muscle": 2, "stamina": 2, "agility": 4, "speed": 4, "focus": 1,
     "weapon": "Fangs", "weapon_attack": 1, "weapon_die": 4, "weapon_weight": 0, "weapon_effect": "poison",
     "effect_chance": "coin"},
]


HELP: list[dict[str, str]] = [
    {"title": "Dice pools", "text": "Each attribute (Muscle, Stamina, Agility, Speed, Focus) is a count of dice of the "
     "character's size die. A human (d8) with Agility 4 rolls 4d8 and adds them up."},
    {"title": "Melee", "text": "The attacker rolls Agility plus the weapon's attack score; the defender rolls Speed plus "
     "the shield's defence. The smaller of the two adds half the difference in size. The attacker hits only with the "
     "higher total: a tie misses. The target must be within the weapon's reach."},
    {"title": "Damage", "text": "A hit deals the weapon's damage die plus the damage modifier plus the margin of the hit. "
     "Armour takes off its protection, but only when the damage is at least as large as the protection. What is left "
     "becomes wounds; wounds equal to health put the character out of play. Unarmed or disarmed attackers roll no "
     "damage die."},
    {"title": "Missiles", "text": "A shot rolls Focus plus the missile weapon's attack score, uses the ammunition's damage "
     "die and no damage modifier, spends one round of ammunition and needs the target inside missile range."},
    {"title": "Derived numbers", "text": "Health is Stamina times size; Health 0 would mean defeated from the start, "
     "so Stamina must be at least 1. Damage modifier is (Muscle minus 3) times size, "
     "halved. Action points are Speed times size. The GM can override each one on the character sheet."},
    {"title": "Action points", "text": "Characters take turns in lineup order. An attack costs size minus 3 AP, drawing a "
     "weapon costs its weight, a move costs the GM's price per square plus the size of every opponent whose reach you "
     "leave. With at least 1 AP you may act even if it takes you below zero: the debt comes out of your next refresh. "
     "With 0 or less your turn is spent recovering your full allowance; a debt deeper than one allowance takes several "
     "such turns while the others go on. There are no shared rounds: everyone refreshes "
     "at their own moment. The timeline shows the turns to come, guessing an attack for each."},
    {"title": "Ranges", "text": "Distances count squares, diagonals as one. Melee reach is the weapon's reach (1 = the "
     "eight squares around). Missile range is the missile weapon's range. Anything farther is out of range."},
    {"title": "Option: agility-only duel", "text": "Speed and shields are ignored in melee: both sides roll Agility "
     "(plus weapon attack and size bonus) and whoever rolls higher deals damage to the other by the normal rules. Against "
     "a shot the target rolls plain Agility. Speed still sets the action points."},
    {"title": "Option: maximum damage", "text": "Damage dice are not rolled; each hit uses the die's highest face."},
    {"title": "Option: weaknesses and resistances", "text": "When a weapon's damage kind is in the target's weaknesses "
     "its die is doubled (d6 becomes d12); when it is in the resistances the die is halved (d6 becomes d3), either by "
     "rolling the smaller die or by rolling the full die and halving it, rounding up. Both at once cancel out."},
    {"title": "Option: persistent effects", "text": "A weapon or ammunition with an effect (poison, fire...) marks it on "
     "the target with every hit (or on a coin flip). The first mark adds 1 damage, the second 2, and so on, after armour. "
     "A cure (GM tool) clears the count."},
    {"title": "Option: armour wear", "text": "Each time armour takes off damage it wears by half the amount it absorbed "
     "(rounded down). When its wear reaches its weight the armour stops protecting. Use even protection scores."},
    {"title": "Option: blessings and curses", "text": "A blessed roll is rolled twice and the better total kept; a cursed "
     "roll keeps the worse. A pending blessing or curse is used up by the character's next attack or defence roll. "
     "Player characters gain a blessing when they take damage (any, or more than half their size, as chosen). Attackers "
     "marked as cursing give a curse instead. Blessed or cursed weapons and shields bless or curse every attack or "
     "defence roll. A blessing and a curse on the same roll cancel. Armour is never affected. The GM can bless or curse "
     "anyone (spells, a priest) and use luck on checks and contests."},
    {"title": "Contests and checks", "text": "A check rolls the pool three times and sums the rolls against a target: "
     "10 trivial, 20 easy, 30 routine, 40 challenging, 50 difficult, 60 unlikely, 70 impossible; reaching it succeeds. "
     "A contest rolls three times for each side and compares the sums (option: best two of three, a tie in one roll "
     "counting for nobody). The GM can run both at any time, with or without a battle, choose blessed or cursed rolls "
     "or use a character's pending blessing or curse, and give a check a price in wounds when it fails, so that it "
     "cannot simply be tried again and again."},
    {"title": "Healing", "text": "The GM removes wounds for food, rest, a healer or any other reason, cures lasting "
     "effects and repairs armour. A character healed below its health returns to play."},
]


# --------------------------------------------------------------------------------------------
# The system
# --------------------------------------------------------------------------------------------


class BattlesAndBalances(RuleSystem):
    """Battles&Balances: dice pools, borrowed action points and the GM's contest and check tools."""

    id = "battles-and-balances"
    name = "Battles&Balances"
    summary = "Dice pools by size, action points you can borrow, melee reach and missile range, contests and checks."
    min_combatants = 0
    max_combatants = 40
    sides = ("A", "B", "C", "D")

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return _combatant_fields() + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return _option_fields()

    def presets(self) -> list[dict[str, Any]]:
        return copy.deepcopy(PRESETS)

    def help(self) -> list[dict[str, str]]:
        return copy.deepcopy(HELP) + carry_over_help(self.id)

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        cleaned = super().validate_combatant(data, index)
        if cleaned["stamina"] == 0:  # ruling B&B-2
            raise InvalidDeclaration(
                f"{cleaned['name']}: Stamina 0 means Health 0, so the character would start the battle defeated; "
                "give Stamina 1 or more"
            )
        dm = cleaned["damage_modifier_override"]
        if dm and not dm.lstrip("+-").isdigit():
            raise InvalidDeclaration(f"{cleaned['name']}: Damage modifier must be a whole number or empty")
        if cleaned.get("effects"):  # carried from an earlier fight
            try:
                parse_effects(cleaned["effects"])
            except InvalidDeclaration as exc:
                raise InvalidDeclaration(f"{cleaned['name']}: {exc}") from None
        return cleaned

    # --- setup -----------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        opts = self.validate_options(options)
        width, height = opts["grid_width"], opts["grid_height"]
        # blocked squares come from the table's board (not an option of the form)
        blocked = terrain.clean_blocked(options.get("blocked") if isinstance(options, Mapping) else None, width, height)
        combatants: dict[str, dict[str, Any]] = {}
        taken: set[tuple[int, int]] = set()
        for entry in entries:
            if entry["x"] >= 0 or entry["y"] >= 0:
                if not (0 <= entry["x"] < width and 0 <= entry["y"] < height):
                    raise InvalidDeclaration(f"{entry['name']}: position must be on the {width}x{height} grid")
                if (entry["x"], entry["y"]) in taken:
                    raise InvalidDeclaration(f"{entry['name']}: that square is already taken")
                if [entry["x"], entry["y"]] in blocked:
                    raise InvalidDeclaration(f"{entry['name']}: square ({entry['x']}, {entry['y']}) is blocked")
                taken.add((entry["x"], entry["y"]))
        taken.update((x, y) for x, y in blocked)
        for entry in entries:
            c = dict(entry)
            c.update(derived(entry))
            for key in ("health_override", "damage_modifier_override", "ap_override", "attack_cost_override"):
                c.pop(key, None)
            if entry["x"] < 0 or entry["y"] < 0:
                c["x"], c["y"] = _auto_square(entry["side"], self.sides, width, height, taken)
                taken.add((c["x"], c["y"]))
            broken = bool(c["armour"] and opts["armour_wear"] and 0 < c["armour_weight"] <= c["armour_wear"])
            # wounds, effects, blessings and curses carried from an earlier fight (rules/carry_over.py)
            wounds = entry.get("wounds", 0)
            c.update({"ap": c["ap_max"], "wounds": wounds, "defeated": c["health"] <= 0 or wounds >= c["health"],
                      "blessings": entry.get("blessings", 0), "curses": entry.get("curses", 0),
                      "effects": parse_effects(entry.get("effects", "")), "armour_broken": broken})
            combatants[c["id"]] = c
        sides_in_play = sorted({c["side"] for c in combatants.values()})
        state: State = {
            "system": self.id,
            "status": "active",
            "options": opts,
            "combatants": combatants,
            "order": [c["id"] for c in entries],
            "turn_index": -1,
            "actor": None,
            "turn": 0,
            "sides_in_play": sides_in_play,
            "blocked": blocked,
            "outcome": None,
            "last_result": None,
        }
        names = ", ".join(c["name"] for c in combatants.values()) or "nobody yet"
        events = [event("battle.started", f"The battle begins: {names}.", combatants=list(combatants))]
        if combatants:
            events += _advance(state, dice)
        return state, events

    # --- declarations ----------------------------------------------------------------------
    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        new = copy.deepcopy(state)
        if kind in self.gm_declarations and not viewer.is_gm:
            raise IllegalDeclaration(f"only the GM may {kind.replace('_', ' ')}")
        events: list[Event] = handler(new, declaration, viewer, dice)
        return new, events

    # combat actions -------------------------------------------------------------------------
    def _actor_for(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, need_ap: bool = True
    ) -> dict[str, Any]:
        cid = read.combatant(declaration, "combatant", state)
        if state["status"] != "active":
            raise IllegalDeclaration("the battle is not running")
        if state["actor"] != cid:
            who = state["combatants"][state["actor"]]["name"] if state["actor"] else "nobody"
            raise IllegalDeclaration(f"it is not {state['combatants'][cid]['name']}'s turn ({who} acts now)")
        if not viewer.controls(state, cid):
            raise IllegalDeclaration("you do not control that combatant")
        c = state["combatants"][cid]
        if need_ap and c["ap"] < 1:
            raise IllegalDeclaration(f"{c['name']} has no action points left")
        return c

    def _target(self, state: State, declaration: Mapping[str, Any], attacker: Mapping[str, Any]) -> dict[str, Any]:
        tid = read.combatant(declaration, "target", state)
        target = state["combatants"][tid]
        if tid == attacker["id"]:
            raise IllegalDeclaration("a character cannot attack itself")
        if target["defeated"]:
            raise IllegalDeclaration(f"{target['name']} is already out of play")
        return target

    def _finish_action(self, state: State, actor: dict[str, Any], cost: int, what: str, dice: DiceSource) -> list[Event]:
        actor["ap"] -= cost
        events = [event("ap.spent", f"{actor['name']} spends {cost} AP on {what} ({_ap_words(actor['ap'])}).",
                        combatant=actor["id"], cost=cost, ap=actor["ap"])]
        events += _check_outcome(state)
        if state["status"] == "active":
            events += _advance(state, dice)
        return events

    @contract.declaration("attack")
    def _do_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        attacker = self._actor_for(state, d, viewer)
        target = self._target(state, d, attacker)
        if not in_reach(state, attacker, target, melee_reach(attacker)):
            raise IllegalDeclaration(f"{target['name']} is out of {attacker['name']}'s melee reach")
        events = resolve_melee(state, attacker, target, dice)
        return events + self._finish_action(state, attacker, attacker["attack_cost"], "an attack", dice)

    @contract.declaration("shoot")
    def _do_shoot(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        attacker = self._actor_for(state, d, viewer)
        target = self._target(state, d, attacker)
        if not attacker["launcher"]:
            raise IllegalDeclaration(f"{attacker['name']} has no missile weapon")
        if attacker["ammo"] < 1:
            raise IllegalDeclaration(f"{attacker['name']} is out of ammunition")
        if distance(attacker, target) > attacker["missile_range"]:
            raise IllegalDeclaration(f"{target['name']} is out of missile range")
        events = resolve_ranged(state, attacker, target, dice)
        return events + self._finish_action(state, attacker, attacker["attack_cost"], "a shot", dice)

    @contract.declaration("move")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        mover = self._actor_for(state, d, viewer)
        x, y = read.square(d, state["options"]["grid_width"], state["options"]["grid_height"])
        if (x, y) == (mover["x"], mover["y"]):
            raise IllegalDeclaration("that is where the character already stands")
        if _occupant(state, x, y):
            raise IllegalDeclaration("that square is taken")
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        if walk(state, mover, {"x": x, "y": y}) is None:
            raise IllegalDeclaration(f"blocked squares leave {mover['name']} no way to ({x}, {y})")
        cost, left = move_cost(state, mover, x, y)
        mover["x"], mover["y"] = x, y
        text = f"{mover['name']} moves to column {x + 1}, row {y + 1}"
        if left:
            text += ", leaving the reach of " + ", ".join(state["combatants"][o]["name"] for o in left)
        events = [event("combatant.moved", text + ".", combatant=mover["id"], x=x, y=y, left_reach_of=left)]
        return events + self._finish_action(state, mover, cost, "moving", dice)

    @contract.declaration("draw")
    def _do_draw(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer)
        if not c["weapon"]:
            raise IllegalDeclaration(f"{c['name']} has no weapon to draw")
        if c["weapon_drawn"]:
            raise IllegalDeclaration(f"{c['name']} already holds the {c['weapon']}")
        c["weapon_drawn"] = True
        events = [event("weapon.drawn", f"{c['name']} draws the {c['weapon']}.", combatant=c["id"])]
        return events + self._finish_action(state, c, c["weapon_weight"], "drawing a weapon", dice)

    @contract.declaration("pass")
    def _do_pass(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer, need_ap=False)
        events = [event("turn.passed", f"{c['name']} waits.", combatant=c["id"])]
        events += _advance(state, dice)
        return events

    @contract.declaration("custom_action", by="gm")
    def _do_custom_action(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer)
        cost = read.whole(d, "cost", 0, 999)
        label = read.text(d, "label", 80, "a special action")
        events = [event("action.taken", f"{c['name']}: {label}.", combatant=c["id"], label=label)]
        return events + self._finish_action(state, c, cost, label, dice)

    # GM tools ------------------------------------------------------------------------------
    @contract.declaration("check", by="gm", after_end=True)
    def _do_check(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        who = _roller(state, d, "")
        difficulty = d.get("difficulty", "routine")
        if difficulty == "custom":
            target = read.whole(d, "target", 1, 1000)
            level = f"target {target}"
        elif difficulty in THRESHOLD_VALUES:
            target = THRESHOLD_VALUES[difficulty]
            level = f"{difficulty} ({target})"
        else:
            raise InvalidDeclaration("difficulty must be one of " + ", ".join([*THRESHOLD_VALUES, "custom"]))
        label = read.text(d, "label", 80, "a check")
        penalty = read.whole(d, "failure_wounds", 0, 9999, default=0)
        if penalty and not who["combatant"]:
            raise InvalidDeclaration("failure_wounds needs a character to take them")
        totals, rolls = _three_rolls(dice, who, label)
        _spend_pending_luck(state, who)
        total = sum(totals)
        success = total >= target
        reached = threshold_reached(total)
        verdict = "succeeds" if success else "fails"
        luck = f", {who['luck']}" if who["luck"] != "normal" else ""
        text = (f"{who['name']} tries {label} ({level}{luck}): rolls {' + '.join(map(str, totals))} = {total} "
                f"and {verdict}" + (f"; that reaches {reached}." if reached else "."))
        result = {"kind": "check", "label": label, "who": who["name"], "pool": who["pool"], "target": target,
                  "difficulty": difficulty, "totals": totals, "total": total, "success": success, "reached": reached,
                  "luck": who["luck"],
                  "chance": round(chance_at_least(3 * who["dice"], who["size"], target - 3 * who["bonus"]), 4)
                  if who["luck"] == "normal" else None}
        state["last_result"] = result
        events = [event("check.succeeded" if success else "check.failed", text, rolls=rolls, **result)]
        if penalty and not success:
            c = state["combatants"][who["combatant"]]
            c["wounds"] += penalty
            events.append(event("damage.dealt", f"{c['name']} pays for the failure with {penalty} wounds "
                                f"({c['wounds']} of {c['health']}).", target=c["id"], wounds=penalty,
                                total_wounds=c["wounds"]))
            if c["wounds"] >= c["health"] and not c["defeated"]:
                c["defeated"] = True
                events.append(event("combatant.defeated", f"{c['name']} is out of play.", combatant=c["id"]))
            events += _after_gm_change(state, dice)
        return events

    @contract.declaration("contest", by="gm", after_end=True)
    def _do_contest(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        a = _roller(state, d, "a_")
        b = _roller(state, d, "b_")
        mode = d.get("mode") or state["options"]["contest_mode"]
        if mode not in ("summed", "best_of_three"):
            raise InvalidDeclaration("mode must be summed or best_of_three")
        label = read.text(d, "label", 80, "a contest")
        a_totals, b_totals, rolls = [], [], []
        for i in range(3):
            t, r = _pool_roll(rolled_by(dice, a["combatant"] or "gm"), a["dice"], a["size"], f"{a['name']} {label} roll {i + 1}", a["luck"], a["bonus"])
            a_totals.append(t)
            rolls += r
            t, r = _pool_roll(rolled_by(dice, b["combatant"] or "gm"), b["dice"], b["size"], f"{b['name']} {label} roll {i + 1}", b["luck"], b["bonus"])
            b_totals.append(t)
            rolls += r
        _spend_pending_luck(state, a)
        _spend_pending_luck(state, b)
        if mode == "summed":
            score_a, score_b = sum(a_totals), sum(b_totals)
            how = f"{sum(a_totals)} against {sum(b_totals)}"
        else:
            score_a = sum(1 for x, y in zip(a_totals, b_totals, strict=True) if x > y)
            score_b = sum(1 for x, y in zip(a_totals, b_totals, strict=True) if y > x)
            how = f"{score_a} rolls to {score_b}"
        winner = a["name"] if score_a > score_b else b["name"] if score_b > score_a else None
        text = (f"{label.capitalize()}: {a['name']} rolls {', '.join(map(str, a_totals))}; {b['name']} rolls "
                f"{', '.join(map(str, b_totals))}. " + (f"{winner} wins, {how}." if winner else f"A draw, {how}."))
        result = {"kind": "contest", "label": label, "mode": mode, "a": a["name"], "b": b["name"],
                  "a_pool": a["pool"], "b_pool": b["pool"], "a_rolls": a_totals, "b_rolls": b_totals,
                  "a_score": score_a, "b_score": score_b, "winner": winner}
        state["last_result"] = result
        return [event("contest.won" if winner else "contest.drawn", text, rolls=rolls, **result)]

    def _gm_target(self, state: State, d: Mapping[str, Any]) -> dict[str, Any]:
        cid = read.combatant(d, "combatant", state)
        return state["combatants"][cid]

    @contract.declaration("heal", by="gm", after_end=True)
    def _do_heal(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        amount = read.whole(d, "amount", 1, 9999)
        means = d.get("means", "other")
        words = {"food": "eats", "rest": "rests", "healer": "is tended by a healer", "other": "is healed"}
        if means not in words:
            raise InvalidDeclaration("means must be food, rest, healer or other")
        removed = min(amount, c["wounds"])
        c["wounds"] -= removed
        events = [event("wounds.healed", f"{c['name']} {words[means]} and loses {removed} wounds "
                        f"({c['wounds']} of {c['health']}).", combatant=c["id"], removed=removed, means=means,
                        wounds=c["wounds"])]
        if c["defeated"] and c["wounds"] < c["health"]:
            c["defeated"] = False
            events.append(event("combatant.recovered", f"{c['name']} is back in play.", combatant=c["id"]))
        return events + _after_gm_change(state, dice)

    @contract.declaration("cure", by="gm", after_end=True)
    def _do_cure(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        effect = read.text(d, "effect", 80, "")
        if effect and effect not in c["effects"]:
            raise IllegalDeclaration(f"{c['name']} is not suffering from {effect}")
        cured = [effect] if effect else sorted(c["effects"])
        if not cured:
            raise IllegalDeclaration(f"{c['name']} has nothing to cure")
        for name in cured:
            c["effects"].pop(name, None)
        return [event("effect.cured", f"{c['name']} is cured of {', '.join(cured)}.", combatant=c["id"], effects=cured)]

    @contract.declaration("bless", by="gm", after_end=True)
    def _do_bless(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        kind = d.get("kind", "blessing")
        count = read.whole(d, "count", 1, 20, default=1)
        if kind == "blessing":
            c["blessings"] += count
            text = f"{c['name']} is blessed ({c['blessings']} pending)."
        elif kind == "curse":
            c["curses"] += count
            text = f"{c['name']} is cursed ({c['curses']} pending)."
        elif kind == "clear":
            c["blessings"] = c["curses"] = 0
            text = f"{c['name']}'s blessings and curses are lifted."
        else:
            raise InvalidDeclaration("kind must be blessing, curse or clear")
        return [event("luck.changed", text, combatant=c["id"], blessings=c["blessings"], curses=c["curses"])]

    @contract.declaration("repair", by="gm", after_end=True)
    def _do_repair(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        if not c["armour"]:
            raise IllegalDeclaration(f"{c['name']} wears no armour")
        c["armour_wear"] = 0
        c["armour_broken"] = False
        return [event("armour.repaired", f"{c['name']}'s {c['armour']} is as good as new.", combatant=c["id"])]

    @contract.declaration("adjust", by="gm", after_end=True)
    def _do_adjust(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        field = d.get("field")
        limits = {"ap": (-9999, 9999), "wounds": (0, 9999), "ammo": (0, 999), "armour_wear": (0, 100)}
        if field not in limits:
            raise InvalidDeclaration("field must be one of " + ", ".join(limits))
        value = read.whole(d, "value", *limits[field])
        c[field] = value
        if field == "armour_wear":
            c["armour_broken"] = bool(state["options"]["armour_wear"] and c["armour_weight"] > 0
                                      and value >= c["armour_weight"])
        events = [event("combatant.adjusted", f"The GM sets {c['name']}'s {field.replace('_', ' ')} to {value}.",
                        combatant=c["id"], field=field, value=value)]
        if field == "ap" and state["status"] == "active" and state["actor"] == c["id"] and value < 1:
            events.append(event("turn.ended", f"{c['name']} has no action points left for this turn.",
                                combatant=c["id"]))
            events += _advance(state, dice)
        if field == "wounds":
            was = c["defeated"]
            c["defeated"] = value >= c["health"]
            if c["defeated"] and not was:
                events.append(event("combatant.defeated", f"{c['name']} is out of play.", combatant=c["id"]))
            elif was and not c["defeated"]:
                events.append(event("combatant.recovered", f"{c['name']} is back in play.", combatant=c["id"]))
        return events + _after_gm_change(state, dice)

    @contract.declaration("place", by="gm", after_end=True)
    def _do_place(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        x, y = read.square(d, state["options"]["grid_width"], state["options"]["grid_height"])
        other = _occupant(state, x, y)
        if other and other != c["id"]:
            raise IllegalDeclaration("that square is taken")
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        c["x"], c["y"] = x, y
        return [event("combatant.placed", f"The GM puts {c['name']} at column {x + 1}, row {y + 1}.",
                      combatant=c["id"], x=x, y=y)]

    @contract.declaration("computer_turn", by="gm")
    def _do_computer_turn(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        """Let the computer play the current turn (after the GM handed the acting character to it)."""
        actor = state["actor"]
        if state["status"] != "active" or not actor or state["combatants"][actor]["controller"] != "computer":
            raise IllegalDeclaration("the character acting now is not played by the computer")
        return _computer_turns(state, dice)

    @contract.declaration("set_blocked", by="gm")
    def _do_set_blocked(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        """The GM marks the blocked squares (the whole list): no one enters, crosses or reaches past them."""
        blocked = terrain.clean_blocked(d.get("blocked"), state["options"]["grid_width"], state["options"]["grid_height"])
        for c in state["combatants"].values():
            if not c["defeated"] and [c["x"], c["y"]] in blocked:
                raise IllegalDeclaration(f"{c['name']} stands on ({c['x']}, {c['y']}): move it before blocking that square")
        state["blocked"] = blocked
        return [event("board.blocked", f"The GM marks {len(blocked)} blocked square{'s' if len(blocked) != 1 else ''}.",
                      blocked=blocked)]

    @contract.declaration("disarm", by="gm")
    def _do_disarm(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        if not c["weapon"] or not c["weapon_drawn"]:
            raise IllegalDeclaration(f"{c['name']} holds no weapon")
        c["weapon_drawn"] = False
        return [event("weapon.lost", f"{c['name']} loses hold of the {c['weapon']}.", combatant=c["id"])]

    # --- views -----------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        combatants = []
        own = set(viewer.own_combatants(state))
        for cid in state["order"]:
            c = state["combatants"][cid]
            entry = {k: copy.deepcopy(v) for k, v in c.items() if k != "notes"}
            if viewer.is_gm:
                entry["notes"] = c.get("notes", "")
            entry["mine"] = cid in own
            entry["reach"] = melee_reach(c)
            entry["luck"] = luck_state(state, c)
            entry["borrowed"] = c["ap"] < 0
            entry["ranges"] = {
                oid: range_band(c, o, state) for oid, o in state["combatants"].items() if oid != cid and not o["defeated"]
            }
            entry["attack_pool"] = f"{c['agility']}d{c['size']}" + (f"+{c['weapon_attack']}" if _armed(c) and c["weapon_attack"] else "")
            entry["defence_pool"] = f"{c['speed']}d{c['size']}" + (f"+{c['shield_defence']}" if c["shield_defence"] else "")
            combatants.append(entry)
        actor = state["actor"]
        return {
            "system": self.id,
            "status": state["status"],
            "turn": state["turn"],
            "actor": actor,
            "actor_name": state["combatants"][actor]["name"] if actor else None,
            "next": _next_actor(state),
            "timeline": timeline(state),
            "grid": {"width": state["options"]["grid_width"], "height": state["options"]["grid_height"]},
            "blocked": copy.deepcopy(state.get("blocked", [])),
            "options": copy.deepcopy(state["options"]),
            "combatants": combatants,
            "last_result": copy.deepcopy(state.get("last_result")),
            "outcome": copy.deepcopy(state.get("outcome")),
            "thresholds": [list(t) for t in THRESHOLDS],
            "legal": self.legal(state, viewer),
        }

    def legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        """Declaration templates this viewer may send now, each with its cost in AP where it has one."""
        if viewer.role == "spectator":
            return []
        out: list[dict[str, Any]] = []
        actor = state["actor"]
        if state["status"] == "active" and actor and viewer.controls(state, actor):
            c = state["combatants"][actor]
            if viewer.is_gm or c["controller"] == "seat":
                out += _actions_for(state, c, viewer)
            if viewer.is_gm and c["controller"] == "computer":
                out.append({"type": "computer_turn", "label": f"Let the computer play {c['name']}", "tool": True,
                            "fields": []})
        if viewer.is_gm:
            out += _gm_templates(state)
        return out

    def is_checkpoint(self, state: State) -> bool:
        return True


# --------------------------------------------------------------------------------------------
# Combat mechanics
# --------------------------------------------------------------------------------------------


def _armed(c: Mapping[str, Any]) -> bool:
    return bool(c["weapon"]) and bool(c["weapon_drawn"])


def melee_reach(c: Mapping[str, Any]) -> int:
    """Squares this character reaches in melee: the drawn weapon's reach, else 1."""
    return c["weapon_reach"] if _armed(c) else 1


def range_band(c: Mapping[str, Any], other: Mapping[str, Any], state: Mapping[str, Any] | None = None) -> str:
    """"melee", "missile" or "out" as seen from ``c`` towards ``other`` (melee reach counted around
    the blocked squares of ``state``; a missile flies straight)."""
    dist = distance(c, other)
    if in_reach(state, c, other, melee_reach(c)) if state is not None else dist <= melee_reach(c):
        return "melee"
    if c["launcher"] and dist <= c["missile_range"]:
        return "missile"
    return "out"


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


def _pool_roll(
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
    a_weapon = attacker["weapon_attack"] if _armed(attacker) else 0
    a_luck = _use_luck(state, attacker, "weapon_luck")
    a_total, rolls = _pool_roll(rolled_by(dice, attacker["id"]), attacker["agility"], attacker["size"], f"{attacker['name']} attack (Agility)",
                                a_luck, a_weapon + a_bonus)
    if opts["agility_duel"]:
        d_weapon = target["weapon_attack"] if _armed(target) else 0
        d_luck = _use_luck(state, target, "weapon_luck")
        d_total, d_rolls = _pool_roll(rolled_by(dice, target["id"]), target["agility"], target["size"], f"{target['name']} duel (Agility)",
                                      d_luck, d_weapon + d_bonus)
    else:
        d_luck = _use_luck(state, target, "shield_luck")
        d_total, d_rolls = _pool_roll(rolled_by(dice, target["id"]), target["speed"], target["size"], f"{target['name']} defence (Speed)",
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
    a_total, rolls = _pool_roll(rolled_by(dice, attacker["id"]), attacker["focus"], attacker["size"], f"{attacker['name']} shot (Focus)",
                                a_luck, attacker["launcher_attack"] + a_bonus)
    if state["options"]["agility_duel"]:
        d_luck = _use_luck(state, target, "weapon_luck")
        d_total, d_rolls = _pool_roll(rolled_by(dice, target["id"]), target["agility"], target["size"], f"{target['name']} dodge (Agility)",
                                      d_luck, d_bonus)
    else:
        d_luck = _use_luck(state, target, "shield_luck")
        d_total, d_rolls = _pool_roll(rolled_by(dice, target["id"]), target["speed"], target["size"], f"{target['name']} defence (Speed)",
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
        die = attacker["weapon_die"] if _armed(attacker) else 0
        kinds = _split_kinds(attacker["weapon_kind"]) if _armed(attacker) else set()
        effect = attacker["weapon_effect"] if _armed(attacker) else ""
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


def move_cost(state: Mapping[str, Any], mover: Mapping[str, Any], x: int, y: int) -> tuple[int, list[str]]:
    """AP to move to ``(x, y)``: the price per square plus each opponent's size whose reach is left."""
    dest = {"x": x, "y": y}
    steps = walk(state, mover, dest)
    if steps is None:
        raise IllegalDeclaration(f"blocked squares leave {mover['name']} no way to ({x}, {y})")
    cost = state["options"]["move_cost"] * steps
    left = []
    for oid in state["order"]:
        o = state["combatants"][oid]
        if o["side"] == mover["side"] or o["defeated"] or oid == mover["id"]:
            continue
        if in_reach(state, o, mover, melee_reach(o)) and not in_reach(state, o, dest, melee_reach(o)):
            cost += o["size"]
            left.append(oid)
    return cost, left


def _walkable(state: Mapping[str, Any], c: Mapping[str, Any]) -> Mapping[tuple[int, int], int] | None:
    """The squares ``c`` can walk to around blocked squares (None: nothing is blocked, every square)."""
    if not state.get("blocked"):
        return None
    opts = state["options"]
    return terrain.steps_from((c["x"], c["y"]), terrain.blocked_of(state), opts["grid_width"], opts["grid_height"])


def _occupant(state: Mapping[str, Any], x: int, y: int) -> str | None:
    for cid, c in state["combatants"].items():
        if not c["defeated"] and c["x"] == x and c["y"] == y:
            return cid
    return None


def _auto_square(
    side: str, sides: tuple[str, ...], width: int, height: int, taken: set[tuple[int, int]]
) -> tuple[int, int]:
    index = sides.index(side) if side in sides else 0
    columns = list(range(width)) if index % 2 == 0 else list(range(width - 1, -1, -1))
    columns = columns[1:] + columns[:1] if len(columns) > 2 else columns
    rows = list(range(height)) if index < 2 else list(range(height - 1, -1, -1))
    for x in columns:
        for y in rows:
            if (x, y) not in taken:
                return x, y
    raise InvalidDeclaration("the grid is too small for everyone")


def _roller(state: Mapping[str, Any], d: Mapping[str, Any], prefix: str) -> dict[str, Any]:
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


def _spend_pending_luck(state: State, who: Mapping[str, Any]) -> None:
    """A check or contest rolled with the character's pending luck uses up one blessing and one curse."""
    if who["consume"] and state["options"]["blessings"]:
        c = state["combatants"][who["consume"]]
        c["blessings"] = max(0, c["blessings"] - 1)
        c["curses"] = max(0, c["curses"] - 1)


def _three_rolls(dice: DiceSource, who: Mapping[str, Any], label: str) -> tuple[list[int], list[dict[str, Any]]]:
    totals: list[int] = []
    rolls: list[dict[str, Any]] = []
    for i in range(3):
        t, r = _pool_roll(rolled_by(dice, who["combatant"] or "gm"), who["dice"], who["size"], f"{who['name']} {label} roll {i + 1}", who["luck"],
                          who["bonus"])
        totals.append(t)
        rolls += r
    return totals, rolls


def _ap_words(ap: int) -> str:
    return f"{ap} AP left" if ap >= 0 else f"{-ap} AP borrowed"


# --------------------------------------------------------------------------------------------
# Turn order, refreshes, outcome and the computer
# --------------------------------------------------------------------------------------------


def _living(state: Mapping[str, Any]) -> list[str]:
    return [cid for cid in state["order"] if not state["combatants"][cid]["defeated"]]


def _advance(state: State, dice: DiceSource) -> list[Event]:
    """Hand the turn on: skip defeated characters; one with 0 AP or less refreshes instead of acting."""
    events: list[Event] = []
    order = state["order"]
    if not order:
        state["actor"] = None
        return events
    idx = state["turn_index"]
    if any(_can_ever_act(state["combatants"][cid]) for cid in order):
        # A debt deeper than one allowance takes several refresh turns, and the order goes on through
        # them (ruling B&B-2). After a whole pass in which nobody could act, the further passes in
        # which everybody only refreshes are counted at once; someone acts within two passes after.
        for _ in range(4):
            for _ in range(len(order)):
                idx = (idx + 1) % len(order)
                cid = order[idx]
                c = state["combatants"][cid]
                if not _can_ever_act(c):
                    continue
                state["turn"] += 1
                if c["ap"] >= 1:
                    state["turn_index"] = idx
                    state["actor"] = cid
                    events.append(event("turn.started", f"{c['name']} acts ({_ap_words(c['ap'])}).", combatant=cid,
                                        ap=c["ap"], turn=state["turn"]))
                    if c["controller"] == "computer" and not isinstance(dice, _NoComputer):
                        events += _computer_turns(state, dice)
                    return events
                before = c["ap"]
                c["ap"] += c["ap_max"]
                events.append(event("ap.refreshed", f"{c['name']} is out of action points and recovers {c['ap_max']} "
                                    f"({before} to {c['ap']}).", combatant=cid, before=before, ap=c["ap"],
                                    turn=state["turn"]))
            events += _refresh_passes(state)
    state["turn_index"] = idx
    state["actor"] = None
    events.append(event("turn.stalled", "Nobody can act: every character in play has no action points to gain."))
    return events


def _refresh_passes(state: State) -> list[Event]:
    """After a whole pass of the order in which everybody refreshed: the further whole passes in which
    nobody reaches 1 AP yet, taken at once (each of them one refresh turn for every character)."""
    waiting = [state["combatants"][cid] for cid in state["order"] if _can_ever_act(state["combatants"][cid])]
    if not waiting or any(c["ap"] >= 1 for c in waiting):
        return []
    # refreshes each still needs to reach 1 AP; whole passes before the first of them gets there
    passes = min(-(-(1 - c["ap"]) // c["ap_max"]) for c in waiting) - 1
    if passes <= 0:
        return []
    events: list[Event] = []
    for c in waiting:
        before = c["ap"]
        c["ap"] += passes * c["ap_max"]
        state["turn"] += passes
        events.append(event("ap.refreshed", f"{c['name']} is still in debt and recovers {c['ap_max']} in each of "
                            f"{passes} more refresh turns ({before} to {c['ap']}).", combatant=c["id"], before=before,
                            ap=c["ap"], turn=state["turn"], turns=passes))
    return events


def _can_ever_act(c: Mapping[str, Any]) -> bool:
    """In play and either holding a point now or gaining some at a refresh (Speed 0 never does)."""
    return not c["defeated"] and (c["ap"] >= 1 or c["ap_max"] > 0)


def _next_actor(state: Mapping[str, Any]) -> str | None:
    line = timeline(state)
    for entry in line[1:]:
        if entry["kind"] == "act":
            return entry["combatant"]
    return None


def timeline(state: Mapping[str, Any], length: int = TIMELINE_LENGTH) -> list[dict[str, Any]]:
    """The coming turns, starting with the one under way, guessing that each acting turn is an attack."""
    order = state["order"]
    if state["status"] != "active" or not state["actor"]:
        return []
    ap = {cid: c["ap"] for cid, c in state["combatants"].items()}
    if not any(_can_ever_act(state["combatants"][cid]) for cid in order):
        return []
    out: list[dict[str, Any]] = []
    idx = state["turn_index"]
    guard = 0
    while len(out) < length and guard < length * len(order) * 50:
        guard += 1
        cid = order[idx]
        c = state["combatants"][cid]
        idx = (idx + 1) % len(order)
        if c["defeated"] or (ap[cid] < 1 and c["ap_max"] <= 0):
            continue
        before = ap[cid]
        if before >= 1:
            ap[cid] = before - c["attack_cost"]
            out.append({"combatant": cid, "name": c["name"], "kind": "act", "ap": before, "after": ap[cid]})
        else:
            ap[cid] = before + c["ap_max"]
            out.append({"combatant": cid, "name": c["name"], "kind": "refresh", "ap": before, "after": ap[cid]})
    return out


def _check_outcome(state: State) -> list[Event]:
    if state["status"] != "active" or len(state["sides_in_play"]) < 2:
        return []
    standing = sorted({state["combatants"][cid]["side"] for cid in _living(state)})
    if len(standing) > 1:
        return []
    winner = standing[0] if standing else None
    state["status"] = "ended"
    state["actor"] = None
    if winner:
        names = ", ".join(state["combatants"][cid]["name"] for cid in _living(state))
        text = f"The battle is over: side {winner} holds the field ({names})."
    else:
        text = "The battle is over: nobody is left standing."
    state["outcome"] = {"winner": winner, "text": text}
    return [event("battle.ended", text, winner=winner)]


def _after_gm_change(state: State, dice: DiceSource) -> list[Event]:
    """After a GM tool changed numbers: end the battle if a side is gone, or hand the turn on when the
    one acting was put out of play, or restart the clock when it had stalled."""
    events = _check_outcome(state)
    if state["status"] != "active" or not state["order"]:
        return events
    actor = state["actor"]
    if (actor and state["combatants"][actor]["defeated"]) or (
        actor is None and any(_can_ever_act(state["combatants"][cid]) for cid in state["order"])
    ):
        events += _advance(state, dice)
    return events


def _actions_for(state: Mapping[str, Any], c: Mapping[str, Any], viewer: Viewer) -> list[dict[str, Any]]:
    """What the acting character can do now, each with its AP cost and the balance it leaves."""
    out: list[dict[str, Any]] = []
    cid = c["id"]

    def entry(kind: str, label: str, cost: int, **extra: Any) -> dict[str, Any]:
        return {"type": kind, "combatant": cid, "label": label, "cost": cost, "ap_after": c["ap"] - cost,
                "borrows": c["ap"] - cost < 0, **extra}

    enemies = [state["combatants"][o] for o in state["order"]
               if state["combatants"][o]["side"] != c["side"] and not state["combatants"][o]["defeated"]]
    others = [state["combatants"][o] for o in state["order"] if o != cid and not state["combatants"][o]["defeated"]]
    # foes first, the nearest first; an attack on an ally comes after every other action, marked as one
    # (a phone drew "Attack Baerg the Fighter", the prince's own ally, as its first and largest button)
    reach = melee_reach(c)
    on_allies: list[dict[str, Any]] = []
    for t in sorted(others, key=lambda o: distance(c, o)):
        ally = t["side"] == c["side"]
        if in_reach(state, c, t, reach):
            weapon = c["weapon"] if _armed(c) else "bare hands"
            (on_allies if ally else out).append(entry("attack", f"Attack {t['name']} ({weapon})", c["attack_cost"],
                                                      target=t["id"], ally=ally))
    if c["launcher"] and c["ammo"] > 0:
        for t in sorted(others, key=lambda o: distance(c, o)):
            ally = t["side"] == c["side"]
            if distance(c, t) <= c["missile_range"]:
                (on_allies if ally else out).append(entry("shoot", f"Shoot {t['name']} ({c['launcher']}, {c['ammo']} left)",
                                                          c["attack_cost"], target=t["id"], ally=ally))
    if c["weapon"] and not c["weapon_drawn"]:
        out.append(entry("draw", f"Draw the {c['weapon']}", c["weapon_weight"]))
    width, height = state["options"]["grid_width"], state["options"]["grid_height"]
    walkable = _walkable(state, c)
    destinations = []
    for y in range(height):
        for x in range(width):
            if (x, y) == (c["x"], c["y"]) or _occupant(state, x, y) or (walkable is not None and (x, y) not in walkable):
                continue
            cost, left = move_cost(state, c, x, y)
            destinations.append({"x": x, "y": y, "cost": cost, "leaves_reach": bool(left)})
    if destinations:
        cheapest = min(d["cost"] for d in destinations)
        out.append({"type": "move", "combatant": cid, "label": "Move", "cost": cheapest, "ap_after": c["ap"] - cheapest,
                    "borrows": c["ap"] - cheapest < 0, "params": ["x", "y"], "destinations": destinations,
                    "cost_per_square": state["options"]["move_cost"], "enemies_near": len(enemies)})
    out.append(entry("pass", "Wait (end the turn, keep the points)", 0))
    out += on_allies
    if viewer.is_gm:
        out.append(entry("custom_action", "Other action (GM sets the cost)", 0, params=["cost", "label"],
                         fields=[Field("cost", "Cost in AP", "int", 1, 0, 999).to_dict(),
                                 Field("label", "What is done", "text", "", 0, 80).to_dict()]))
    return out


def _gm_templates(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    names = tuple((cid, state["combatants"][cid]["name"]) for cid in state["order"])
    who = (("", "Someone else (type the dice)"), *names)
    attrs = tuple((a, a.capitalize()) for a in ATTRIBUTES)
    luck = (*LUCK_CHOICES, ("pending", "The character's own blessing or curse"))

    def roller_fields(prefix: str, title: str) -> list[dict[str, Any]]:
        return [
            Field(prefix + "combatant", f"{title}: character", "choice", "", choices=who, group=title).to_dict(),
            Field(prefix + "attribute", f"{title}: attribute", "choice", "muscle", choices=attrs, group=title).to_dict(),
            Field(prefix + "name", f"{title}: name (if not a character)", "text", "", 0, 40, group=title).to_dict(),
            Field(prefix + "dice", f"{title}: dice (if not a character)", "int", 3, 0, 50, group=title).to_dict(),
            Field(prefix + "size", f"{title}: die size (if not a character)", "int", 8, 2, 100, group=title).to_dict(),
            Field(prefix + "bonus", f"{title}: bonus per roll", "int", 0, -100, 100, group=title).to_dict(),
            Field(prefix + "luck", f"{title}: luck", "choice", "normal", choices=luck, group=title).to_dict(),
        ]

    difficulty = tuple((n, f"{n.capitalize()} ({v})") for n, v in THRESHOLDS) + (("custom", "Custom target"),)
    out: list[dict[str, Any]] = [
        {"type": "check", "label": "Static check", "tool": True, "fields": [
            Field("label", "What is tried", "text", "", 0, 80).to_dict(),
            *roller_fields("", "Who"),
            Field("difficulty", "Difficulty", "choice", "routine", choices=difficulty).to_dict(),
            Field("target", "Custom target", "int", 30, 1, 1000).to_dict(),
            Field("failure_wounds", "Wounds if it fails (a character only)", "int", 0, 0, 9999).to_dict(),
        ]},
        {"type": "contest", "label": "Contest", "tool": True, "fields": [
            Field("label", "What is contested", "text", "", 0, 80).to_dict(),
            *roller_fields("a_", "First side"),
            *roller_fields("b_", "Second side"),
            Field("mode", "Scoring", "choice", state["options"]["contest_mode"],
                  choices=(("summed", "Three rolls summed"), ("best_of_three", "Best two of three"))).to_dict(),
        ]},
    ]
    if names:
        pick = Field("combatant", "Character", "choice", names[0][0], choices=names).to_dict()
        out += [
            {"type": "heal", "label": "Heal wounds", "tool": True, "fields": [
                pick, Field("amount", "Wounds removed", "int", 5, 1, 9999).to_dict(),
                Field("means", "By", "choice", "rest", choices=(("food", "Food"), ("rest", "Rest"),
                                                               ("healer", "A healer"), ("other", "Other"))).to_dict()]},
            {"type": "cure", "label": "Cure an effect", "tool": True, "fields": [
                pick, Field("effect", "Effect (empty = all)", "text", "", 0, 30).to_dict()]},
            {"type": "bless", "label": "Bless or curse", "tool": True, "fields": [
                pick, Field("kind", "Kind", "choice", "blessing", choices=(("blessing", "Blessing"), ("curse", "Curse"),
                                                                          ("clear", "Lift all"))).to_dict(),
                Field("count", "How many", "int", 1, 1, 20).to_dict()]},
            {"type": "repair", "label": "Repair armour", "tool": True, "fields": [pick]},
            {"type": "disarm", "label": "Disarm", "tool": True, "fields": [pick]},
            {"type": "adjust", "label": "Set a number", "tool": True, "fields": [
                pick, Field("field", "Number", "choice", "ap", choices=(("ap", "Action points"), ("wounds", "Wounds"),
                                                                        ("ammo", "Ammunition"),
                                                                        ("armour_wear", "Armour wear"))).to_dict(),
                Field("value", "New value", "int", 0, -9999, 9999).to_dict()]},
            {"type": "place", "label": "Place on the grid (free)", "tool": True, "params": ["x", "y"], "fields": [
                pick, Field("x", "Column", "int", 0, 0, state["options"]["grid_width"] - 1).to_dict(),
                Field("y", "Row", "int", 0, 0, state["options"]["grid_height"] - 1).to_dict()]},
        ]
    return out


def _computer_turns(state: State, dice: DiceSource) -> list[Event]:
    """Play every computer-controlled turn in a row, stopping at anyone else's turn or the end."""
    events: list[Event] = []
    system = BattlesAndBalances()
    gm = Viewer.gm()
    for _ in range(COMPUTER_TURN_CAP):
        actor = state["actor"]
        if state["status"] != "active" or not actor or state["combatants"][actor]["controller"] != "computer":
            return events
        declaration = computer_choice(state, actor)
        handler = system.handler(declaration["type"])
        assert handler is not None, declaration  # the computer chooses only what the system declares
        # the handler advances the turn itself, but must not recurse into this loop
        events += handler(state, declaration, gm, _NoComputer(dice))
    events.append(event("turn.stalled", "The computer has played many turns in a row; the GM takes over.",
                        visibility=GM_ONLY))
    return events


class _NoComputer:
    """Wraps the dice to tell :func:`_advance` (through the handler) not to start another computer loop."""

    def __init__(self, dice: DiceSource) -> None:
        self.dice = dice

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        return self.dice.roll(count, sides, purpose, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        return self.dice.randint(low, high, purpose)

    def integers(self, low: int, high: int, size: int, purpose: str) -> Any:
        return self.dice.integers(low, high, size, purpose)

    def derive(self, label: str) -> DiceSource:
        return self.dice.derive(label)


def computer_choice(state: Mapping[str, Any], cid: str) -> dict[str, Any]:
    """What a computer-played character does: strike the weakest foe in reach, else shoot, else draw,
    else close in on the nearest foe, else wait. It uses only what is on the board."""
    c = state["combatants"][cid]
    foes = [state["combatants"][o] for o in state["order"]
            if state["combatants"][o]["side"] != c["side"] and not state["combatants"][o]["defeated"]]
    if not foes:
        return {"type": "pass", "combatant": cid}

    def weakest(group: list[dict[str, Any]]) -> dict[str, Any]:
        return min(group, key=lambda o: (o["health"] - o["wounds"], distance(c, o)))

    if c["weapon"] and not c["weapon_drawn"]:
        return {"type": "draw", "combatant": cid}
    reachable = [o for o in foes if in_reach(state, c, o, melee_reach(c))]
    if reachable:
        return {"type": "attack", "combatant": cid, "target": weakest(reachable)["id"]}
    if c["launcher"] and c["ammo"] > 0:
        in_range = [o for o in foes if distance(c, o) <= c["missile_range"]]
        if in_range:
            return {"type": "shoot", "combatant": cid, "target": weakest(in_range)["id"]}
    nearest = min(foes, key=lambda o: distance(c, o))
    width, height = state["options"]["grid_width"], state["options"]["grid_height"]
    best: tuple[int, int, int, int] | None = None
    walkable = _walkable(state, c)
    for y in range(height):
        for x in range(width):
            if _occupant(state, x, y) or (walkable is not None and (x, y) not in walkable):
                continue
            if not in_reach(state, {"x": x, "y": y}, nearest, melee_reach(c)):
                continue
            cost, _ = move_cost(state, c, x, y)
            key = (cost, distance({"x": x, "y": y}, nearest), y, x)
            if best is None or key < best:
                best = key
    if best is None:
        return {"type": "pass", "combatant": cid}
    return {"type": "move", "combatant": cid, "x": best[3], "y": best[2]}
