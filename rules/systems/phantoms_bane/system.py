"""The Phantom's Bane rule system: its forms, its declarations, its projection (see __init__.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rules import contract
from rules.carry_over import carried_fields, carry_over_help
from rules.contract import RuleSystem
from rules.core import Event, Field, State, Viewer, clone, event, own
from rules.dice import DiceSource
from rules.errors import IllegalDeclaration, InvalidDeclaration

from .computer import BY_COMPUTER, computer_pick, next_choice
from .data import FIELDS, HELP, OPTION_FIELDS, PRESETS, STAT_NAMES
from .turn import choose, resolve_and_continue, set_escape, start_turn
from .view import legal, project


class PhantomsBane(RuleSystem):
    """Phantom's Bane: secret simultaneous choices, one duel, weakening over time."""

    id: ClassVar[str] = "phantoms-bane"
    name: ClassVar[str] = "Phantom's Bane"
    summary: ClassVar[str] = (
        "A one-on-one duel. Each turn both sides secretly press, attack, defend or run away; "
        "four dice settle the exchange, and a long fight wears both down."
    )
    min_combatants: ClassVar[int] = 2
    max_combatants: ClassVar[int] = 2
    sides: ClassVar[tuple[str, ...]] = ("A", "B")

    # --- traits and table hooks ---
    traits = contract.Traits(
        round_key="turn",
        round_word="Turn",
        charts=(contract.Chart("health", "Health left per side", "Health"),),
        # a duel has few events: every wound counts
        key_events=frozenset({"damage.dealt", "combatant.weakened", "penetration.scored", "counter.scored"}),
        carries_over=True,
        carried_fields=(
            Field("health_max", "Full Health", "int", 0, 0, 999, group=contract.CARRIED_GROUP,
                  help="0: the same as Health. Higher than Health: the rest is a wound from an earlier fight."),
            Field("offence_max", "Full Offence", "int", 0, 0, 99, group=contract.CARRIED_GROUP,
                  help="0: the same as Offence. Higher: Offence was weakened in an earlier fight."),
            Field("defence_max", "Full Defence", "int", 0, 0, 99, group=contract.CARRIED_GROUP,
                  help="0: the same as Defence. Higher: Defence was weakened in an earlier fight."),
        ),
        carry_over_help="When a duel is over, the GM can write the survivors back into a saved roster (Battle tab, "
        "\"Survivors carry on\"). A survivor keeps its Health, its weakened Offence and Defence (the full values are "
        "kept beside them, as in 5/7), and its gear at the bonus it was worn down to; gear that broke is gone. "
        "The defeated are left out. The stat form shows the full values under \"Carried over\": heal by raising "
        "Health there.",
        # each duellist's choices, each with its chance to hit and to win (or to escape)
        odds_questions=(contract.OddsQuestion(
            acting=("order", "*all"), declaration={"type": "choose", "combatant": "$acting"}, choices=True,
            parts=(contract.OddsPart("deal_damage", "hit", always=True), contract.OddsPart("defeat_foe", "win")),
            parts_by_option={"run_away": (contract.OddsPart("escape", "escape", always=True),)},
        ),),
        demo=contract.Demo("demo", "Demo: a Phantom's Bane duel", (("Jharek", "A", "gm"), ("Wild Monster", "B", "computer"))),
    )

    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        health: dict[str, float] = {}
        for c in state.get("combatants", {}).values():
            health[c.get("side")] = health.get(c.get("side"), 0) + max(0.0, self._report_number(c.get("health")))
        return {"health": health}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        c = combatant

        def gear(item: Any) -> str:
            return f"{item.get('name')} +{item.get('bonus')}" if isinstance(item, Mapping) else "—"

        return {
            "Health": f"{c.get('health')}/{c.get('health_max')}",
            "Offence": f"{c.get('offence')}/{c.get('offence_max')}",
            "Defence": f"{c.get('defence')}/{c.get('defence_max')}",
            "Weapon": gear(c.get("weapon")),
            "Armour": gear(c.get("armour")),
            "Status": "defeated" if c.get("defeated") else "escaped" if c.get("escaped") else "standing",
        }

    @staticmethod
    def _report_number(value: Any) -> float:
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

    def carry_standing(self, combatant: Mapping[str, Any]) -> contract.Standing | None:
        # a duellist at no Health has no fight left in him
        return contract.GONE if combatant.get("defeated") or combatant.get("health", 0) <= 0 else None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        c = combatant
        for stat in ("health", "offence", "defence", "skill"):
            entry[stat] = c[stat]
        for stat in ("health", "offence", "defence"):
            entry[f"{stat}_max"] = c[f"{stat}_max"] if c[f"{stat}_max"] > c[stat] else 0
        for slot in ("weapon", "armour"):
            item = c.get(slot)
            if item is None:  # destroyed (or never had one)
                entry[f"{slot}_name"], entry[f"{slot}_bonus"] = "", 0
            else:
                entry[f"{slot}_name"], entry[f"{slot}_bonus"] = item["name"], item["bonus"]
        return entry
    # --- end of traits and table hooks ---

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return [*FIELDS, *carried_fields(self.id)]

    def option_fields(self) -> list[Field]:
        return list(OPTION_FIELDS)

    def validate_options(self, data: Any) -> dict[str, Any]:
        data = dict(data or {}) if isinstance(data, Mapping) else data
        if isinstance(data, dict) and "escape_impossible" not in data and "escape_possible" in data:
            possible = Field("escape_possible", "Running away can succeed", "bool", True).clean(
                data["escape_possible"], "option "
            )
            data["escape_impossible"] = not possible
        return super().validate_options(data)

    def presets(self) -> list[dict[str, Any]]:
        presets: list[dict[str, Any]] = clone(PRESETS)
        return presets

    def help(self) -> list[dict[str, str]]:
        return [*clone(HELP), *carry_over_help(self.id)]

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        cleaned = super().validate_lineup(lineup)
        sides = sorted(c["side"] for c in cleaned)
        if len(cleaned) != 2 or sides != ["A", "B"]:
            raise InvalidDeclaration(
                "Phantom's Bane is a duel: the lineup needs exactly one combatant on side A and one on side B"
            )
        return cleaned

    # --- setting up --------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        opts = self.validate_options(options)
        entries.sort(key=lambda c: c["side"])
        combatants: dict[str, Any] = {}
        for entry in entries:
            combatants[entry["id"]] = new_combatant(entry)
        order = [c["id"] for c in entries]
        state: State = {
            "system": self.id,
            "status": "active",
            "turn": 1,
            "order": order,
            "options": opts,
            "escape_possible": not opts["escape_impossible"],
            "combatants": combatants,
            "choices": {cid: None for cid in order},
            "chosen_by": {cid: None for cid in order},
            "last_turn": None,
            "outcome": None,
        }
        a, b = (combatants[cid]["name"] for cid in order)
        events = [event("battle.started", f"{a} faces {b} in a duel.", combatants=order)]
        events += start_turn(state)
        return state, events

    # --- declarations ------------------------------------------------------------------------
    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        handler = self.handler(kind)
        if handler is None:
            *kinds, last = self.declarations
            raise InvalidDeclaration(f"unknown declaration type {kind!r} (expected {', '.join(kinds)} or {last})")
        # the engine's copy for this command, or a copy of the state handed in (the odds and the
        # tests apply one state again and again): rules.core.own
        new = own(state)
        if new.get("status") != "active":
            raise IllegalDeclaration("the duel is not under way")
        result: tuple[State, list[Event]] = handler(new, declaration, dice)
        return result

    #: both sides choose in secret at once; a turn resolves only once each side's choice is in
    @contract.declaration("choose", simultaneous=True)
    def _do_choose(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        return choose(new, declaration, dice)

    @contract.declaration("force_resolve", by="gm")
    def _do_force_resolve(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        events: list[Event] = []
        for cid in new["order"]:
            if new["choices"][cid] is None:
                events += computer_pick(new, cid, dice, forced=True)
        return new, events + resolve_and_continue(new, dice)

    @contract.declaration("set_escape", by="gm")
    def _do_set_escape(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        return new, set_escape(new, declaration)

    # --- projections -------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        own = set(viewer.own_combatants(state))
        view = project(state, own, gm=viewer.is_gm)
        view["legal"] = legal(state, viewer, own)
        return view

    # the common view shape (rules/contract.py's VIEW_KEYS), read off the projection above
    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        if view.get("status") != "active":
            return {"combatants": [], "label": "Over"}
        return {"combatants": list(view.get("waiting_for") or []), "label": f"Turn {view.get('turn')}, secret choices"}

    def view_fighter_out(self, combatant: Mapping[str, Any]) -> bool:
        return bool(combatant.get("defeated") or combatant.get("escaped"))  # (``destroyed``: its broken gear)

    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        """The generic checks; and the computer's own choice is made only by the engine's loop."""
        if declaration.get(BY_COMPUTER) is not None:
            raise InvalidDeclaration("only the computer makes its own choices")
        super().authorize(state, declaration, viewer)

    def computer_choice(
        self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
    ) -> dict[str, Any] | None:
        """The computer chooses for a combatant it plays that has no choice yet (computer.py)."""
        return next_choice(state, declaration, events)

    def is_checkpoint(self, state: State) -> bool:
        """True at the start of a turn, before any choice other than the computer's."""
        if state.get("status") != "active":
            return False
        return all(by in (None, "computer") for by in state.get("chosen_by", {}).values())


# --- building blocks (module level so they stay pure and testable) --------------------------------

def gear(name: str, bonus: int, natural: bool) -> dict[str, Any] | None:
    if not name:
        return None
    return {"name": name, "bonus": bonus, "max_bonus": bonus, "natural": bool(natural)}


def new_combatant(entry: Mapping[str, Any]) -> dict[str, Any]:
    combatant: dict[str, Any] = {
        "name": entry["name"],
        "side": entry["side"],
        "seat": entry["seat"],
        "controller": entry["controller"],
        "temperament": entry["temperament"],
    }
    for stat in STAT_NAMES:
        combatant[stat] = entry[stat]
        # a value carried from an earlier fight may sit below its full one (rules/carry_over.py)
        combatant[f"{stat}_max"] = max(entry[stat], entry.get(f"{stat}_max") or 0)
    combatant["weapon"] = gear(entry["weapon_name"], entry["weapon_bonus"], entry["weapon_natural"])
    combatant["armour"] = gear(entry["armour_name"], entry["armour_bonus"], entry["armour_natural"])
    combatant["destroyed"] = []
    combatant["defeated"] = False
    combatant["escaped"] = False
    return combatant
