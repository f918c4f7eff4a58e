"""What an Olympia army is and can do at a moment: its ratings, its units by row, its attackers and
its target slots, its totals and the names its sides go by. Pure reads of the state."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rules.core import State

from .data import (
    GROUP_WORK,
    KIND,
    PHASE_BASE_WORK,
    PHASES,
    SIDES,
    STRUCTURES,
    TERRAIN_QUARTERS,
    Kind,
)


def combat_value(attack: int, missile: int, defence: int) -> int:
    """Combat value of one man: the better of attack and missile, plus defence."""
    return max(attack, missile) + defence


def break_threshold(start_total: float, break_point: int) -> int:
    """The total at or below which a side breaks: start total x break point / 100, rounded down."""
    return math.floor(start_total * break_point / 100)


def plural(n: int, kind: Kind) -> str:
    return f"{n:,} {kind.called(n)}"


def num(value2: int) -> int | float:
    """A value kept in halves, as a plain number."""
    return value2 // 2 if value2 % 2 == 0 else value2 / 2


# --- internal per-phase structures -------------------------------------------------------------------


@dataclass
class Slot:
    """A group of interchangeable target men of one side, as seen at the start of a phase."""

    what: str  # "men", "noble" or "structure"
    unit: str | None
    kind: str | None
    count: int
    row: int
    sheltered: bool = False
    exposed: bool = False  # a noble who may be picked by missile and melee attacks
    start: int = 0  # first index in the side's canonical numbering of target men


@dataclass
class Attackers:
    """Groups of attackers striking together (one side in one phase, or one special attack)."""

    labels: list[str]
    kinds: list[str | None]  # troop kind key, "noble" or None for a special attack
    units: list[str | None]
    a4: list[int]  # attack (or missile) rating x4
    counts: list[int]


# --- units, attackers and targets ---------------------------------------------------------------


def upcoming_phase(state: State) -> str | None:
    """The phase the next step will resolve (phases where nobody can strike are passed over)."""
    if state.get("status") != "active":
        return None
    phase: str = state["next_phase"]
    for _ in range(len(PHASES) + 1):
        if phase_has_attackers(state, phase):
            return phase
        phase = PHASES[0] if phase in ("volley", PHASES[-1]) else PHASES[PHASES.index(phase) + 1]
    return None


def phase_has_attackers(state: State, phase: str) -> bool:
    if phase == "special":
        return bool(active_specials(state))
    if phase in ("missile", "volley"):
        sides = [state["options"]["defender"]] if phase == "volley" else list(SIDES)
        return any(has_missile(state, s) for s in sides)
    return any(sum(melee_attackers(state, s).counts) for s in SIDES)


def active_specials(state: State) -> list[dict[str, Any]]:
    return [s for s in state["specials"] if s["rounds"] == 0 or s["used"] < s["rounds"]]


def has_missile(state: State, side: str) -> bool:
    return sum(missile_attackers(state, side).counts) > 0


def units(state: State, side: str) -> list[tuple[str, dict[str, Any]]]:
    units = [(cid, c) for cid, c in state["combatants"].items() if c["side"] == side]
    units.sort(key=lambda item: (item[1]["behind"], item[1]["order"]))
    return units


def melee_attackers(state: State, side: str) -> Attackers:
    opts, on_ship = state["options"], aboard(state, side)
    att = Attackers([], [], [], [], [])
    for cid, c in units(state, side):
        if c["behind"] != 0:
            continue
        if c["state"] == "fighting" and c["noble_attack"] > 0:
            att.labels.append(c["name"])
            att.kinds.append("noble")
            att.units.append(cid)
            att.a4.append(4 * c["noble_attack"])
            att.counts.append(1)
        for key, n in c["troops"].items():
            rating = attack(KIND[key], opts, on_ship)
            if n > 0 and rating > 0:
                att.labels.append(f"{poss(c['name'])} {KIND[key].many}")
                att.kinds.append(key)
                att.units.append(cid)
                att.a4.append(4 * rating)
                att.counts.append(n)
    return att


def missile_attackers(state: State, side: str) -> Attackers:
    opts = state["options"]
    att = Attackers([], [], [], [], [])
    for cid, c in units(state, side):
        if c["behind"] == 0:
            continue
        for key, n in c["troops"].items():
            m4 = missile4(KIND[key], opts)
            if n > 0 and m4 > 0:
                att.labels.append(f"{poss(c['name'])} {KIND[key].many}")
                att.kinds.append(key)
                att.units.append(cid)
                att.a4.append(m4)
                att.counts.append(n)
    return att


def slots(state: State, side: str) -> list[Slot]:
    """Every man, noble and structure of ``side`` that could be struck, in canonical order."""
    info = state["sides"][side]
    structure = info["structure"]
    shelter = 0
    if structure and not structure["destroyed"]:
        shelter = STRUCTURES[structure["kind"]].shelters
    in_rows = units(state, side)
    front_persons = [
        cid for cid, c in in_rows
        if c["behind"] == 0 and (c["state"] == "fighting" or sum(c["troops"].values()) > 0)
    ]
    slots: list[Slot] = []

    def add(slot: Slot) -> None:
        nonlocal shelter
        if slot.what == "men" and shelter > 0:
            inside = min(shelter, slot.count)
            shelter -= inside
            if inside < slot.count:
                slots.append(Slot(slot.what, slot.unit, slot.kind, inside, slot.row, True))
                slots.append(Slot(slot.what, slot.unit, slot.kind, slot.count - inside, slot.row, False))
                return
            slot.sheltered = True
        elif slot.what == "noble" and shelter > 0:
            shelter -= 1
            slot.sheltered = True
        slots.append(slot)

    for cid, c in in_rows:
        men = sum(c["troops"].values())
        if c["state"] == "fighting":
            exposed = c["behind"] == 0 and men == 0
            if exposed and c["leader"]:
                others = [o for o in front_persons if o != cid]
                exposed = not others
            add(Slot("noble", cid, "noble", 1, c["behind"], exposed=exposed))
        for key in KIND:
            n = c["troops"].get(key, 0)
            if n > 0:
                add(Slot("men", cid, key, n, c["behind"]))
    if structure and not structure["destroyed"]:
        slots.append(Slot("structure", None, None, 1, 0))
    start = 0
    for slot in slots:
        slot.start = start
        start += slot.count
    return slots

# --- totals and names -------------------------------------------------------------------------------


def totals(state: State) -> dict[str, Any]:
    out = {}
    for side, info in state["sides"].items():
        t2 = total2(state, side)
        out[side] = {
            "total": num(t2),
            "total2": t2,
            "start": num(info["start_total2"]),
            "threshold": num(info["threshold2"]),
        }
    return out


def Side_name(state: State, side: str) -> str:  # noqa: N802 - the name at the start of a sentence
    name = side_name(state, side)
    return name[:1].upper() + name[1:]


def side_name(state: State, side: str) -> str:
    leader = state["combatants"].get(state["sides"][side]["leader"])
    return f"side {side} ({leader['name']})" if leader else f"side {side}"

# --- ratings and counts ------------------------------------------------------------------------------


def prisoner_chance(winners: int, losers: int) -> int:
    """The chance in percent that each surviving noble of the loser is taken (ruling Olympia-10):
    25 x the winner's head count / the loser's, rounded down, kept within 25-75.

    >>> prisoner_chance(100, 100), prisoner_chance(250, 100), prisoner_chance(10, 100), prisoner_chance(5, 0)
    (25, 62, 25, 75)
    """
    if losers <= 0:
        return 75
    return max(25, min(75, 25 * winners // losers))


def head_count(state: Mapping[str, Any], side: str) -> int:
    """A side's surviving men (every row) plus its unwounded nobles."""
    return sum(
        sum(c["troops"].values()) + (1 if c["state"] == "fighting" else 0)
        for c in state["combatants"].values() if c["side"] == side
    )


