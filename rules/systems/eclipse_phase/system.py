"""Eclipse Phase 2e combat on a square grid: the rule system (forms, setup, apply, the GM's tools).

See the package's docstring for the whole; the class is built in layers, each in its own module.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ... import contract, read, terrain
from ...carry_over import carried_fields, carry_over_help, parse_conditions
from ...core import Event, Field, State, Viewer, combatant_visibility, event, own, told
from ...dice import DiceSource
from ...errors import IllegalDeclaration, InvalidDeclaration
from ...physical import pending as physical_pending
from . import data as tables
from .board import is_able
from .computer import COMPUTER_FOE, COMPUTER_STEP
from .data import ARMOUR, CONDITIONS, INITIATIVE_DUE, POOL_BONUS, WEAPONS
from .rulings import count_of, death_rating, parse_dv, signed, target_number, wound_threshold
from .view import View


class EclipsePhase(View):
    """Eclipse Phase 2e personal combat."""

    id = "eclipse-phase"
    name = "Eclipse Phase 2e"
    summary = "Initiative order, opposed d100 tests with superior and critical results, wounds, on a grid."
    max_combatants = 24

    # --- traits and table hooks ---
    traits = contract.Traits(
        grid=True,
        round_key="round",
        round_word="Action turn",
        charts=(contract.Chart("durability", "Durability left per side (Durability − damage)", "Durability"),),
        # the spectators see each combatant's health as a share, not the numbers
        public_charts=(contract.Chart("condition", "Condition per side (sum of each combatant's shown health, 0–100 %)", "%"),),
        carries_over=True,
        carried_fields=(
            Field("damage", "Damage carried", "int", 0, 0, 999, group=contract.CARRIED_GROUP,
                  help="Damage from an earlier fight, counted against Durability."),
            Field("wounds", "Wounds carried", "int", 0, 0, 99, group=contract.CARRIED_GROUP, help="Each gives -10 to tests."),
            Field("conditions", "Conditions carried", "text", "", 0, 40, group=contract.CARRIED_GROUP,
                  help="Empty, or prone and/or unconscious, separated by commas."),
        ),
        carry_over_help="When a fight is over, the GM can write the survivors back into a saved roster (Battle tab, "
        "\"Survivors carry on\"). Each survivor keeps its damage, its wounds and whether it is knocked down or "
        "unconscious; Flex and Vigor refill. Only those still standing carry on: the dead are left out, and so "
        "are the incapacitated and the unconscious unless the GM ticks \"Also carry on those who fell but live\". The stat "
        "form shows what was carried under \"Carried over\": lower the damage or wounds there when a character heals.",
        # the active combatant's attack on each foe still standing (first weapon)
        odds_questions=(contract.OddsQuestion(
            acting=("active",), against="each_foe",
            declaration={"type": "attack", "combatant": "$acting", "target": "$foe", "weapon": 0},
            parts=(contract.OddsPart("hit", "hit", always=True), contract.OddsPart("wound", "wound")),
        ),),
        demo=contract.Demo("demo-eclipse-phase", "Demo: Eclipse Phase boarding action", (
            ("Jinx", "A", "gm"), ("Habitat guard", "A", "gm"), ("Exhuman stalker", "B", "computer"),
            ("Security synth", "B", "computer"),
        )),
    )

    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        number = self._report_number
        per_side: dict[str, float] = {}
        for cid, c in state.get("combatants", {}).items():
            if shown is None:
                value = max(0.0, number(c.get("durability")) - number(c.get("damage")))
            else:
                seen = shown.get(cid, {})
                health = seen.get("health")
                level = health.get("level") if isinstance(health, Mapping) else None
                if level is None and isinstance(seen.get("damage"), int):  # the GM revealed the numbers
                    level = max(0.0, 1 - seen["damage"] / max(1, seen.get("durability") or 1))
                value = round(100 * number(level))
            per_side[c["side"]] = per_side.get(c["side"], 0) + value
        return {"durability" if shown is None else "condition": per_side}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        c = combatant
        shown = seen if seen is not None else c
        values: dict[str, str] = {}
        if "damage" in shown:
            values["Damage"] = f"{shown.get('damage')}/{shown.get('durability', c.get('durability'))}"
        else:
            health = shown.get("health")
            values["Health"] = str(health.get("label")) if isinstance(health, Mapping) else "—"
        values["Wounds"] = str(shown.get("wounds", 0))
        values["Conditions"] = ", ".join(shown.get("conditions") or []) or "—"
        if seen is None:
            pools = c.get("pools") or {}
            values["Pools"] = ", ".join(f"{k} {v}" for k, v in pools.items()) or "—"
        values["Status"] = str(shown.get("state", "ok"))
        return values

    @staticmethod
    def _report_number(value: Any) -> float:
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

    def carry_standing(self, combatant: Mapping[str, Any]) -> contract.Standing | None:
        if combatant.get("state") == "dead":
            return contract.GONE
        fell = combatant.get("state") == "incapacitated" or "unconscious" in (combatant.get("conditions") or [])
        return contract.FALLEN if fell else None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        from rules.carry_over import LASTING_CONDITIONS

        entry["damage"] = combatant.get("damage", 0)
        entry["wounds"] = combatant.get("wounds", 0)
        entry["conditions"] = ", ".join(k for k in combatant.get("conditions", []) if k in LASTING_CONDITIONS)
        return entry  # pools: the form's Flex and Vigor are the full pools, refilled
    # --- end of traits and table hooks ---

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return tables.combatant_fields() + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return tables.option_fields()

    def presets(self) -> list[dict[str, Any]]:
        base = {f.name: f.default for f in self.combatant_fields()}
        return [{**base, **preset} for preset in tables.PRESETS]

    def help(self) -> list[dict[str, str]]:
        return [dict(section) for section in tables.HELP] + carry_over_help(self.id)

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        cleaned = super().validate_combatant(data, index)
        if cleaned["custom_weapon"]:
            parse_dv(cleaned["custom_dv"])
        if cleaned["full_move"] < cleaned["base_move"]:
            raise InvalidDeclaration(f"{cleaned['name']}: full move must be at least the base move")
        if cleaned.get("conditions"):  # carried from an earlier fight
            try:
                cleaned["conditions"] = ", ".join(parse_conditions(cleaned["conditions"]))
            except InvalidDeclaration as exc:
                raise InvalidDeclaration(f"{cleaned['name']}: {exc}") from None
        return cleaned

    # --- setup -------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        if len(entries) < self.min_combatants:
            raise InvalidDeclaration(f"a battle needs at least {self.min_combatants} combatants")
        if len({e["side"] for e in entries}) < 2:
            raise InvalidDeclaration("a fight needs combatants on both sides")
        opts = self.validate_options(options)
        # blocked squares come from the table's board (not an option of the form)
        blocked = terrain.clean_blocked(options.get("blocked") if isinstance(options, Mapping) else None,
                                        opts["width"], opts["height"])
        combatants: dict[str, Any] = {}
        taken: set[tuple[int, int]] = set()
        for entry in entries:
            if entry["x"] >= 0 and entry["y"] >= 0:
                if entry["x"] >= opts["width"] or entry["y"] >= opts["height"]:
                    raise InvalidDeclaration(f"{entry['name']}: starting square is off the grid")
                if (entry["x"], entry["y"]) in taken:
                    raise InvalidDeclaration(f"{entry['name']}: starting square is already taken")
                if [entry["x"], entry["y"]] in blocked:
                    raise InvalidDeclaration(f"{entry['name']}: starting square ({entry['x']}, {entry['y']}) is blocked")
                taken.add((entry["x"], entry["y"]))
        taken.update((x, y) for x, y in blocked)
        for entry in entries:
            c = self._build_combatant(entry)
            if entry["x"] < 0 or entry["y"] < 0:
                c["x"], c["y"] = self._free_square(opts, taken, entry["side"])
            taken.add((c["x"], c["y"]))
            combatants[c["id"]] = c
        state: State = {
            "system": self.id,
            "status": "active",
            "options": opts,
            "blocked": blocked,
            "round": 0,
            "order": [],
            "initiative": {},
            "turn_index": 0,
            "active": None,
            "turn": self._fresh_turn(),
            "pending": None,
            "last_exchange": None,
            "reveal_health": opts["reveal_health"],
            "combatants": combatants,
            "outcome": None,
        }
        names = ", ".join(c["name"] for c in combatants.values())
        events = [event("battle.started", f"The fight begins: {names}.")]
        typists = [combatants[cid]["name"] for cid in self._initiative_typists(state)]
        if typists:
            # the battle cannot wait for typed faces while it is set up: the first command rolls
            state["initiative_due"] = True
            events.append(event("initiative.due", f"{INITIATIVE_DUE}: the GM starts the action turn, then "
                                f"{', '.join(typists)} roll{'s' if len(typists) == 1 else ''} a d6 with real dice.",
                                round=1))
            return state, events
        self._start_round(state, dice, events)
        return state, events

    def _build_combatant(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        weapons = []
        for slot in ("weapon1", "weapon2", "weapon3"):
            if entry[slot] != "none":
                weapons.append({"id": entry[slot], **copy.deepcopy(WEAPONS[entry[slot]])})
        if entry["custom_weapon"]:
            modes = {"single": ["single"], "burst": ["single", "burst"],
                     "full_auto": ["single", "burst", "full_auto"]}[entry["custom_modes"]]
            skill = entry["custom_skill"]
            weapons.append({
                "id": "custom", "name": entry["custom_weapon"], "skill": skill, "dv": entry["custom_dv"].replace(" ", ""),
                "armour": entry["custom_armour"], "ap": entry["custom_ap"],
                "range": 0 if skill == "melee" else max(1, entry["custom_range"]),
                "modes": ["single"] if skill == "melee" else modes, "two_handed": entry["custom_two_handed"],
            })
        if not any(w["skill"] == "melee" for w in weapons):
            weapons.append({"id": "unarmed", **copy.deepcopy(WEAPONS["unarmed"])})
        gear = ARMOUR[entry["armour"]]
        c = {k: entry[k] for k in ("id", "name", "side", "controller", "seat", "morph", "morph_type", "durability",
                                   "size", "base_move", "full_move", "som", "initiative", "fray", "melee", "guns",
                                   "athletics", "traumas", "x", "y")}
        c.update({
            "wound_threshold": wound_threshold(entry["durability"]),
            "death_rating": death_rating(entry["durability"], entry["morph_type"]),
            "som_check": entry["som"] * 3,
            "armour_name": gear[0],
            "energy_armour": gear[1] + entry["energy_natural"],
            "kinetic_armour": gear[2] + entry["kinetic_natural"],
            "weapons": weapons,
            "pools": {"flex": entry["flex"], "vigor": entry["vigor"]},
            "pools_max": {"flex": entry["flex"], "vigor": entry["vigor"]},
            # damage, wounds and lasting conditions carried from an earlier fight (rules/carry_over.py)
            "damage": entry.get("damage", 0),
            "wounds": entry.get("wounds", 0),
            "state": ("dead" if entry.get("damage", 0) >= death_rating(entry["durability"], entry["morph_type"])
                      else "incapacitated" if entry.get("damage", 0) >= entry["durability"] else "ok"),
            "conditions": parse_conditions(entry.get("conditions", "")),
            "full_defence": False,
            "aggressive": False,
            "aim": None,
            "modifiers": [],
        })
        return c

    @staticmethod
    def _free_square(opts: Mapping[str, Any], taken: set[tuple[int, int]], side: str) -> tuple[int, int]:
        columns = range(opts["width"]) if side == "A" else range(opts["width"] - 1, -1, -1)
        for x in list(columns)[1:] + [list(columns)[0]]:
            for y in range(1, opts["height"], 2):
                if (x, y) not in taken:
                    return x, y
        for x in range(opts["width"]):
            for y in range(opts["height"]):
                if (x, y) not in taken:
                    return x, y
        raise InvalidDeclaration("the grid is too small for all combatants")

    # --- apply ------------------------------------------------------------------------------------
    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        """The generic checks, after making sure a named combatant is at least an id (not a list or object);
        the marks of the computer's own turn (computer.py) come from the engine's loop alone."""
        if isinstance(declaration, Mapping) and "combatant" in declaration:
            cid = declaration["combatant"]
            if cid is not None and not isinstance(cid, str):
                raise InvalidDeclaration("combatant must be a combatant id")
        if isinstance(declaration, Mapping) and (COMPUTER_STEP in declaration or COMPUTER_FOE in declaration):
            raise InvalidDeclaration("only the computer goes on with its own turn")
        super().authorize(state, declaration, viewer)

    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if state.get("status") != "active":
            raise IllegalDeclaration("the battle is not running")
        if kind in self.gm_declarations and not viewer.is_gm:
            raise IllegalDeclaration(f"only the GM may send {kind}")
        # the engine's copy for this command, or a copy of the state handed in (the odds and the
        # tests apply one state again and again): rules.core.own
        new = own(state)
        events: list[Event] = []
        handler(new, declaration, viewer, dice, events)
        return new, events

    # --- GM tools ------------------------------------------------------------------------------
    @contract.declaration("modifier", by="gm")
    def _do_modifier(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                     events: list[Event]) -> None:
        c = self._combatant(state, d)
        label = d.get("label")
        if not isinstance(label, str) or not label.strip() or len(label.strip()) > 40:
            raise InvalidDeclaration("label must be a short text (1 to 40 characters)")
        value = read.whole(d, "value")
        if not -60 <= value <= 60 or value == 0:
            raise InvalidDeclaration("value must be between −60 and +60 and not zero")
        applies = self._choice(d, "applies", ("attack", "defence", "all"), "all")
        lasting = self._flag(d, "lasting")
        mod = {"label": label.strip(), "value": value, "applies": applies, "lasting": lasting}
        p = state["pending"]
        if p is not None and p["phase"] == "defence" and not lasting and (
                c["id"] == p["attacker"] and applies in ("attack", "all")):
            p["mods"].append({"label": mod["label"], "value": value, "gm": True})
            p["target"] = target_number(p["skill_value"], p["mods"], POOL_BONUS if p["pool"] else 0)
            text = f"GM: {mod['label']} {signed(value)} to {c['name']}'s attack; target number now {p['target']}."
        else:
            c["modifiers"].append(mod)
            scope = "lasting" if lasting else "next"
            text = f"GM: {mod['label']} {signed(value)} to {c['name']}'s {scope} {applies if applies != 'all' else 'test'}s"
            text = text if lasting else text[:-1]
            text += "."
        # a combatant's modifiers are its own numbers: its player and the GM hear of them
        events.append(event("modifier.added", text, visibility=combatant_visibility(c["id"]), combatant=c["id"], modifier=mod))

    @contract.declaration("clear_modifiers", by="gm")
    def _do_clear_modifiers(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        c = self._combatant(state, d)
        c["modifiers"] = []
        events.append(event("modifier.cleared", f"GM clears {c['name']}'s extra modifiers.", visibility=combatant_visibility(c["id"]),
                            combatant=c["id"]))

    @contract.declaration("condition", by="gm")
    def _do_condition(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        c = self._combatant(state, d)
        cond = self._choice(d, "condition", CONDITIONS, "surprised")
        on = self._flag(d, "on")
        if on and cond not in c["conditions"]:
            c["conditions"].append(cond)
        elif not on and cond in c["conditions"]:
            c["conditions"].remove(cond)
        else:
            raise IllegalDeclaration(f"{c['name']} is {'already' if on else 'not'} {CONDITIONS[cond]}")
        events.append(event("condition.changed", f"{c['name']} is {'now' if on else 'no longer'} {CONDITIONS[cond]}.",
                            combatant=c["id"], condition=cond, on=on))
        if cond == "unconscious":
            if on and state["active"] == c["id"] and state["pending"] is None:
                self._end_turn(state, dice, events)
            self._check_end(state, events)

    @contract.declaration("adjust", by="gm")
    def _do_adjust(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        """GM correction: set a combatant's damage and wounds (healing, a mistake, an effect off the board)."""
        c = self._combatant(state, d)
        if state["pending"] is not None:
            raise IllegalDeclaration("finish the attack in progress first")
        damage, wounds = read.whole(d, "damage"), read.whole(d, "wounds")
        if not (0 <= damage <= 999 and 0 <= wounds <= 99):
            raise InvalidDeclaration("damage must be 0 to 999 and wounds 0 to 99")
        c["damage"], c["wounds"] = damage, wounds
        before = c["state"]
        c["state"] = "dead" if damage >= c["death_rating"] else "incapacitated" if damage >= c["durability"] else "ok"
        change = f" ({c['state'] if c['state'] != 'ok' else 'back in the fight'})" if c["state"] != before else ""
        # the damage total is hidden from other seats and spectators unless the GM reveals numbers
        text = f"GM sets {c['name']} to {damage} damage and {count_of(wounds, 'wound')}{change}."
        words = told(text, combatant=c["id"], damage=damage, wounds=wounds) if state["reveal_health"] else told(
            f"GM corrects {c['name']}'s injuries: {count_of(wounds, 'wound')}{change}.", combatant=c["id"], wounds=wounds)
        events.append(event("combatant.adjusted", text, visibility=combatant_visibility(c["id"]), others=words,
                            combatant=c["id"], damage=damage, wounds=wounds))
        if state["active"] == c["id"] and not is_able(c):
            self._end_turn(state, dice, events)
        self._check_end(state, events)

    @contract.declaration("set_blocked", by="gm")
    def _do_set_blocked(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        """The GM marks the blocked squares (the whole list): no token enters or crosses them."""
        opts = state["options"]
        blocked = terrain.clean_blocked(d.get("blocked"), opts["width"], opts["height"])
        for c in state["combatants"].values():
            if c["state"] != "dead" and [c["x"], c["y"]] in blocked:
                raise IllegalDeclaration(f"{c['name']} stands on ({c['x']}, {c['y']}): move it before blocking that square")
        state["blocked"] = blocked
        events.append(event("board.blocked", f"The GM marks {len(blocked)} blocked square{'s' if len(blocked) != 1 else ''}.",
                            blocked=blocked))

    @contract.declaration("reveal", by="gm")
    def _do_reveal(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        on = self._flag(d, "on")
        state["reveal_health"] = on
        events.append(event("health.revealed" if on else "health.hidden",
                            "GM shows everyone's Durability numbers." if on else "GM hides the Durability numbers.",
                            on=on))

    @contract.declaration("advance", by="gm")
    def _do_advance(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        """Nothing by itself: the engine's loop then lets computer-played combatants act (computer.py)."""
        if not self._computer_waiting(state):
            raise IllegalDeclaration("no computer-played combatant is waiting to act")

    # --- undo points ----------------------------------------------------------------------------------
    def is_checkpoint(self, state: State) -> bool:
        if state.get("status") != "active":
            return True
        if physical_pending(state) is not None:  # half-typed dice are no place for undo to land
            return False
        turn = state.get("turn") or {}
        return state.get("pending") is None and not turn.get("moved") and not turn.get("complex_used") \
            and not turn.get("quick_aimed")
