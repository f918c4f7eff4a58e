"""Eclipse Phase's computer player: the choices it makes for the combatants it plays.

The engine (rules/engine.py) asks :meth:`Computer.computer_choice` after each declaration (the
computer's own included), after the setup and after an assignment, and applies what it names as
the GM's, with the same dice, until a person's choice is due. The computer defends when its
combatant is attacked (the defence with the best target number), flips its roll with a pool when
that turns the contest its way or accepts it, and plays its combatant's turn one declaration at a
time: it ends the turn if its complex action is spent; else it stands up if knocked down, takes
back a dropped weapon in reach (and ends the turn), shoots its best ranged weapon at the nearest
able foe, or closes in on that foe and strikes with its heaviest melee weapon (a charge after a
full move), and ends the turn when it can do nothing more. A declaration after which its turn
goes on carries where (:data:`COMPUTER_STEP`, and the foe it closes in on, :data:`COMPUTER_FOE`),
so the turn goes on as one plan, with the foe chosen when it began; only the engine's loop sends
such a declaration (``authorize`` refuses them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...core import Event, State
from .board import adjacent, distance_squares, is_able
from .combat import Combat
from .rulings import contest, flip, judge, parse_dv

#: the computer's own declaration that leaves its turn to go on: the step after which (stood up,
#: took back a weapon, moved), and the foe it moved towards
COMPUTER_STEP, COMPUTER_FOE = "computer_step", "computer_foe"
STOOD, PICKED_UP, MOVED = "stood", "picked_up", "moved"


class Computer(Combat):
    """The computer acts for computer-played combatants until a person's choice is due."""

    def _computer_waiting(self, state: State) -> bool:
        p = state["pending"]
        comps = state["combatants"]
        if p is None:
            return state["active"] is not None and comps[state["active"]]["controller"] == "computer"
        if p["phase"] == "defence":
            controller: str = comps[p["defender"]]["controller"]
            return controller == "computer"
        return any(not post["accepted"] and comps[p["attacker" if side == "attacker" else "defender"]]["controller"]
                   == "computer" for side, post in p["post"].items())

    def computer_choice(
        self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
    ) -> dict[str, Any] | None:
        """The computer's next declaration (rules/contract.py): a defence or a reaction it owes, else
        the next step of the turn of a combatant it plays; or the next step of its own turn when its
        last declaration left the turn to go on (:data:`COMPUTER_STEP`)."""
        if declaration is not None and declaration.get(COMPUTER_STEP):
            return self._computer_turn(state, str(declaration["combatant"]), str(declaration[COMPUTER_STEP]),
                                       declaration.get(COMPUTER_FOE))
        if state["status"] != "active" or (declaration is not None and declaration.get("type") == "assign"):
            return None  # a combatant handed to the computer waits for the GM's ``advance``
        p = state["pending"]
        comps = state["combatants"]
        if p is not None:
            if p["phase"] == "defence":
                if comps[p["defender"]]["controller"] != "computer":
                    return None
                options = self.defence_options(state, p)
                best = max(options, key=lambda o: o["target"])
                return {"type": "defend", "combatant": p["defender"], "method": best["method"]}
            for side, post in p["post"].items():
                cid = p["attacker" if side == "attacker" else "defender"]
                if post["accepted"] or comps[cid]["controller"] != "computer":
                    continue
                spend = self._computer_spend(state, side)
                if spend:
                    return {"type": "spend", "combatant": cid, **spend}
                return {"type": "accept", "combatant": cid}
            return None
        cid = state["active"]
        if cid is None or comps[cid]["controller"] != "computer":
            return None
        return self._computer_turn(state, cid, None, None)

    def _computer_spend(self, state: State, side: str) -> dict[str, str] | None:
        p = state["pending"]
        standing = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        for choice in self.reaction_choices(state, side):
            if choice["use"] != "flip":
                continue
            trial = dict(p["rolls"])
            trial[side] = judge(flip(p["rolls"][side]["roll"]), p["rolls"][side]["target"])
            after = contest(trial["attacker"], trial["defender"])
            if after != standing and (after == "hit") == (side == "attacker"):
                return {"pool": choice["pool"], "use": "flip"}
        return None

    def _computer_turn(self, state: State, cid: str, after: str | None, foe: Any) -> dict[str, Any]:
        """The next step of ``cid``'s turn: ``after`` None when it begins (then the computer stands up
        if knocked down and goes on, ``STOOD``), ``PICKED_UP`` after it took back a weapon (its turn
        ends), ``MOVED`` after it closed in on ``foe`` (it strikes if it can, else ends its turn)."""
        c = state["combatants"][cid]
        end_turn = {"type": "end_turn", "combatant": cid}
        if after is None:
            if state["turn"]["complex_used"]:
                return end_turn
            if "prone" in c["conditions"]:
                return {"type": "stand", "combatant": cid, COMPUTER_STEP: STOOD}
            after = STOOD
        if after == PICKED_UP:
            return end_turn
        if after == STOOD:
            enemies = [o for o in state["combatants"].values() if o["side"] != c["side"] and is_able(o)]
            if not enemies:
                return end_turn
            enemy = min(enemies, key=lambda o: (distance_squares(c, o), o["id"]))
            for i, w in enumerate(c["weapons"]):  # a weapon knocked from its hand and still in reach: take it back
                if w.get("dropped_at") and self._within_reach(c, w["dropped_at"]):
                    return {"type": "pick_up", "combatant": cid, "weapon": i, COMPUTER_STEP: PICKED_UP}
            ranged = [(i, w) for i, w in enumerate(c["weapons"]) if not w.get("dropped_at") and w["skill"] != "melee"]
            if ranged:
                index, _weapon = max(ranged, key=lambda iw: c[iw[1]["skill"]])
                return {"type": "attack", "combatant": cid, "target": enemy["id"], "weapon": index}
            if not adjacent(c, enemy, state) and not state["turn"]["moved"]:
                square = self._approach_square(state, c, enemy)
                if square is not None:
                    return {"type": "move", "combatant": cid, "x": square[0], "y": square[1],
                            COMPUTER_STEP: MOVED, COMPUTER_FOE: enemy["id"]}
        else:  # MOVED: the foe it closed in on
            enemy = state["combatants"][foe]
        melee = [(i, w) for i, w in enumerate(c["weapons"]) if not w.get("dropped_at") and w["skill"] == "melee"]
        if adjacent(c, enemy, state) and melee:
            index, _weapon = max(melee, key=lambda iw: parse_dv(iw[1]["dv"])[0] * parse_dv(iw[1]["dv"])[1])
            return {"type": "attack", "combatant": cid, "target": enemy["id"], "weapon": index,
                    "charge": self._full_move_made(state, c)}
        return end_turn

    def _approach_square(self, state: State, c: Mapping[str, Any], enemy: Mapping[str, Any]) -> tuple[int, int] | None:
        reach = self.reachable(state, c)
        if not reach:
            return None
        return min(reach, key=lambda sq: (max(abs(sq[0] - enemy["x"]), abs(sq[1] - enemy["y"])) > 1,
                                          math.hypot(sq[0] - enemy["x"], sq[1] - enemy["y"]),
                                          math.hypot(sq[0] - c["x"], sq[1] - c["y"]), sq))
