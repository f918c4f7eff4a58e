"""The one-die duel as a rule system: its forms, its declarations, its computer, its view's hooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rules import contract
from rules.contract import RuleSystem
from rules.core import Event, Field, State, Viewer, event, own
from rules.dice import DiceSource
from rules.errors import IllegalDeclaration, InvalidDeclaration

from .data import HELP, OPTION_FIELDS, PRESETS, SYSTEM_ID
from .view import project


class OneDie(RuleSystem):
    """Two duellists, one die each a round: the higher face hits, three hits win."""

    id: ClassVar[str] = SYSTEM_ID
    name: ClassVar[str] = "One-die duel"
    summary: ClassVar[str] = "Both duellists roll one die a round; the higher hits, and three hits win."
    min_combatants: ClassVar[int] = 2
    max_combatants: ClassVar[int] = 2
    sides: ClassVar[tuple[str, ...]] = ("A", "B")

    traits = contract.Traits(
        round_key="round",
        round_word="Round",
        charts=(contract.Chart("hits", "Hits per side", "hits"),),
        key_events=frozenset({"round.resolved"}),
        demo=contract.Demo("one-die", "Demo: a one-die duel", (("Ann the Bold", "A", "gm"), ("Bert the Brave", "B", "computer"))),
        # no front end of its own: the pages draw it from the common view shape
        board_module="generic",
    )

    # --- forms -----------------------------------------------------------------------------
    def option_fields(self) -> list[Field]:
        return list(OPTION_FIELDS)

    def presets(self) -> list[dict[str, Any]]:
        return [dict(p) for p in PRESETS]

    def help(self) -> list[dict[str, str]]:
        return [dict(h) for h in HELP]

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        cleaned = super().validate_lineup(lineup)
        if sorted(c["side"] for c in cleaned) != ["A", "B"]:
            raise InvalidDeclaration("a one-die duel needs exactly one duellist on side A and one on side B")
        return cleaned

    # --- the game --------------------------------------------------------------------------
    def setup(self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        entries = sorted(self.validate_lineup(lineup), key=lambda c: c["side"])
        order = [c["id"] for c in entries]
        state: State = {
            "system": self.id,
            "status": "active",
            "round": 1,
            "order": order,
            "options": self.validate_options(options),
            "combatants": {c["id"]: {"name": c["name"], "side": c["side"], "controller": c["controller"],
                                     "seat": c["seat"], "hits": 0, "out": False} for c in entries},
            "rolled": {cid: None for cid in order},
            "last_round": None,
            "outcome": None,
        }
        a, b = (state["combatants"][cid]["name"] for cid in order)
        return state, [event("battle.started", f"{a} and {b} take up their dice.", combatants=order)]

    def apply(self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        handler = self.handler(declaration.get("type"))
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {declaration.get('type')!r} (expected roll or force)")
        new = own(state)  # the engine's copy, or a copy: the tests apply the same state more than once
        if new.get("status") != "active":
            raise IllegalDeclaration("the duel is not under way")
        result: tuple[State, list[Event]] = handler(new, declaration, dice)
        return result

    @contract.declaration("roll")
    def _roll(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        cid = declaration.get("combatant")
        if not isinstance(cid, str) or cid not in new["combatants"]:
            raise InvalidDeclaration("roll names the duellist who rolls (combatant)")
        if new["rolled"][cid] is not None:
            raise IllegalDeclaration(f"{new['combatants'][cid]['name']} has rolled this round already")
        return new, self._one_roll(new, cid, dice)

    @contract.declaration("force", by="gm")
    def _force(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        events: list[Event] = []
        for cid in list(new["order"]):
            if new["status"] == "active" and new["rolled"][cid] is None:
                events += self._one_roll(new, cid, dice)
        return new, events

    def _one_roll(self, state: State, cid: str, dice: DiceSource) -> list[Event]:
        name = state["combatants"][cid]["name"]
        roll = dice.roll(1, 6, f"{name}'s die")
        state["rolled"][cid] = roll.total
        if any(face is None for face in state["rolled"].values()):
            # the first roll of the round: its face only to its roller's side (and the GM)
            return [event("die.rolled", f"{name} rolls {roll.total} in secret.", visibility=f"combatant:{cid}",
                          others=f"{name} has rolled.", rolls=[roll], combatant=cid)]
        # the second: the round resolves at once, its line telling both faces (with this die, for the TV's tray)
        return self._resolve(state, roll)

    def _resolve(self, state: State, roll: Any) -> list[Event]:
        a, b = state["order"]
        faces = {cid: int(state["rolled"][cid]) for cid in (a, b)}
        names = {cid: state["combatants"][cid]["name"] for cid in (a, b)}
        need = state["options"]["hits_to_win"]
        number = state["round"]
        if faces[a] == faces[b]:
            text, hitter = f"Round {number}: both roll {faces[a]}; no hit.", None
        else:
            hitter, other = (a, b) if faces[a] > faces[b] else (b, a)
            state["combatants"][hitter]["hits"] += 1
            hits = state["combatants"][hitter]["hits"]
            text = (f"Round {number}: {names[hitter]} rolls {faces[hitter]} against {faces[other]} "
                    f"and hits {names[other]} ({hits} of {need}).")
        state["last_round"] = {"round": number, "faces": faces, "hitter": hitter}
        events = [event("round.resolved", text, rolls=[roll], faces=faces, hitter=hitter)]
        if hitter is not None and state["combatants"][hitter]["hits"] >= need:
            loser = b if hitter == a else a
            state["combatants"][loser]["out"] = True
            state["status"] = "ended"
            won = f"{names[hitter]} wins the duel."
            state["outcome"] = {"reason": "hits", "winner": state["combatants"][hitter]["side"], "text": won}
            events.append(event("battle.ended", won, winner=state["combatants"][hitter]["side"]))
            return events
        state["round"] = number + 1
        state["rolled"] = {cid: None for cid in state["order"]}
        return events

    # --- the computer: it rolls for a duellist it plays as soon as that one has not rolled --------
    def computer_choice(self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]) -> dict[str, Any] | None:
        if state.get("status") != "active":
            return None
        for cid in state["order"]:
            if state["combatants"][cid]["controller"] == "computer" and state["rolled"][cid] is None:
                return {"type": "roll", "combatant": cid}
        return None

    def is_checkpoint(self, state: State) -> bool:
        """The start of a round: nobody but the computer has rolled yet."""
        if state.get("status") != "active":
            return False
        return all(face is None or state["combatants"][cid]["controller"] == "computer" for cid, face in state["rolled"].items())

    # --- views -----------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return project(state, viewer)

    # the common view shape (rules/contract.py's VIEW_KEYS), read off the duel's own part
    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        duel = view.get("duel") or {}
        if view.get("status") != "active":
            return {"combatants": [], "label": "Over"}
        return {"combatants": list(duel.get("waiting_for") or []), "label": f"Round {duel.get('round')}, roll the die"}

    def view_fighters(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        return super().view_fighters(view.get("duel") or {})

    # --- the report ------------------------------------------------------------------------
    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        hits: dict[str, float] = {}
        for c in state.get("combatants", {}).values():
            hits[c["side"]] = hits.get(c["side"], 0) + float(c["hits"])
        return {"hits": hits}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        return {"Hits": str(combatant.get("hits")), "Status": "beaten" if combatant.get("out") else "standing"}
