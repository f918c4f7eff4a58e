"""Battles&Balances, the rule system: the setup and every declaration, the combatant's actions (which
cost action points) and the GM's tools (which work in any battle status).

>>> bb = BattlesAndBalances()
>>> derived(bb.validate_combatant(PRINCE, 0))
{'health': 16, 'damage_modifier': 4, 'ap_max': 16, 'attack_cost': 5}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from rules import contract, read, terrain
from rules.carry_over import carried_fields, carry_over_help, parse_effects
from rules.contract import RuleSystem
from rules.core import Event, Field, State, Viewer, event, own
from rules.dice import DiceSource
from rules.errors import IllegalDeclaration, InvalidDeclaration
from rules.physical import rolled_by

from . import data, view
from .board import auto_square, distance, in_reach, melee_reach, move_cost, occupant, walk
from .combat import (
    chance_at_least,
    pool_roll,
    resolve_melee,
    resolve_ranged,
    roller,
    spend_pending_luck,
    three_rolls,
    threshold_reached,
)
from .computer import COMPUTER_TURN, computer_plays, next_choice
from .data import HELP, PRESETS, PRINCE, THRESHOLD_VALUES, derived
from .turns import advance, after_gm_change, ap_words, check_outcome

__all__ = ["PRINCE", "BattlesAndBalances", "derived"]


class BattlesAndBalances(RuleSystem):
    """Battles&Balances: dice pools, borrowed action points and the GM's contest and check tools."""

    id = "battles-and-balances"
    name = "Battles&Balances"
    summary = "Dice pools by size, action points you can borrow, melee reach and missile range, contests and checks."
    min_combatants = 0
    max_combatants = 40
    sides = ("A", "B", "C", "D")

    # --- traits and table hooks ---
    traits = contract.Traits(
        grid=True,
        round_key="turn",
        round_word="Turn",
        charts=(contract.Chart("health", "Health left per side (health − wounds)", "Health"),),
        carries_over=True,
        carried_fields=(
            Field("wounds", "Wounds carried", "int", 0, 0, 9999, group=contract.CARRIED_GROUP,
                  help="Wounds from an earlier fight; at Health or more the character starts out of play."),
            Field("effects", "Effects carried", "text", "", 0, 120, group=contract.CARRIED_GROUP,
                  help="Persistent effects and their marks, e.g. 'poison 2, fire 1'."),
            Field("blessings", "Blessings pending", "int", 0, 0, 99, group=contract.CARRIED_GROUP),
            Field("curses", "Curses pending", "int", 0, 0, 99, group=contract.CARRIED_GROUP),
        ),
        carry_over_help="When a battle is over, the GM can write the survivors back into a saved roster (Battle "
        "tab, \"Survivors carry on\"). Each character keeps its wounds, its armour wear, the ammunition it has left, "
        "its persistent effects (poison, fire...) with their marks, and any blessing or curse still pending; "
        "action points start full again. The defeated are left out unless the GM ticks \"Also those who fell but "
        "live\": a defeated character then keeps its wounds and starts out of play until healed (the GM's healing "
        "tool, or lower \"Wounds carried\" in the stat form).",
        # the acting character's choices, each with its chance to hit and to put the target out
        odds_questions=(contract.OddsQuestion(
            acting=("actor",), name_key="actor_name", declaration={"combatant": "$acting"}, choices=True,
            parts=(contract.OddsPart("hit", "hit", always=True), contract.OddsPart("defeat", "out")),
        ),),
        demo=contract.Demo("demo-battles-and-balances", "Demo: Battles&Balances skirmish", (
            ("Prince Vasyl of Ostgrund", "A", "gm"), ("Baerg the Fighter", "A", "gm"),
            ("Huge Orc", "B", "computer"), ("Goblin Archer", "B", "computer"),
        )),
    )

    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        number = self._report_number
        health: dict[str, float] = {}
        for c in state.get("combatants", {}).values():
            left = max(0.0, number(c.get("health")) - number(c.get("wounds")))
            health[c.get("side")] = health.get(c.get("side"), 0) + left
        return {"health": health}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        c = combatant
        values = {"Wounds": f"{c.get('wounds')}/{c.get('health')}", "Action points": f"{c.get('ap')}/{c.get('ap_max')}"}
        if c.get("armour"):
            values["Armour wear"] = f"{c.get('armour_wear')}" + (" (broken)" if c.get("armour_broken") else "")
        values["Effects"] = ", ".join(str(k) for k in c.get("effects") or {}) or "—"
        values["Status"] = "defeated" if c.get("defeated") else "in play"
        return values

    @staticmethod
    def _report_number(value: Any) -> float:
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

    def carry_standing(self, combatant: Mapping[str, Any]) -> contract.Standing | None:
        return contract.FALLEN if combatant.get("defeated") else None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        from rules.carry_over import effects_text

        c = combatant
        entry["wounds"] = c.get("wounds", 0)
        entry["armour_wear"] = c.get("armour_wear", entry.get("armour_wear", 0))
        if isinstance(c.get("ammo"), int):
            entry["ammo"] = c["ammo"]
        entry["effects"] = effects_text(c.get("effects") or {})
        entry["blessings"] = c.get("blessings", 0)
        entry["curses"] = c.get("curses", 0)
        return entry  # action points: the next battle starts them full
    # --- end of traits and table hooks ---

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return data.combatant_fields() + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return data.option_fields()

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
                c["x"], c["y"] = auto_square(entry["side"], self.sides, width, height, taken)
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
            events += advance(state)
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
        # the engine's copy for this command, or a copy of the state handed in (the odds and the
        # tests apply one state again and again): rules.core.own
        new = own(state)
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
        c: dict[str, Any] = state["combatants"][cid]
        if need_ap and c["ap"] < 1:
            raise IllegalDeclaration(f"{c['name']} has no action points left")
        return c

    def _target(self, state: State, declaration: Mapping[str, Any], attacker: Mapping[str, Any]) -> dict[str, Any]:
        tid = read.combatant(declaration, "target", state)
        target: dict[str, Any] = state["combatants"][tid]
        if tid == attacker["id"]:
            raise IllegalDeclaration("a character cannot attack itself")
        if target["defeated"]:
            raise IllegalDeclaration(f"{target['name']} is already out of play")
        return target

    def _finish_action(self, state: State, actor: dict[str, Any], cost: int, what: str) -> list[Event]:
        actor["ap"] -= cost
        events = [event("ap.spent", f"{actor['name']} spends {cost} AP on {what} ({ap_words(actor['ap'])}).",
                        combatant=actor["id"], cost=cost, ap=actor["ap"])]
        events += check_outcome(state)
        if state["status"] == "active":
            events += advance(state)
        return events

    @contract.declaration("attack")
    def _do_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        attacker = self._actor_for(state, d, viewer)
        target = self._target(state, d, attacker)
        if not in_reach(state, attacker, target, melee_reach(attacker)):
            raise IllegalDeclaration(f"{target['name']} is out of {attacker['name']}'s melee reach")
        events = resolve_melee(state, attacker, target, dice)
        return events + self._finish_action(state, attacker, attacker["attack_cost"], "an attack")

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
        return events + self._finish_action(state, attacker, attacker["attack_cost"], "a shot")

    @contract.declaration("move")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        mover = self._actor_for(state, d, viewer)
        x, y = read.square(d, state["options"]["grid_width"], state["options"]["grid_height"])
        if (x, y) == (mover["x"], mover["y"]):
            raise IllegalDeclaration("that is where the character already stands")
        if occupant(state, x, y):
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
        return events + self._finish_action(state, mover, cost, "moving")

    @contract.declaration("draw")
    def _do_draw(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer)
        if not c["weapon"]:
            raise IllegalDeclaration(f"{c['name']} has no weapon to draw")
        if c["weapon_drawn"]:
            raise IllegalDeclaration(f"{c['name']} already holds the {c['weapon']}")
        c["weapon_drawn"] = True
        events = [event("weapon.drawn", f"{c['name']} draws the {c['weapon']}.", combatant=c["id"])]
        return events + self._finish_action(state, c, c["weapon_weight"], "drawing a weapon")

    @contract.declaration("pass")
    def _do_pass(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer, need_ap=False)
        events = [event("turn.passed", f"{c['name']} waits.", combatant=c["id"])]
        events += advance(state)
        return events

    @contract.declaration("custom_action", by="gm")
    def _do_custom_action(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._actor_for(state, d, viewer)
        cost = read.whole(d, "cost", 0, 999)
        label = read.text(d, "label", 80, "a special action")
        events = [event("action.taken", f"{c['name']}: {label}.", combatant=c["id"], label=label)]
        return events + self._finish_action(state, c, cost, label)

    # GM tools ------------------------------------------------------------------------------
    @contract.declaration("check", by="gm", after_end=True)
    def _do_check(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        who = roller(state, d, "")
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
        totals, rolls = three_rolls(dice, who, label)
        spend_pending_luck(state, who)
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
            events += after_gm_change(state)
        return events

    @contract.declaration("contest", by="gm", after_end=True)
    def _do_contest(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        a = roller(state, d, "a_")
        b = roller(state, d, "b_")
        mode = d.get("mode") or state["options"]["contest_mode"]
        if mode not in ("summed", "best_of_three"):
            raise InvalidDeclaration("mode must be summed or best_of_three")
        label = read.text(d, "label", 80, "a contest")
        a_totals, b_totals, rolls = [], [], []
        for i in range(3):
            t, r = pool_roll(rolled_by(dice, a["combatant"] or "gm"), a["dice"], a["size"], f"{a['name']} {label} roll {i + 1}", a["luck"], a["bonus"])
            a_totals.append(t)
            rolls += r
            t, r = pool_roll(rolled_by(dice, b["combatant"] or "gm"), b["dice"], b["size"], f"{b['name']} {label} roll {i + 1}", b["luck"], b["bonus"])
            b_totals.append(t)
            rolls += r
        spend_pending_luck(state, a)
        spend_pending_luck(state, b)
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
        c: dict[str, Any] = state["combatants"][cid]
        return c

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
        return events + after_gm_change(state)

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
            events += advance(state)
        if field == "wounds":
            was = c["defeated"]
            c["defeated"] = value >= c["health"]
            if c["defeated"] and not was:
                events.append(event("combatant.defeated", f"{c['name']} is out of play.", combatant=c["id"]))
            elif was and not c["defeated"]:
                events.append(event("combatant.recovered", f"{c['name']} is back in play.", combatant=c["id"]))
        return events + after_gm_change(state)

    @contract.declaration("place", by="gm", after_end=True)
    def _do_place(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        c = self._gm_target(state, d)
        x, y = read.square(d, state["options"]["grid_width"], state["options"]["grid_height"])
        other = occupant(state, x, y)
        if other and other != c["id"]:
            raise IllegalDeclaration("that square is taken")
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        c["x"], c["y"] = x, y
        return [event("combatant.placed", f"The GM puts {c['name']} at column {x + 1}, row {y + 1}.",
                      combatant=c["id"], x=x, y=y)]

    @contract.declaration(COMPUTER_TURN, by="gm")
    def _do_computer_turn(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        """Let the computer play the current turn (after the GM handed the acting character to it): the
        engine then plays it (:meth:`computer_choice`)."""
        if computer_plays(state) is None:
            raise IllegalDeclaration("the character acting now is not played by the computer")
        return []

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
        return view.view(self.id, state, viewer)

    # the common view shape (rules/contract.py's VIEW_KEYS), read off the projection above
    def view_acting(self, shown: Mapping[str, Any]) -> dict[str, Any]:
        if shown.get("status") != "active":
            return {"combatants": [], "label": "Over"}
        actor = shown.get("actor")
        named = f", {shown.get('actor_name')}'s turn" if actor else ""
        return {"combatants": [actor] if actor else [], "label": f"Turn {shown.get('turn')}{named}"}

    def legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        """Declaration templates this viewer may send now, each with its cost in AP where it has one."""
        return view.legal(state, viewer)

    def is_checkpoint(self, state: State) -> bool:
        return True

    # --- the computer ------------------------------------------------------------------------
    def computer_choice(
        self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
    ) -> dict[str, Any] | None:
        """The computer plays its character when that character's turn has just started, or when the GM
        lets it play the turn under way (computer.py)."""
        return next_choice(state, declaration, events)