def poss(name: str) -> str:
    """The possessive of a name: "Osswid's", "Captain of archers'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def other(side: str) -> str:
    return "B" if side == "A" else "A"


def row_name(behind: int) -> str:
    return "front row" if behind == 0 else f"back row {behind}"


def aboard(state: Mapping[str, Any], side: str) -> bool:
    structure = state["sides"][side]["structure"]
    return bool(structure and not structure["destroyed"] and STRUCTURES[structure["kind"]].ship)


def attack(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    attack = kind.attack
    if kind.pirate and aboard:
        attack *= 3
    if kind.mounted and opts.get("terrain") in ("sea", "swamp"):
        attack -= 50
    return attack


def defence(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    defence = kind.defence
    if kind.pirate and aboard:
        defence *= 3
    if kind.mounted and opts.get("terrain") in ("sea", "swamp"):
        defence -= 50
    return defence


def missile4(kind: Kind, opts: Mapping[str, Any]) -> int:
    """The missile rating x4 after the weather (0 when the weather grounds it)."""
    weather = opts.get("weather", "clear")
    if kind.missile == 0 or (weather == "rain" and kind.bow):
        return 0
    return 2 * kind.missile if weather == "wind" else 4 * kind.missile


def value2(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    """Twice the combat value of one man (halves appear when the wind halves an odd missile rating)."""
    return max(2 * attack(kind, opts, aboard), missile4(kind, opts) // 2) + 2 * defence(kind, opts, aboard)


def total2(state: Mapping[str, Any], side: str) -> int:
    opts, on_ship = state["options"], aboard(state, side)
    total = 0
    for c in state["combatants"].values():
        if c["side"] != side:
            continue
        if c["state"] == "fighting":
            total += 2 * combat_value(c["noble_attack"], 0, c["noble_defence"])
        for key, n in c["troops"].items():
            total += n * value2(KIND[key], opts, on_ship)
    return total


def defence4(slot: Slot, attacker_kind: str | None, state: Mapping[str, Any], side: str) -> int:
    """The target slot's defence x4 against one attacker kind."""
    opts = state["options"]
    structure = state["sides"][side]["structure"]
    if slot.what == "structure":
        return 4 * STRUCTURES[structure["kind"]].defence
    rating: int
    if slot.what == "noble":
        rating = state["combatants"][slot.unit]["noble_defence"]
    else:
        assert slot.kind is not None  # men: every slot but the structure's names its kind
        kind = KIND[slot.kind]
        rating = defence(kind, opts, aboard(state, side))
        if kind.key == "pikeman" and attacker_kind in KIND and KIND[attacker_kind].mounted:
            rating *= 2
    if slot.sheltered and structure:
        rating += STRUCTURES[structure["kind"]].defence
    quarters = 4
    if opts.get("terrain_defence") and opts.get("defender") == side:
        quarters = TERRAIN_QUARTERS[opts.get("terrain", "plain")]
    return max(0, rating) * quarters


def phase_work(state: Mapping[str, Any]) -> int:
    """The work of the next phase, in men: an upper bound on its attacks, target picks and rolls
    (every man on the field and every special attack), plus a cost per group and per phase.

    It depends only on the state, never on a clock, so a replay stops each step where the game did.
    """
    men = groups = 0
    for c in state["combatants"].values():
        groups += 1
        for n in c["troops"].values():
            men += n
            groups += 1
        if c["state"] == "fighting":
            men += 1
    specials: int = sum(s["attacks"] for s in state["specials"] if s["rounds"] == 0 or s["used"] < s["rounds"])
    return men + specials + GROUP_WORK * (groups + len(state["specials"])) + PHASE_BASE_WORK


def targetable(slots: Sequence[Slot]) -> int:
    """The men of a side that missile and melee attacks could target now: its front-row men, and
    its nobles who are exposed (no structure: that is not a man)."""
    return sum(s.count for s in slots if (s.what == "men" and s.row == 0) or (s.what == "noble" and s.exposed))
