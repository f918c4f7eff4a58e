"""Eclipse Phase's action turn: initiative, whose turn it is, movement, aims, full defence, the turn's end.

The first layer of the system's class (turns.py, then called_shots.py, combat.py, computer.py, view.py,
and system.py on top): reading a declaration's fields, the flow of action turns, and the declarations a
combatant makes on its turn besides attacking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ... import contract, read, terrain
from ...contract import RuleSystem
from ...core import GM_ONLY, Event, State, Viewer, event, told
from ...dice import DiceSource
from ...errors import IllegalDeclaration, InvalidDeclaration
from ...physical import active as physical_active
from ...physical import rolled_by, who_enters
from .board import is_able
from .data import AIM_COMPLEX, AIM_MODES, AIM_QUICK


class Turns(RuleSystem):
    """The action turn of Eclipse Phase (the base of :class:`~.system.EclipsePhase`)."""

    # --- reading a declaration's fields -----------------------------------------------------
    def _combatant(self, state: State, declaration: Mapping[str, Any], key: str = "combatant") -> dict[str, Any]:
        c: dict[str, Any] = state["combatants"][read.combatant(declaration, key, state)]
        return c

    @staticmethod
    def _flag(declaration: Mapping[str, Any], key: str) -> bool:
        value = declaration.get(key, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise InvalidDeclaration(f"{key} must be true or false")
        return value

    @staticmethod
    def _choice(declaration: Mapping[str, Any], key: str, allowed: Mapping[str, Any] | tuple[str, ...],
                default: str) -> str:
        value = declaration.get(key, default)
        if value is None:
            value = default
        if not isinstance(value, str) or value not in allowed:
            raise InvalidDeclaration(f"{key} must be one of {', '.join(allowed)} (got {value!r})")
        return value

    def _require_active(self, state: State, c: Mapping[str, Any]) -> None:
        if state["pending"] is not None:
            raise IllegalDeclaration("an attack is being resolved; wait until it is over")
        if state["active"] != c["id"]:
            raise IllegalDeclaration(f"it is not {c['name']}'s turn")

    # --- flow ---------------------------------------------------------------------------------
    @staticmethod
    def _initiative_typists(state: State) -> list[str]:
        """The able combatants whose initiative d6 is rolled with real dice (rules/physical.py)."""
        if not physical_active(state):
            return []
        return [cid for cid, c in state["combatants"].items() if is_able(c) and who_enters(state, cid)[0]]

    @staticmethod
    def _fresh_turn() -> dict[str, Any]:
        return {"moved": 0.0, "complex_used": False, "quick_aimed": False, "acted": False}

    def _start_round(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        state["round"] += 1
        able = [cid for cid, c in state["combatants"].items() if is_able(c)]
        scores: dict[str, dict[str, Any]] = {}
        rolls = []
        for cid in able:
            c = state["combatants"][cid]
            roll = rolled_by(dice, cid).roll(1, 6, f"{c['name']} initiative")
            rolls.append(roll)
            score = c["initiative"] - c["wounds"]
            scores[cid] = {"score": score, "roll": roll.total, "total": score + roll.total, "tiebreak": []}
        # ties: higher score first, then roll-offs among those still level
        groups: dict[tuple[int, int], list[str]] = {}
        for cid in able:
            groups.setdefault((scores[cid]["total"], scores[cid]["score"]), []).append(cid)
        for group in groups.values():
            pending = [group]
            while pending:
                tied = pending.pop()
                if len(tied) < 2:
                    continue
                level: dict[int, list[str]] = {}
                for cid in tied:
                    roll = rolled_by(dice, cid).roll(1, 6, f"{state['combatants'][cid]['name']} initiative tie-break")
                    rolls.append(roll)
                    scores[cid]["tiebreak"].append(roll.total)
                    level.setdefault(roll.total, []).append(cid)
                pending.extend(level.values())
        order = sorted(able, key=lambda cid: (-scores[cid]["total"], -scores[cid]["score"],
                                              [-t for t in scores[cid]["tiebreak"]]))
        state["order"] = order
        state["initiative"] = scores
        state["turn_index"] = 0
        text = ", ".join(f"{state['combatants'][cid]['name']} {scores[cid]['total']}" for cid in order)
        names = ", ".join(state["combatants"][cid]["name"] for cid in order)
        # the totals come from each combatant's Initiative: the others hear the order and see the dice
        events.append(event("round.started", f"Action turn {state['round']}. Initiative: {text}.", rolls=rolls,
                            visibility=GM_ONLY, others=told(f"Action turn {state['round']}. The order: {names}.", rolls=rolls,
                                                            round=state["round"], order=order),
                            round=state["round"], order=order))
        self._begin_turn(state, events)

    def _begin_turn(self, state: State, events: list[Event]) -> None:
        """Make the next able combatant in the order active (starting a new round is left to the caller)."""
        while state["turn_index"] < len(state["order"]):
            cid = state["order"][state["turn_index"]]
            c = state["combatants"][cid]
            if is_able(c):
                state["active"] = cid
                state["turn"] = self._fresh_turn()
                c["full_defence"] = False
                c["aggressive"] = False
                events.append(event("turn.started", f"{c['name']}'s turn.", combatant=cid))
                return
            state["turn_index"] += 1
        state["active"] = None

    def _end_turn(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        cid = state["active"]
        if cid is not None:
            c = state["combatants"][cid]
            if c["aim"] is not None:
                c["aim"]["turns"] -= 1
                c["aim"]["ready"] = True
                if c["aim"]["turns"] <= 0:
                    c["aim"] = None
            if "surprised" in c["conditions"]:
                c["conditions"].remove("surprised")
            events.append(event("turn.ended", f"{c['name']} ends its turn.", combatant=cid))
        state["turn_index"] += 1
        self._begin_turn(state, events)
        if state["active"] is None and state["status"] == "active":
            self._start_round(state, dice, events)

    def _check_end(self, state: State, events: list[Event]) -> None:
        sides = sorted({c["side"] for c in state["combatants"].values() if is_able(c)})
        if len(sides) > 1:
            return
        state["status"] = "ended"
        state["pending"] = None
        state["active"] = None
        if sides:
            winners = [c["name"] for c in state["combatants"].values() if c["side"] == sides[0] and is_able(c)]
            state["outcome"] = {"winner": sides[0], "text": f"Side {sides[0]} wins ({', '.join(winners)} standing)."}
        else:
            state["outcome"] = {"winner": None, "text": "Nobody is left standing."}
        events.append(event("battle.ended", state["outcome"]["text"], outcome=state["outcome"]))

    # --- what a combatant can do now --------------------------------------------------------
    @staticmethod
    def _aim_ready(c: Mapping[str, Any], target_id: str) -> bool:
        """Whether the combatant holds an aim at this target that its next ranged attack on it would use."""
        aim = c.get("aim")
        return bool(aim and aim["target"] == target_id and aim.get("ready", True))

    @staticmethod
    def _can_aim(c: Mapping[str, Any]) -> bool:
        """Aiming needs a ranged weapon able to fire single shots (ruling 10)."""
        return any(w["skill"] != "melee" and any(m in AIM_MODES for m in w["modes"]) and not w.get("dropped_at")
                   for w in c["weapons"])

    @staticmethod
    def _full_move_made(state: State, c: Mapping[str, Any]) -> bool:
        """Whether the combatant has moved more than its base move this turn, as a charge needs (ruling 10)."""
        active: str | None = state["active"]
        moved: float = state["turn"]["moved"]
        base_move: float = c["base_move"]
        return active == c["id"] and moved > base_move + 1e-9

    @staticmethod
    def can_defend(c: Mapping[str, Any]) -> bool:
        """Whether the combatant may defend at all: able to act and not surprised."""
        return is_able(c) and "surprised" not in c["conditions"]

    @staticmethod
    def _within_reach(c: Mapping[str, Any], square: list[int]) -> bool:
        dx: int = c["x"] - square[0]
        dy: int = c["y"] - square[1]
        return max(abs(dx), abs(dy)) <= 1

    def reachable(self, state: State, c: Mapping[str, Any]) -> list[tuple[int, int]]:
        """Free squares the combatant can still reach this turn."""
        opts = state["options"]
        left = c["full_move"] - state["turn"]["moved"] if state["active"] == c["id"] else 0
        reach = left / opts["metres_per_square"]
        occupied = {(o["x"], o["y"]) for o in state["combatants"].values() if o["state"] != "dead"}
        # the shortest way around blocked squares (with none, the straight distance)
        lengths = terrain.path_lengths((c["x"], c["y"]), terrain.blocked_of(state), opts["width"], opts["height"],
                                       reach)
        return sorted(sq for sq, d in lengths.items() if sq not in occupied and d <= reach + 1e-9)

    # --- the declarations of a turn: move, stand up, full defence, aim, end turn ------------------
    @contract.declaration("move")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                 events: list[Event]) -> None:
        c = self._combatant(state, d)
        x, y = read.whole(d, "x"), read.whole(d, "y")
        opts = state["options"]
        if not (0 <= x < opts["width"] and 0 <= y < opts["height"]):  # a legal question here (tested so)
            raise IllegalDeclaration(f"square ({x}, {y}) is off the grid")
        if (x, y) == (c["x"], c["y"]):
            raise IllegalDeclaration(f"{c['name']} is already there")
        for other in state["combatants"].values():
            if other["id"] != c["id"] and (other["x"], other["y"]) == (x, y) and other["state"] != "dead":
                raise IllegalDeclaration(f"{other['name']} stands on that square")
        blocked = terrain.blocked_of(state)
        if (x, y) in blocked:
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        squares = terrain.path_length((c["x"], c["y"]), (x, y), blocked, opts["width"], opts["height"])
        if squares is None and not viewer.is_gm:
            raise IllegalDeclaration(f"blocked squares leave {c['name']} no way to ({x}, {y})")
        if squares is None:  # the GM may set a token down anywhere free, even where no way leads
            squares = math.hypot(x - c["x"], y - c["y"])
        metres = round(squares * opts["metres_per_square"], 2)
        own_turn = state["active"] == c["id"] and state["pending"] is None
        if not viewer.is_gm:
            self._require_active(state, c)
            if "prone" in c["conditions"]:
                raise IllegalDeclaration(f"{c['name']} is knocked down; stand up first")
            left = c["full_move"] - state["turn"]["moved"]
            if metres > left + 1e-9:
                raise IllegalDeclaration(f"{c['name']} can move only {left:g} m more this turn (that is {metres:g} m)")
        if own_turn:
            state["turn"]["moved"] = round(state["turn"]["moved"] + metres, 2)
        c["x"], c["y"] = x, y
        text = f"{c['name']} moves {metres:g} m."
        if own_turn and state["turn"]["moved"] > c["base_move"] + 1e-9:
            text += " That is a full move (−20 to its attacks this turn, or −10 for a charge)."
        events.append(event("combatant.moved", text, combatant=c["id"], x=x, y=y, metres=metres))

    @contract.declaration("stand")
    def _do_stand(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        if "prone" not in c["conditions"]:
            raise IllegalDeclaration(f"{c['name']} is not knocked down")
        c["conditions"].remove("prone")
        events.append(event("combatant.stood", f"{c['name']} gets back up.", combatant=c["id"]))

    @contract.declaration("full_defence")
    def _do_full_defence(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
        state["turn"]["complex_used"] = True
        c["full_defence"] = True
        events.append(event("defence.declared", f"{c['name']} goes on full defence (+30 to defend until its next "
                            "turn).", combatant=c["id"]))

    @contract.declaration("aim")
    def _do_aim(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        target = self._combatant(state, d, "target")
        if target["id"] == c["id"]:
            raise IllegalDeclaration("a combatant cannot aim at itself")
        careful = self._flag(d, "complex")
        if not self._can_aim(c):
            raise IllegalDeclaration(f"{c['name']} has no ranged weapon that fires single shots, so it cannot aim "
                                     "(an aim helps single shots only)")
        if careful:
            if state["turn"]["complex_used"]:
                raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
            state["turn"]["complex_used"] = True
            c["aim"] = {"target": target["id"], "bonus": AIM_COMPLEX, "turns": 2, "ready": False}
            text = f"{c['name']} takes careful aim at {target['name']} (+30 to single shots on its next turn)."
        else:
            if state["turn"]["quick_aimed"]:
                raise IllegalDeclaration(f"{c['name']} has already aimed this turn")
            if state["turn"]["complex_used"]:
                raise IllegalDeclaration("a quick aim helps only an attack still to come this turn")
            state["turn"]["quick_aimed"] = True
            c["aim"] = {"target": target["id"], "bonus": AIM_QUICK, "turns": 1, "ready": True}
            text = f"{c['name']} aims at {target['name']} (+10 to a single-shot attack on it this turn)."
        events.append(event("aim.taken", text, combatant=c["id"], target=target["id"]))

    @contract.declaration("roll_initiative", by="gm")
    def _do_roll_initiative(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        """The GM starts the first action turn of a battle whose initiative is rolled with real dice."""
        if not state.get("initiative_due"):
            raise IllegalDeclaration("initiative is rolled already: the action turn is under way")
        del state["initiative_due"]
        self._start_round(state, dice, events)

    @contract.declaration("end_turn")
    def _do_end_turn(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                     events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        self._end_turn(state, dice, events)
