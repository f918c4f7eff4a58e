"""The computer player of Phantom's Bane: it weighs each option from what its own side can see.

A combatant the computer plays chooses when its turn starts (after the setup, and after each
resolution), when the GM hands it to the computer mid-turn, and when a choice is made while it
has none yet. The engine (rules/engine.py) asks :func:`next_choice` after each declaration, the
computer's own included, and after the setup and an assignment; what it names is a ``choose``
marked ``computer`` (only the engine's loop sends one: ``authorize`` refuses it from anyone), which
draws the computer's 1-100 number from ``dice.derive("computer")`` (:func:`computer_pick`) and,
when it answers a choice or an assignment (``settle``), settles the turn once both have chosen,
as a declared choice does. The picks when a turn starts never settle it: with the computer on
both sides the GM settles the turn (``force_resolve``).

``force_resolve`` keeps its own picks, for any combatant without a choice whoever plays it
("for the GM's forced resolution"): that is the GM's declaration, not the computer's player.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from rules.core import GM_ONLY, HIDDEN, Event, State, event, owner_visibility
from rules.dice import DiceSource

from .data import OPTION_LABELS, OPTIONS
from .ratings import half
from .view import project

#: the mark of the computer's own ``choose`` (:func:`next_choice`), and whether it settles the turn
BY_COMPUTER, SETTLE = "computer", "settle"


def next_choice(
    state: Mapping[str, Any], declaration: Mapping[str, Any] | None, events: Sequence[Event]
) -> dict[str, Any] | None:
    """The computer's next choice after ``declaration`` made ``events``, or None: for the first
    combatant it plays (in the lineup's order) that has no choice yet. It settles the turn when it
    answers a choice or an assignment, never when a turn has just started (its ``turn.started``
    among the events, or the computer's own pick of that start before it)."""
    if state.get("status") != "active":
        return None
    waiting = [cid for cid in state["order"]
               if state["combatants"][cid]["controller"] == "computer" and state["choices"].get(cid) is None]
    if not waiting:
        return None
    if any(e.get("type") == "turn.started" for e in events):
        settle = False
    elif declaration is not None and declaration.get(BY_COMPUTER):
        settle = bool(declaration.get(SETTLE))
    else:
        settle = True
    return {"type": "choose", "combatant": waiting[0], BY_COMPUTER: True, SETTLE: settle}


def _two_dice_distribution() -> dict[int, int]:
    counts: dict[int, int] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            counts[a + b] = counts.get(a + b, 0) + 1
    return counts


_2D6 = _two_dice_distribution()


@lru_cache(maxsize=4096)  # (pure; asked at every choice of every playout of who's winning)
def escape_chance(disengagement: int, engagement: int) -> float:
    """Chance that 2d6 + ``disengagement`` beats 2d6 + ``engagement`` (ties fail).

    >>> escape_chance(9, 10) < 0.5 < escape_chance(12, 10)
    True
    """
    wins = 0
    for a, ca in _2D6.items():
        for b, cb in _2D6.items():
            if a + disengagement > b + engagement:
                wins += ca * cb
    return wins / 1296


@lru_cache(maxsize=4096)  # (pure; as above)
def expected_hit(offence_base: int, defence_base: int) -> float:
    """Average ordinary damage of one d6 + ``offence_base`` against one d6 + ``defence_base``.

    >>> expected_hit(5, 5) > 0, expected_hit(0, 20)
    (True, 0.0)
    """
    total = 0
    for a in range(1, 7):
        for b in range(1, 7):
            total += max(0, offence_base + a - defence_base - b)
    return total / 36


def computer_scores(view: Mapping[str, Any], cid: str) -> dict[str, float]:
    """How much the computer likes each option, worked out from one side's projection only.

    >>> from rules.systems.phantoms_bane import PhantomsBane
    >>> pb = PhantomsBane()
    >>> p = {x["name"]: x for x in pb.presets()}
    >>> lineup = [{**p["Jharek"], "id": "j", "side": "A"},
    ...           {**p["Marsh Troll"], "id": "t", "side": "B", "controller": "computer"}]
    >>> from rules.dice import ScriptedDice
    >>> state, _ = pb.setup(lineup, {}, ScriptedDice([50]))
    >>> scores = computer_scores(project(state, {"t"}, gm=False), "t")
    >>> max(scores, key=scores.get)
    'press'
    """
    me = view["combatants"][cid]
    foe_id = next(x for x in view["order"] if x != cid)
    foe = view["combatants"][foe_id]

    def gear(c: Mapping[str, Any], slot: str) -> int:
        item = c.get(slot)
        return int(item["effective"]) if item else 0

    def bases(c: Mapping[str, Any], option: str) -> tuple[int, int]:
        off = c["offence"] + gear(c, "weapon")
        dfc = c["defence"] + gear(c, "armour")
        if option == "press":
            off, dfc = off + half(c["offence"]), dfc - half(c["defence"])
        elif option == "defend":
            off, dfc = off - half(c["offence"]), dfc + half(c["defence"])
        return off, dfc

    temperament = me.get("temperament", "steady")
    foe_off, foe_def = bases(foe, "attack")
    my_health = max(me["health"], 1)
    foe_health = max(foe["health"], 1)
    caution = {"cowardly": 1.6, "steady": 1.0, "reckless": 0.5}.get(temperament, 1.0)
    scores: dict[str, float] = {}
    for option in ("press", "attack", "defend"):
        off, dfc = bases(me, option)
        dealt = expected_hit(off, foe_def)
        taken = expected_hit(foe_off, dfc)
        kill = 1.0 if dealt >= foe["health"] else 0.0
        scores[option] = dealt / foe_health + 0.3 * kill - caution * taken / my_health

    plain_off, plain_def = bases(me, "attack")
    dealt_plain = expected_hit(plain_off, foe_def)
    taken_plain = expected_hit(foe_off, plain_def)
    my_turns = me["health"] / max(taken_plain, 0.05)
    foe_turns = foe["health"] / max(dealt_plain, 0.05)
    losing = my_turns < foe_turns
    chance = escape_chance(me["defence"] + me["skill"], foe["offence"] + foe["skill"])
    low = me["health"] * 2 <= me["health_max"]
    if temperament == "reckless":
        # goes all out, the more so when the fight turns against it
        scores["press"] += 0.35 + (1.5 if losing else 0.0)
    elif temperament == "cowardly":
        scores["defend"] += 0.15
    if temperament == "cowardly":
        run = chance * (1.0 + (0.6 if low else 0.0)) if low or (losing and my_turns < 2) else -0.5
    elif temperament == "reckless":
        run = -1.0  # a reckless foe never flees
    else:
        run = chance * 0.8 if losing and (low or my_turns < 1.5) else -0.5
    scores["run_away"] = run
    return {k: round(v, 4) for k, v in scores.items()}


def computer_pick(state: State, cid: str, dice: DiceSource, forced: bool = False) -> list[Event]:
    """Let the computer choose for ``cid`` from its own side's view; one 1-100 roll breaks habits."""
    view = project(state, {cid}, gm=False)
    scores = computer_scores(view, cid)
    ranked = sorted(OPTIONS, key=lambda o: (-scores[o], OPTIONS.index(o)))
    roll = dice.derive("computer").randint(1, 100, f"{state['combatants'][cid]['name']} computer choice")
    face = roll.total
    # mostly the best option, sometimes the second, rarely the third
    pick = ranked[0] if face <= 70 else ranked[1] if face <= 92 else ranked[2]
    if pick == "run_away" and scores["run_away"] < 0:
        pick = ranked[0] if ranked[0] != "run_away" else ranked[1]
    state["choices"][cid] = pick
    state["chosen_by"][cid] = "computer"
    name = state["combatants"][cid]["name"]
    why = "for the GM's forced resolution" if forced else "for the computer"
    return [
        event("choice.made", f"{name} has chosen.", combatant=cid, changed=False),
        event(
            "choice.made",
            f"The computer picks {OPTION_LABELS[pick]} for {name} ({why}).",
            visibility={"computer": HIDDEN, "seat": owner_visibility(cid)}.get(
                state["combatants"][cid]["controller"], GM_ONLY
            ),
            rolls=[roll],
            combatant=cid,
            option=pick,
            scores=scores,
            by="computer",
        ),
    ]


# --- resolving a turn ----------------------------------------------------------------------------
