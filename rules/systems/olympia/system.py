"""The Olympia rule system: its forms, its deployment declarations and its steps (see __init__.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rules import contract, read
from rules.carry_over import carry_over_help
from rules.contract import RuleSystem
from rules.core import Event, Field, State, Viewer, clone, event, own, require
from rules.dice import DiceSource
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted

from . import army, phase
from .data import (
    FACES_KEPT_PHASES,
    FIELDS,
    HELP,
    KIND,
    KINDS,
    MAX_MEN_PER_SIDE,
    MAX_SPECIALS,
    OPTION_FIELDS,
    PHASES,
    PRESETS,
    SIDES,
    SPECIAL_LIBRARY,
    STEP_WORK_BUDGET,
    STRUCTURE_CHOICES,
    STRUCTURES,
)
from .view import view


class Olympia(RuleSystem):
    """The Olympia battle procedure for large armies.

    A noble with two knights against a noble with two pikemen, one melee phase with scripted dice:

    >>> from rules.dice import ScriptedDice
    >>> olympia, gm = Olympia(), Viewer.gm()
    >>> lineup = [{"name": "Osswid", "side": "A", "knight": 2}, {"name": "Brennan", "side": "B", "pikeman": 2}]
    >>> state, _ = olympia.setup(lineup, {}, ScriptedDice([]))
    >>> state, _ = olympia.apply(state, {"type": "begin"}, gm, ScriptedDice([]))
    >>> picks_a, rolls_a = [0, 1, 0], [4, 9, 13]   # Osswid hits a pikeman, one knight hits, one misses
    >>> picks_b, rolls_b = [1, 1, 0], [8, 1, 2]    # Brennan and a pikeman both hit knight 1: he dies once
    >>> dice = ScriptedDice(picks_a + rolls_a + picks_b + rolls_b)
    >>> state, events = olympia.apply(state, {"type": "step", "by": "phase"}, gm, dice)
    >>> state["combatants"]["c1"]["troops"], state["combatants"]["c2"]["troops"]
    ({'knight': 1}, {})
    >>> [t["total"] for t in events[0]["data"]["totals"].values()]
    [340, 160]
    """

    id: ClassVar[str] = "olympia"
    name: ClassVar[str] = "Olympia mass battles"
    summary: ClassVar[str] = (
        "Armies of nobles and their men in a front row and back rows, fought phase by phase "
        "(special, missile, melee) until a side falls to its break point."
    )
    max_combatants: ClassVar[int] = 64
    # --- traits and table hooks ---
    traits = contract.Traits(
        round_key="round",
        round_word="Round",
        charts=(
            contract.Chart("value", "Combat value per side, against its break line (dashed)", "combat value"),
            contract.Chart("men", "Men per side", "men"),
        ),
        key_events=frozenset({"round.started"}),
        carries_over=True,
        carry_over_help="When a battle is over, the GM can write the armies back into a saved roster (Battle tab, "
        "\"Survivors carry on\"). Each noble keeps the men he has left of every kind and his health after his "
        "wounds; nobles who were killed or taken prisoner are left out.",
        # the whole battle, simulated: each side's chance
        odds_questions=(contract.OddsQuestion(whole=True, label="Each side's chance"),),
        # the demo's battle starts past the deployment: the presets' rows as they are
        demo=contract.Demo("demo-olympia", "Demo: an Olympia field battle", (
            ("Noble with two knights", "A", "gm"), ("Captain of archers", "A", "gm"),
            ("Pirate captain", "B", "computer"), ("Knight commander", "B", "computer"),
        ), opening=({"type": "begin"},)),
    )

    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        combatants = state.get("combatants", {})
        sides = sorted({c.get("side") for c in combatants.values()})
        return {
            "value": {side: army.total2(state, side) / 2 for side in sides},
            "men": {side: sum(n for c in combatants.values() if c["side"] == side for n in c["troops"].values())
                    for side in sides},
        }

    def report_lines(self, state: Mapping[str, Any]) -> dict[str, dict[str, float]]:
        # each side's break line, once the battle has begun
        lines = {side: info.get("threshold2", 0) / 2 for side, info in state.get("sides", {}).items()}
        return {"value": lines} if any(lines.values()) else {}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        c = combatant
        troops = c.get("troops") or {}
        return {
            "Men": f"{sum(troops.values()):,}",
            "Units": ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in troops.items()) or "—",
            "Noble health": str(c.get("health")),
            "Status": str(c.get("state")),
        }

    def carry_standing(self, combatant: Mapping[str, Any]) -> contract.Standing | None:
        return contract.GONE if combatant.get("state") in ("dead", "prisoner") else None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        c = combatant
        for key in list(entry):
            if key in (c.get("start_troops") or {}) or key in (c.get("troops") or {}):
                entry[key] = 0
        for key, count in (c.get("troops") or {}).items():
            entry[key] = count
        entry["health"] = max(1, c.get("health", entry.get("health", 1)))
        return entry
    # --- end of traits and table hooks ---

    # --- forms ----------------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return list(FIELDS)

    def option_fields(self) -> list[Field]:
        return list(OPTION_FIELDS)

    def presets(self) -> list[dict[str, Any]]:
        presets: list[dict[str, Any]] = clone(PRESETS)
        return presets

    def help(self) -> list[dict[str, str]]:
        return [*clone(HELP), *carry_over_help(self.id)]

    def validate_draft(self, lineup: Any) -> list[dict[str, Any]]:
        """Any lineup, even one still being built: no side brings more than ``MAX_MEN_PER_SIDE`` men."""
        cleaned = super().validate_draft(lineup)
        men: dict[str, int] = {}
        for entry in cleaned:
            men[entry["side"]] = men.get(entry["side"], 0) + sum(entry[k.key] for k in KINDS)
        for side, n in sorted(men.items()):
            if n > MAX_MEN_PER_SIDE:
                raise InvalidDeclaration(
                    f"side {side} has {n:,} men; one side may bring at most {MAX_MEN_PER_SIDE:,} "
                    f"(a bigger battle would hold up the server): {n - MAX_MEN_PER_SIDE:,} too many"
                )
        return cleaned

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        """A lineup ready for battle: every side has a noble and at most one stack leader."""
        cleaned = super().validate_lineup(lineup)
        for side in SIDES:
            members = [e for e in cleaned if e["side"] == side]
            if not members:
                raise InvalidDeclaration(f"side {side} needs at least one noble")
            if sum(1 for e in members if e["leader"]) > 1:
                raise InvalidDeclaration(f"side {side} has more than one stack leader")
        return cleaned

    # --- ratings --------------------------------------------------------------------------------
    def troop_value(self, kind: str, options: Mapping[str, Any] | None = None, aboard: bool = False) -> int:
        """Combat value of one man of ``kind`` (the troop table with the battle's modifiers)."""
        return army.value2(KIND[kind], options or {}, aboard) // 2

    # --- the game ---------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        opts = self.validate_options(options)
        combatants: dict[str, Any] = {}
        for order, entry in enumerate(entries):
            troops = {k.key: entry[k.key] for k in KINDS if entry[k.key] > 0}
            combatants[entry["id"]] = {
                "name": entry["name"],
                "side": entry["side"],
                "seat": entry["seat"],
                "controller": entry["controller"],
                "health": entry["health"],
                "behind": entry["behind"],
                "leader": False,
                "noble_attack": entry["noble_attack"],
                "noble_defence": entry["noble_defence"],
                "troops": troops,
                "start_troops": dict(troops),
                "state": "fighting",
                "wound": None,
                "order": order,
            }
        sides: dict[str, Any] = {}
        for side in SIDES:
            members = [e for e in entries if e["side"] == side]
            leaders = [e for e in members if e["leader"]]
            leader = (leaders or members)[0]["id"]
            combatants[leader]["leader"] = True
            key = side.lower()
            kind = opts[f"structure_{key}"]
            structure = None
            if kind != "none":
                structure = {"kind": kind, "damage": opts[f"structure_{key}_damage"], "destroyed": False}
            sides[side] = {
                "leader": leader,
                "break_point": opts[f"break_point_{key}"],
                "structure": structure,
                "start_total2": 0,
                "threshold2": 0,
                "broken": False,
            }
        state: State = {
            "system": self.id,
            "status": "setup",
            "options": opts,
            "combatants": combatants,
            "sides": sides,
            "specials": [],
            "special_serial": 0,
            "round": 0,
            "next_phase": "special",
            "report": [],
            "outcome": None,
        }
        names = " and ".join(f"{army.side_name(state, s)}" for s in SIDES)
        return state, [event("battle.prepared", f"The armies of {names} take the field. Arrange the rows, then begin.")]

    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        super().authorize(state, declaration, viewer)
        if viewer.role == "player" and declaration.get("type") == "set_break_point":
            cid = declaration.get("combatant")
            if not state["combatants"].get(cid, {}).get("leader"):
                raise NotPermitted("only the stack leader's player may set the break point")

    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = require(declaration, "type", str, "a type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if state.get("status") == "ended":
            raise IllegalDeclaration("the battle is over")
        # the engine's copy for this command, or a copy of the state handed in (the odds and the
        # tests apply one state again and again): rules.core.own
        new = own(state)
        events = handler(new, declaration, viewer, dice)
        return new, events

    def is_checkpoint(self, state: State) -> bool:
        return state.get("status") != "active" or state.get("next_phase") == PHASES[0]

    # --- deployment declarations ------------------------------------------------------------------
    def _deployment_only(self, state: State, what: str) -> None:
        if state["status"] != "setup":
            raise IllegalDeclaration(f"{what} only before the battle begins")

    @contract.declaration("set_behind")
    def _set_behind(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        cid = read.combatant(d, "combatant", state)
        behind = Field("behind", "behind", "int", None, 0, 9).clean(read.whole(d, "behind"))
        self._deployment_only(state, "units move between rows")
        noble = state["combatants"][cid]
        noble["behind"] = behind
        return [event("unit.moved", f"{noble['name']} and his men move to the {army.row_name(behind)}.", combatant=cid, behind=behind)]

    @contract.declaration("set_break_point")
    def _set_break_point(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        value = Field("break_point", "break point", "int", None, 0, 100).clean(
            read.whole(d, "break_point")
        )
        cid = d.get("combatant")
        if cid is not None:
            cid = read.combatant(d, "combatant", state)
            side = state["combatants"][cid]["side"]
            if not state["combatants"][cid]["leader"]:
                raise IllegalDeclaration("only the stack leader sets the break point")
        else:
            side = d.get("side")
            if not isinstance(side, str) or side not in state["sides"]:
                raise InvalidDeclaration("the declaration needs a side (A or B) or the leader as combatant")
        self._deployment_only(state, "the break point is set")
        state["sides"][side]["break_point"] = value
        return [event("break_point.set", f"{army.Side_name(state, side)} will break at {value}% of its strength.", side=side, break_point=value)]

    @contract.declaration("set_structure", by="gm")
    def _set_structure(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        side = d.get("side")
        if not isinstance(side, str) or side not in state["sides"]:
            raise InvalidDeclaration("the declaration needs a side (A or B)")
        kind = Field("structure", "structure", "choice", None, choices=STRUCTURE_CHOICES).clean(d.get("structure"))
        damage = Field("damage", "damage", "int", 0, 0, 99).clean(read.whole(d, "damage", default=0))
        self._deployment_only(state, "structures are placed")
        state["sides"][side]["structure"] = None if kind == "none" else {"kind": kind, "damage": damage, "destroyed": False}
        what = "no structure" if kind == "none" else f"a {STRUCTURES[kind].label} ({damage} damage)"
        return [event("structure.placed", f"{army.Side_name(state, side)} fights from {what}.", side=side, structure=kind, damage=damage)]

    @contract.declaration("add_special", by="gm")
    def _add_special(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        base: dict[str, Any] = {}
        preset = d.get("preset")
        if preset not in (None, ""):
            if not isinstance(preset, str) or preset not in SPECIAL_LIBRARY:
                raise InvalidDeclaration(f"unknown special attack {preset!r} (known: {', '.join(SPECIAL_LIBRARY)})")
            base = dict(SPECIAL_LIBRARY[preset])
        side = d.get("side")
        if not isinstance(side, str) or side not in state["sides"]:
            raise InvalidDeclaration("the special attack needs the side (A or B) it fights for")
        if len(state["specials"]) >= MAX_SPECIALS:
            raise IllegalDeclaration(f"at most {MAX_SPECIALS} special attacks in one battle: remove one first")
        values = {k: d.get(k, base.get(k)) for k in ("name", "attacks", "rating", "reach", "rounds")}
        for k in ("attacks", "rating", "rounds"):
            if values[k] is not None:
                values[k] = read.as_whole(values[k], k)
        name = Field("name", "special attack name", "text", None, 1, 40).clean(values["name"])
        attacks = Field("attacks", "attacks", "int", None, 1, 100_000).clean(values["attacks"])
        rating = Field("rating", "rating", "int", None, 1, 10_000).clean(values["rating"])
        reach = Field("reach", "reach", "choice", None, choices=(("any", "any"), ("front", "front"))).clean(values["reach"])
        rounds = Field("rounds", "rounds", "int", 0, 0, 1000).clean(values["rounds"])
        state["special_serial"] += 1
        sid = f"s{state['special_serial']}"
        state["specials"].append({
            "id": sid, "name": name, "side": side, "attacks": attacks, "rating": rating,
            "reach": reach, "rounds": rounds, "used": 0,
        })
        where = "any man" if reach == "any" else "the front row"
        often = "every round" if rounds == 0 else f"for {rounds} round{'s' if rounds != 1 else ''}"
        return [event("special.added", f"{name} joins {army.side_name(state, side)}: {attacks} attacks at {rating} against {where}, {often}.", special=sid)]

    @contract.declaration("remove_special", by="gm")
    def _remove_special(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        sid = require(d, "special", str, "the special attack's id")
        found = [s for s in state["specials"] if s["id"] == sid]
        if not found:
            raise InvalidDeclaration(f"no special attack {sid!r}")
        state["specials"].remove(found[0])
        return [event("special.removed", f"{found[0]['name']} leaves the battle.", special=sid)]

    @contract.declaration("begin", by="gm")
    def _begin(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        self._deployment_only(state, "the battle begins")
        state["status"] = "active"
        events = []
        for side in SIDES:
            events += phase.advance_rows(state, side)
        for side, info in state["sides"].items():
            start2 = army.total2(state, side)
            info["start_total2"] = start2
            info["threshold2"] = 2 * (start2 * info["break_point"] // 200)
        texts = [
            f"{army.side_name(state, s)} {army.num(i['start_total2']):,} strong, breaks at {army.num(i['threshold2']):,}"
            for s, i in state["sides"].items()
        ]
        opening = state["options"]["opening_volley"] and army.has_missile(state, state["options"]["defender"])
        state["next_phase"] = "volley" if opening else "special"
        if not opening:
            state["round"] = 1
        events.append(event("battle.started", "The battle begins: " + "; ".join(texts) + ".", totals=army.totals(state)))
        if not opening:
            events.append(event("round.started", "Round 1 begins.", round=1))
        return events

    # --- stepping ------------------------------------------------------------------------------------
    @contract.declaration("step", by="gm")
    def step_battle(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        """The GM's step (``by``: phase, round or battle), made on ``state`` itself: ``apply`` hands
        it its copy; the odds' simulation hands it one copy per simulated battle."""
        by = d.get("by")
        if not isinstance(by, str) or by not in ("phase", "round", "battle"):
            raise InvalidDeclaration("step needs by: phase, round or battle")
        if state["status"] != "active":
            raise IllegalDeclaration("the battle has not begun: the GM declares begin first")
        events: list[Event] = []
        if by == "phase":
            return phase.next_phase(state, dice)
        # A round or the rest of the battle, within the step's work budget: the next phase is fought
        # only while the work so far plus its own stays within it (the first phase always is).
        start, done, phases = state["round"], 0, 0
        while state["status"] == "active":
            if by == "round" and state["round"] != start and state["next_phase"] == PHASES[0]:
                break
            work = army.phase_work(state)
            if phases and done + work > STEP_WORK_BUDGET:
                goal = "the round" if by == "round" else "the battle"
                events.append(event(
                    "battle.paused",
                    f"The battle goes on: this step fought {phases:,} phase{'s' if phases != 1 else ''} "
                    f"(as much as one step may), and {goal} is not over yet. Step again to fight on.",
                    round=state["round"], next_phase=army.upcoming_phase(state), phases=phases, work=done,
                ))
                break
            events += phase.next_phase(state, dice)
            done += work
            phases += 1
        if by == "battle":
            # a long fight keeps every roll summary, but the single faces only of its last phases
            resolved = [e for e in events if e["type"] == "phase.resolved"]
            for e in resolved[:-FACES_KEPT_PHASES]:
                for roll in e["rolls"]:
                    roll["faces"] = []
        return events

    # --- views ---------------------------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return view(state, viewer)

    # the common view shape (rules/contract.py's VIEW_KEYS), read off the projection above: the
    # phases run by themselves when the GM steps them, so nobody is named
    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        status, phase = view.get("status"), view.get("next_phase")
        if status == "setup":
            return {"combatants": [], "label": "Deployment"}
        if status != "active":
            return {"combatants": [], "label": "Over"}
        return {"combatants": [], "label": f"Round {view.get('round')}" + (f", {phase} phase" if phase else "")}

    def view_fighter_out(self, combatant: Mapping[str, Any]) -> bool:
        return combatant.get("state") != "fighting"
