"""AD&D 1e combat run by the Demon Idol round procedure: the rule system, its declarations and
how each is resolved.

The DM steps through a fixed procedure: reaction, surprise, distance and opening morale
checks, the surprise segments, then rounds of declarations (the DM's private notes first, then
each player in a rolled order against a real-time clock), side initiative, resolution in action
letter order with the out-of-sequence cases, bleeding, a recap and the next round or recovery.

The package's other modules hold the rest: data.py the tables, presets and help, combatants.py who
each combatant is, declarations.py phase 6, segments.py the order of resolution, charges.py charges on
the grid, resolution.py phases 8 to 11, morale.py failed morale, computer.py the computer player,
view.py what each viewer sees, odds.py the odds.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ... import contract, read, terrain
from ...carry_over import carried_fields, carry_over_help
from ...contract import RuleSystem
from ...core import GM_ONLY, PUBLIC, Event, Field, State, Viewer, event, own, require, told
from ...dice import DiceSource, Roll
from ...errors import IllegalDeclaration, InvalidDeclaration
from ...physical import rolled_by
from .charges import charge_view
from .combatants import (
    able,
    actors,
    condition_after,
    condition_word,
    describe,
    name_of,
    standing_by_side,
    stats_visibility,
    surprising_side,
)
from .computer import ASSIGNED, BY_COMPUTER, OPENING, next_choice
from .data import (
    COMBATANT_FIELDS,
    FEET_PER_INCH,
    HELP,
    OPTION_FIELDS,
    PHASE_LABELS,
    PRESETS,
    SIDES,
    delay_segments,
    morale_failure,
    morale_score,
    parse_dice,
    reaction_band,
    surprise_result,
)
from .declarations import (
    after_opening,
    awaited_player,
    clean_action,
    computer_declares,
    declared_at,
    elapsed,
    maybe_finish_declarations,
    npcs_to_declare,
    open_declarations,
)
from .morale import morale_fails
from .resolution import end_resolution, find_act, make_recap, resolve_group, who_bleeds
from .segments import build_queue, next_group
from .view import board_view


class AdndDemonIdol(RuleSystem):
    """AD&D 1e combat, stepped through the Demon Idol procedure by the DM.

    >>> from rules.dice import ScriptedDice
    >>> system = AdndDemonIdol()
    >>> lineup = [{"id": "hero", "name": "Hero", "side": "A", "controller": "seat", "seat": "s1"},
    ...           {"id": "orc", "name": "Orc", "side": "B", "hp": 5, "dies_at_zero": True}]
    >>> state, _ = system.setup(system.validate_lineup(lineup), system.validate_options({}), ScriptedDice([]))
    >>> state["phase"]
    'reaction'
    >>> state, events = system.apply(state, {"type": "check_reaction"}, Viewer.gm(), ScriptedDice([30]))
    >>> events[0]["text"]
    'Reaction roll 30: unsure, but leaning towards hostility.'
    """

    id = "adnd"
    name = "AD&D 1e (Demon Idol procedure)"
    summary = ("Declarations from phones against a real-time clock, side initiative, action letters, "
               "segments and charges, with the DM stepping through a checklist.")
    #: the declaration clock reads when each declaration arrived (its ``at``)
    needs_now = True
    min_combatants = 2
    max_combatants = 40
    sides = SIDES

    # --- traits and table hooks ---
    traits = contract.Traits(
        grid=True,
        round_key="round",
        round_word="Round",
        charts=(contract.Chart("hp", "Hit points left per side", "hit points"),),
        # the spectators do not see hit points: a public report counts who still fights
        public_charts=(contract.Chart("standing", "Combatants still fighting per side", "combatants"),),
        carries_over=True,
        carried_fields=(
            Field("hp_max", "Full hit points", "int", 0, 0, 300, group=contract.CARRIED_GROUP,
                  help="0: the same as Hit points. Higher: the character starts wounded."),
        ),
        carry_over_help="When the encounter is over, the DM can write the survivors back into a saved roster (Battle tab, "
        "\"Survivors carry on\"). Each survivor keeps its current hit points (its full ones under \"Carried over\"). "
        "Only those still standing carry on (the fled and the surrendered too): the dead are left out, and so are "
        "those down at 0 or below unless the DM ticks \"Also carry on those who fell but live\"; they then start the next "
        "fight down, their bleeding stopped in the recovery turn.",
        # a melee attack of the first combatants still fighting on their first foe
        odds_questions=(contract.OddsQuestion(
            acting=("*standing",), against="first_foe", limit=4,
            declaration={"combatant": "$acting", "kind": "melee", "target": "$foe"},
            parts=(contract.OddsPart("hit", "hit", always=True), contract.OddsPart("damage_this_round", "dmg"),
                   contract.OddsPart("slay", "slay")),
        ),),
        demo=contract.Demo("demo-adnd", "Demo: AD&D in the orc caves", (
            ("Fighter (5th level)", "A", "gm"), ("Cleric (2nd level)", "A", "gm"), ("Thief (2nd level)", "A", "gm"),
            ("Orc", "B", "computer"), ("Gnoll", "B", "computer"), ("Bugbear", "B", "computer"),
        )),
    )

    def report_strength(self, state: Mapping[str, Any], shown: Mapping[str, Mapping[str, Any]] | None
                        ) -> dict[str, dict[str, float]]:
        per_side: dict[str, float] = {}
        for cid, c in state.get("combatants", {}).items():
            if shown is None:
                hp = c.get("hp")
                value = max(0.0, float(hp) if isinstance(hp, int | float) and not isinstance(hp, bool) else 0.0)
            else:
                value = 1 if shown.get(cid, {}).get("condition", c.get("condition")) == "ok" else 0
            per_side[c.get("side")] = per_side.get(c.get("side"), 0) + value
        return {"hp" if shown is None else "standing": per_side}

    def report_values(self, combatant: Mapping[str, Any], seen: Mapping[str, Any] | None) -> dict[str, str]:
        c = combatant
        if seen is None:
            return {"Hit points": f"{c.get('hp')}/{c.get('hp_max')}", "Status": str(c.get("condition"))}
        return {"Status": str(seen.get("status") or seen.get("condition") or c.get("condition"))}

    def carry_standing(self, combatant: Mapping[str, Any]) -> contract.Standing | None:
        c = combatant
        if c.get("condition") == "dead" or c.get("hp", 0) <= -10 or (c.get("dies_at_zero") and c.get("hp", 0) <= 0):
            return contract.GONE
        return contract.FALLEN if c.get("condition") == "down" or c.get("hp", 0) <= 0 else None

    def carry_entry(self, combatant: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
        entry["hp"] = combatant["hp"]
        entry["hp_max"] = combatant["hp_max"] if combatant["hp_max"] > combatant["hp"] else 0
        return entry
    # --- end of traits and table hooks ---

    # --- forms ---------------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return list(COMBATANT_FIELDS) + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return list(OPTION_FIELDS)

    def presets(self) -> list[dict[str, Any]]:
        return copy.deepcopy(PRESETS)

    def help(self) -> list[dict[str, str]]:
        return [dict(h) for h in HELP] + carry_over_help(self.id)

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        entry = super().validate_combatant(data, index)
        if entry["weapon"] == "natural":
            parse_dice(entry["damage"])
        return entry

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        cleaned = super().validate_lineup(lineup)
        if len({c["side"] for c in cleaned}) < 2:
            raise InvalidDeclaration("a battle needs combatants on both sides A and B")
        return cleaned

    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        """The generic checks; and the computer's own declaration comes from the engine's loop alone."""
        if isinstance(declaration, Mapping) and declaration.get(BY_COMPUTER) is not None:
            raise InvalidDeclaration("only the computer declares as the computer")
        super().authorize(state, declaration, viewer)

    def computer_choice(
        self, state: State, declaration: Mapping[str, Any] | None, events: Sequence[Event]
    ) -> dict[str, Any] | None:
        """The computer declares for the combatants it plays (computer.py)."""
        return next_choice(state, declaration, events)

    # --- setup ---------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        lineup = self.validate_lineup(lineup)
        raw_blocked = options.get("blocked") if isinstance(options, Mapping) else None
        options = self.validate_options(options)
        if len(lineup) < self.min_combatants:
            raise InvalidDeclaration(f"a battle needs at least {self.min_combatants} combatants")
        sides = {c["side"] for c in lineup}
        if len(sides) < 2:
            raise InvalidDeclaration("a battle needs combatants on both sides A and B")
        combatants: dict[str, Any] = {}
        for c in lineup:
            # hit points carried from an earlier fight may sit below the full ones, or at 0 or
            # less: down, and bound after that fight (rules/carry_over.py)
            combatants[c["id"]] = {**c, "hp_max": max(c["hp"], c.get("hp_max") or 0), "x": 0, "y": 0,
                                   "condition": "ok" if c["hp"] > 0 else "down", "stable": c["hp"] <= 0,
                                   "morale": None, "morale_margin": 0}
        state: State = {
            "system": self.id,
            "status": "active",
            "phase": "reaction",
            "options": options,
            "scale": options["scale"],
            "grid": {"width": options["width"], "height": options["height"]},
            # blocked squares come from the table's board (not an option of the form)
            "blocked": terrain.clean_blocked(raw_blocked, options["width"], options["height"]),
            "combatants": combatants,
            "order": [c["id"] for c in lineup],
            "encounter": {},
            "steps": {},
            "round": 0,
            "surprise": {"side": None, "segments": 0, "segment": 0},
            "decl": None,
            "declarations": {},
            "initiative": None,
            "queue": [],
            "casting": {},
            "round_log": [],
            "recap": None,
            "round_start_hp": {},
            "last_key": None,
            "last_at": None,
            "outcome": None,
        }
        self._place(state, 0)
        names = ", ".join(c["name"] for c in lineup)
        return state, [event("battle.started", f"The encounter begins: {names}. Next: the reaction check.")]

    def _place(self, state: State, distance: int) -> None:
        """Set the two parties ``distance`` inches apart (side A above, side B below)."""
        by_side: dict[str, list[str]] = {"A": [], "B": []}
        for cid in state["order"]:
            by_side[state["combatants"][cid]["side"]].append(cid)
        grid = state["grid"]
        grid["width"] = max(grid["width"], max(len(v) for v in by_side.values()) + 2)
        grid["height"] = max(grid["height"], distance + 4)
        rows = {"A": 1, "B": 1 + distance + 1 if distance else 3}
        blocked = terrain.blocked_of(state)
        taken: set[tuple[int, int]] = set()
        for side, members in by_side.items():
            start = max(0, (grid["width"] - len(members)) // 2)
            for i, cid in enumerate(members):
                x, y = start + i, rows[side]
                if (x, y) in blocked or (x, y) in taken:  # the nearest free square instead
                    free = [sq for sq in terrain.free_squares(grid["width"], grid["height"], blocked) if sq not in taken]
                    if free:
                        def nearness(sq: tuple[int, int], x: int = x, y: int = y) -> tuple[int, int, int]:
                            return (sq[0] - x) ** 2 + (sq[1] - y) ** 2, sq[1], sq[0]

                        x, y = min(free, key=nearness)
                taken.add((x, y))
                state["combatants"][cid]["x"] = x
                state["combatants"][cid]["y"] = y

    # --- authorisation and dispatch ------------------------------------------------------------
    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = require(declaration, "type", str, "a type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if kind in self.gm_declarations and not viewer.is_gm:
            raise IllegalDeclaration(f"only the DM may {kind.replace('_', ' ')}")
        by_computer = declaration.get(BY_COMPUTER)
        if state.get("status") != "active" and by_computer != ASSIGNED:  # (computer.py: as the assignment)
            raise IllegalDeclaration("the battle is not running")
        at = declaration.get("at")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int | float)):
            raise InvalidDeclaration("the time stamp 'at' must be a number of seconds")
        # the engine's copy for this command, or a copy of the state handed in (the odds and the
        # tests apply one state again and again): rules.core.own
        new = own(state)
        events: list[Event] = []
        handler(new, declaration, viewer, dice, events)
        if at is not None:
            new["last_at"] = float(at)
        for e in events if by_computer != ASSIGNED else ():  # (computer.py: as the assignment)
            if e["type"] not in ("declaration.made",):
                line = {"type": e["type"], "text": e["text"], "visibility": e["visibility"]}
                if e.get("others"):
                    line["others"] = e["others"]["text"]
                new["round_log"].append(line)
        return new, events

    def _expect(self, state: State, *phases: str) -> None:
        if state["phase"] not in phases:
            wanted = " or ".join(PHASE_LABELS.get(p, p) for p in phases)
            raise IllegalDeclaration(
                f"that belongs to the {wanted} step; we are at the {PHASE_LABELS.get(state['phase'], state['phase'])}"
            )

    def _skip(self, state: State, key: str, declaration: Mapping[str, Any], events: list[Event]) -> bool:
        if not declaration.get("skip"):
            return False
        note = read.text(declaration, "note", 200)
        state["steps"][key] = {"skipped": True, "note": note}
        words = f" ({note})" if note else ""
        events.append(event("check.skipped", f"The DM skips the {PHASE_LABELS[key].lower()}{words}.", step=key))
        return True

    # --- phase 1 to 4: encounter checks --------------------------------------------------------
    @contract.declaration("check_reaction", by="gm")
    def _do_check_reaction(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "reaction")
        if not self._skip(state, "reaction", d, events):
            adj = read.whole(d, "adjustment", -50, 50, default=0)
            roll = rolled_by(dice, "gm").randint(1, 100, "reaction (d100)")
            total = roll.total + adj
            key, words = reaction_band(total)
            private = bool(d.get("private"))
            state["encounter"]["reaction"] = {"roll": roll.total, "adjustment": adj, "total": total,
                                              "band": key, "words": words, "private": private}
            state["steps"]["reaction"] = {"skipped": False, "note": f"{total}: {words}", "private": private}
            shown = f"{roll.total}{adj:+d} = {total}" if adj else f"{total}"
            vis = GM_ONLY if d.get("private") else PUBLIC
            events.append(event("reaction.checked", f"Reaction roll {shown}: {words}.", visibility=vis,
                                rolls=[roll], total=total, band=key))
        state["phase"] = "surprise"

    @contract.declaration("check_surprise", by="gm")
    def _do_check_surprise(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "surprise")
        if not self._skip(state, "surprise", d, events):
            sides = d.get("sides", list(self.sides))
            if not isinstance(sides, list) or any(s not in self.sides for s in sides):
                raise InvalidDeclaration("sides must list the sides that could be surprised (A, B)")
            faces: dict[str, int] = {}
            rolls: list[Roll] = []
            side: str | None
            for side in self.sides:
                if side in sides:
                    r = rolled_by(dice, f"side:{side}").roll(1, 6, f"surprise, side {side}")
                    rolls.append(r)
                    faces[side] = r.total
            side, segments = surprise_result(faces)
            state["surprise"] = {"side": side, "segments": segments, "segment": 0, "faces": faces}
            state["encounter"]["surprise"] = {"faces": faces, "side": side, "segments": segments}
            dice_words = ", ".join(f"side {s} rolled {f}" for s, f in faces.items()) or "nobody rolled"
            if side is None:
                text = f"Surprise: {dice_words}; nobody is surprised."
            else:
                other = "B" if side == "A" else "A"
                text = (f"Surprise: {dice_words}; side {side} is surprised for {segments} segment"
                        f"{'s' if segments > 1 else ''}, so side {other} acts alone first.")
            state["steps"]["surprise"] = {"skipped": False, "note": text}
            events.append(event("surprise.checked", text, rolls=rolls, side=side, segments=segments))
        state["phase"] = "distance"

    @contract.declaration("check_distance", by="gm")
    def _do_check_distance(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                           events: list[Event]) -> None:
        self._expect(state, "distance")
        if d.get("skip"):
            distance = read.whole(d, "distance", 0, 60)
            self._skip(state, "distance", d, events)
        else:
            surprised = state["surprise"].get("side")
            rolls: list[Roll] = []
            if state["scale"] == "indoors":
                if surprised:
                    r = rolled_by(dice, "gm").randint(1, 3, "distance indoors with surprise (1-3)")
                    distance = r.total
                else:
                    r = rolled_by(dice, "gm").roll(1, 6, "distance indoors (d6+4)", 4)
                    distance = r.total
                rolls.append(r)
            else:
                r = rolled_by(dice, "gm").roll(6, 4, "distance outdoors (6d4)")
                rolls.append(r)
                distance = r.total
                if surprised:
                    distance = max(1, distance - state["surprise"]["faces"][surprised])
            unit = "ft" if state["scale"] == "indoors" else "yd"
            text = f"The parties are {_inches(distance)} apart ({distance * 10} {unit})."
            state["steps"]["distance"] = {"skipped": False, "note": text}
            events.append(event("distance.checked", text, rolls=rolls, distance=distance))
        state["encounter"]["distance"] = distance
        self._place(state, distance)
        events.append(event("parties.placed", f"The DM sets the parties {_inches(distance)} apart on the grid.",
                            distance=distance))
        state["phase"] = "morale"

    @contract.declaration("check_morale", by="gm")
    def _do_check_morale(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "morale", "declarations", "resolution", "recap")
        opening = state["phase"] == "morale"
        if opening and self._skip(state, "morale", d, events):
            after_opening(state, dice, events)
            return
        group = d.get("combatants")
        if group is None:
            side = d.get("side", "B")
            if side not in self.sides:
                raise InvalidDeclaration("side must be A or B")
            group = [cid for cid in state["order"] if state["combatants"][cid]["side"] == side]
        if (not isinstance(group, list) or not group
                or any(not isinstance(c, str) or c not in state["combatants"] for c in group)):
            raise InvalidDeclaration("combatants must list the ids of the group that checks morale")
        modifier = read.whole(d, "modifier", -100, 100, default=0)
        roll = rolled_by(dice, "gm").randint(1, 100, "morale (d100)")
        total = roll.total + modifier
        # the score is the monster type's (ruling AD&D-4): hit dice and the +M, never current hit points
        parts: list[str] = []
        told_parts: list[str] = []  # an NPC's score (its hit dice) stays the DM's: the others hear the outcome
        margins: dict[str, int] = {}
        results: dict[str, str] = {}
        for cid in dict.fromkeys(group):
            c = state["combatants"][cid]
            if not able(c):
                continue
            score = morale_score(c["hit_dice"], c.get("hit_dice_plus", 0), c["morale_mod"])
            shown = c["controller"] == "seat"
            if total <= score:
                parts.append(f"{name_of(cid, state)} holds ({score}%)")
                told_parts.append(parts[-1] if shown else f"{name_of(cid, state)} holds")
                if c.get("morale") == "fall_back":
                    c["morale"] = None  # it stands its ground again
                continue
            margins[cid] = total - score
            results[cid], words = morale_failure(total - score)
            parts.append(f"{name_of(cid, state)} fails by {total - score} ({score}%) and {words}")
            told_parts.append(parts[-1] if shown else f"{name_of(cid, state)} fails and {words}")
        text = f"Morale check, d100 {roll.total}{modifier:+d} = {total}: " + ("; ".join(parts) or "nobody able")
        public = f"Morale check, d100 {roll.total}{modifier:+d} = {total}: " + ("; ".join(told_parts) or "nobody able")
        events.append(event("morale.checked", text + ".", rolls=[roll], visibility=PUBLIC if public == text else GM_ONLY,
                            others=told(public + ".", rolls=[roll], total=total, failed=list(results), results=results),
                            total=total, failed=list(results), results=results))
        for cid, band in results.items():
            morale_fails(state, cid, band, margins[cid], events)
        if state["phase"] == "declarations" and results:
            maybe_finish_declarations(state, dice, events)
        if opening:
            state["steps"]["morale"] = {"skipped": False, "note": text, "told": public}
            after_opening(state, dice, events)

    @contract.declaration("roll_order", by="gm")
    def _do_roll_order(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                       events: list[Event]) -> None:
        self._expect(state, "declarations")
        if state["decl"]["order"] is not None:
            raise IllegalDeclaration("the order of declaring is already rolled")
        npcs = npcs_to_declare(state)
        if npcs:
            names = ", ".join(name_of(c, state) for c in npcs)
            raise IllegalDeclaration(f"first note the declarations of the DM's combatants: {names}")
        roster = [cid for cid in actors(state) if state["combatants"][cid]["controller"] == "seat"]
        pending = [cid for cid in roster if cid not in state["declarations"]]
        if not pending:
            state["decl"]["order"] = []
            maybe_finish_declarations(state, dice, events)
            return
        rolls: list[Roll] = []
        first = 0
        if len(roster) > 1:
            roll = dice.randint(1, len(roster), f"first to declare (1-{len(roster)})")
            rolls.append(roll)
            first = roll.total - 1
        order = roster[first:] + roster[:first]
        state["decl"].update({"order": order, "index": 0, "open_at": d.get("at"), "paused_total": 0.0,
                              "paused_since": None, "roll": first + 1})
        names = ", then ".join(name_of(c, state) for c in order if c in pending)
        lead = f"Roll {first + 1} on the roster: " if rolls else ""
        events.append(event("order.rolled", f"{lead}{names} declare{'s' if len(order) == 1 else ''} "
                                            f"{'in that order' if len(order) > 1 else 'now'}.",
                            rolls=rolls, order=order))

    @contract.declaration("pause_clock", by="gm")
    def _do_pause_clock(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        self._expect(state, "declarations")
        awaited = awaited_player(state)
        if awaited is None:
            raise IllegalDeclaration("no player's clock is running")
        if state["decl"]["paused_since"] is not None:
            raise IllegalDeclaration("the clock is already paused")
        at = declared_at(d)
        state["decl"]["paused_since"] = at
        events.append(event("clock.paused", f"The DM pauses {name_of(awaited, state)}'s clock for a question.",
                            combatant=awaited, at=at))

    @contract.declaration("resume_clock", by="gm")
    def _do_resume_clock(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "declarations")
        decl = state["decl"]
        if decl["paused_since"] is None:
            raise IllegalDeclaration("the clock is not paused")
        at = declared_at(d)
        decl["paused_total"] = float(decl["paused_total"]) + max(0.0, at - float(decl["paused_since"]))
        decl["paused_since"] = None
        awaited = awaited_player(state)
        events.append(event("clock.resumed", f"{name_of(awaited or '', state)}'s clock runs again.", at=at))

    @contract.declaration("declare")
    def _do_declare(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        self._expect(state, "declarations")
        cid = read.combatant(d, "combatant", state)
        if d.get(BY_COMPUTER):  # the computer's own (computer.py), sent by the engine's loop
            if (cid in state["declarations"] or cid not in actors(state)
                    or state["combatants"][cid]["controller"] != "computer"):
                raise IllegalDeclaration(f"the computer has nothing to declare for {name_of(cid, state)}")
            computer_declares(state, cid, dice, events, opening=d[BY_COMPUTER] == OPENING)
            return
        if not viewer.controls(state, cid):
            raise IllegalDeclaration("you can declare only for your own combatants")
        c = state["combatants"][cid]
        if cid in state["declarations"]:
            raise IllegalDeclaration(f"{c['name']} has already declared; a declaration cannot be changed")
        if cid not in actors(state):
            raise IllegalDeclaration(f"{c['name']} cannot act now")
        action = clean_action(state, cid, d)
        delay, seconds = 0, 0.0
        if c["controller"] == "seat":
            if state["decl"]["order"] is None:
                raise IllegalDeclaration("the players declare after the DM has rolled who goes first")
            awaited = awaited_player(state)
            if awaited != cid:
                raise IllegalDeclaration(f"it is {name_of(awaited or '', state)}'s turn to declare")
            seconds = elapsed(state, d.get("at"))
            delay = delay_segments(seconds)
            state["decl"]["open_at"] = d.get("at")
            state["decl"]["paused_total"] = 0.0
            state["decl"]["paused_since"] = None
        action.update({"delay": delay, "seconds": round(seconds, 1), "by": "dm" if viewer.is_gm else "player"})
        state["declarations"][cid] = action
        what = describe(state, action)
        if c["controller"] == "seat":
            late = f" after {seconds:.0f} s, so {delay} segment{'s' if delay != 1 else ''} late" if delay else ""
            events.append(event("declaration.made", f"{c['name']} declares: {what}{late}.", combatant=cid,
                                letter=action["letter"], delay=delay, seconds=round(seconds, 1)))
        else:
            events.append(event("declaration.made", f"The DM notes {c['name']}'s action: {what}.",
                                visibility=GM_ONLY, combatant=cid, letter=action["letter"]))
            events.append(event("declaration.noted", f"The DM has noted a secret action for {c['name']}.",
                                combatant=cid))
        maybe_finish_declarations(state, dice, events)

    # --- phase 7: initiative, and the order of resolution --------------------------------------
    @contract.declaration("roll_initiative", by="gm")
    def _do_roll_initiative(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        self._expect(state, "initiative")
        ra = rolled_by(dice, "side:A").roll(1, 6, "initiative, side A")
        rb = rolled_by(dice, "side:B").roll(1, 6, "initiative, side B")
        faces = {"A": ra.total, "B": rb.total}
        winner = None if ra.total == rb.total else ("A" if ra.total > rb.total else "B")
        state["initiative"] = {"dice": faces, "winner": winner}
        if winner:
            text = f"Initiative: side A {ra.total}, side B {rb.total}. Side {winner} wins and acts first."
        else:
            text = f"Initiative: both sides rolled {ra.total}. A tie: both sides go letter by letter together."
        events.append(event("initiative.rolled", text, rolls=[ra, rb], dice=faces, winner=winner))
        build_queue(state, events)
        state["phase"] = "resolution"

    @contract.declaration("resolve_next", by="gm")
    def _do_resolve_next(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        self._expect(state, "resolution")
        group = next_group(state)
        if group:
            resolve_group(state, group, dice, events)
        if not next_group(state):
            end_resolution(state, dice, events)

    @contract.declaration("resolve_all", by="gm")
    def _do_resolve_all(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        self._expect(state, "resolution")
        for _ in range(500):
            if state["phase"] != "resolution":
                break
            self._do_resolve_next(state, d, viewer, dice, events)

    @contract.declaration("cancel")
    def _do_cancel(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        self._expect(state, "resolution")
        cid = self._own(state, d, viewer)
        acts = [a for a in state["queue"] if a["combatant"] == cid and a["status"] in ("pending", "readied")
                and a["kind"] != "flee"]
        if not acts:
            raise IllegalDeclaration(f"{name_of(cid, state)} has no action left to call off")
        for a in acts:
            a["status"] = "cancelled"
        state["casting"].pop(cid, None)
        events.append(event("action.cancelled", f"{name_of(cid, state)} calls off the declared action.",
                            combatant=cid))
        if not next_group(state):
            end_resolution(state, dice, events)

    @contract.declaration("trigger")
    def _do_trigger(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        self._expect(state, "resolution")
        cid = self._own(state, d, viewer)
        a = find_act(state, cid, ("readied",))
        a["triggered"] = True
        told_label = a.get("told", a["label"])
        events.append(event("action.triggered", f"{name_of(cid, state)}'s trigger comes: {a['label']}.",
                            visibility=PUBLIC if told_label == a["label"] else GM_ONLY,
                            others=told(f"{name_of(cid, state)}'s trigger comes: {told_label}.", combatant=cid),
                            combatant=cid))
        if a["kind"] == "spell" and not surprising_side(state):
            last = state["last_key"] or a["key"]
            seg = min(10, last[1] + a["casting_time"])
            a.update({"status": "pending", "segment": seg, "key": [last[0], seg, 0]})
            a["why"].append(f"casting starts now and ends in segment {seg}")
            return
        a["status"] = "pending"
        resolve_group(state, [a], dice, events)
        if not next_group(state):
            end_resolution(state, dice, events)

    def _own(self, state: State, d: Mapping[str, Any], viewer: Viewer) -> str:
        cid = read.combatant(d, "combatant", state)
        if not viewer.controls(state, cid):
            raise IllegalDeclaration("you can act only for your own combatants")
        return cid

    @contract.declaration("bleed", by="gm")
    def _do_bleed(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        self._expect(state, "bleeding")
        if not self._skip(state, "bleeding", d, events):
            bleeders = who_bleeds(state)
            for cid in bleeders:
                c = state["combatants"][cid]
                c["hp"] -= 1
                words = condition_after(state, cid)
                dies = " and dies" if "dies" in words else ""
                events.append(event("combatant.bled", f"{c['name']} bleeds: 1 hit point lost ({c['hp']}){dies}.",
                                    visibility=stats_visibility(state, cid),
                                    others=told(f"{c['name']} bleeds: 1 hit point lost{dies}.", combatant=cid),
                                    combatant=cid, hp=c["hp"]))
            if not bleeders:
                events.append(event("bleeding.checked", "Nobody is bleeding."))
        make_recap(state)
        state["phase"] = "recap"
        events.append(event("recap.ready", f"Recap of round {state['round']} is ready."))

    @contract.declaration("next_round", by="gm")
    def _do_next_round(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                       events: list[Event]) -> None:
        self._expect(state, "recap")
        state["round"] += 1
        events.append(event("round.started", f"Round {state['round']} begins."))
        open_declarations(state, dice, events)

    @contract.declaration("end_encounter", by="gm")
    def _do_end_encounter(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                          events: list[Event]) -> None:
        self._expect(state, "recap", "declarations")
        state["phase"] = "recovery"
        state["queue"] = []
        events.append(event("encounter.resolved", "The fight is over. One turn passes while the survivors "
                                                  "recover: wounds can be bound, prisoners tied, spells cast."))

    @contract.declaration("finish", by="gm")
    def _do_finish(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        self._expect(state, "recovery")
        standing = standing_by_side(state)
        alive = [s for s, n in standing.items() if n > 0]
        winner = alive[0] if len(alive) == 1 else None
        text = f"The encounter ends: side {winner} holds the field." if winner else "The encounter ends."
        state["status"] = "ended"
        state["phase"] = "ended"
        state["outcome"] = {"winner": winner, "rounds": state["round"], "text": text}
        events.append(event("battle.ended", text, winner=winner))

    # --- DM tools, any time --------------------------------------------------------------------
    @contract.declaration("move", by="gm")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                 events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        x, y = read.square(d, state["grid"]["width"], state["grid"]["height"])
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        c["x"], c["y"] = x, y
        events.append(event("token.moved", f"The DM moves {c['name']} to square {c['x']}, {c['y']}.",
                            combatant=cid, x=c["x"], y=c["y"]))

    @contract.declaration("set_blocked", by="gm")
    def _do_set_blocked(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        """The DM marks the blocked squares (the whole list): no token enters or crosses them."""
        blocked = terrain.clean_blocked(d.get("blocked"), state["grid"]["width"], state["grid"]["height"])
        for c in state["combatants"].values():
            if c["condition"] not in ("dead", "fled") and [c["x"], c["y"]] in blocked:
                raise IllegalDeclaration(f"{c['name']} stands on ({c['x']}, {c['y']}): move it before blocking that square")
        state["blocked"] = blocked
        events.append(event("board.blocked", f"The DM marks {len(blocked)} blocked square{'s' if len(blocked) != 1 else ''}.",
                            blocked=blocked))

    @contract.declaration("set_scale", by="gm")
    def _do_set_scale(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        scale = d.get("scale")
        if scale not in FEET_PER_INCH:
            raise InvalidDeclaration("scale must be indoors or outdoors")
        state["scale"] = scale
        unit = "10 ft" if scale == "indoors" else "10 yd"
        events.append(event("scale.changed", f"The grid is now at the {scale} scale: 1 inch = {unit}.", scale=scale))

    @contract.declaration("first_aid", by="gm")
    def _do_first_aid(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        if c["condition"] != "down":
            raise IllegalDeclaration(f"{c['name']} is not down and dying")
        c["stable"] = True
        events.append(event("bleeding.stopped", f"{c['name']}'s wounds are bound: no more bleeding.", combatant=cid))

    @contract.declaration("set_hp", by="gm")
    def _do_set_hp(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        cid = self._own(state, d, viewer)
        c = state["combatants"][cid]
        before = condition_word(c)
        c["hp"] = read.whole(d, "hp", -20, 500)
        if c["hp"] > 0 and c["condition"] in ("down", "dead"):
            c["condition"] = "ok"
        condition_after(state, cid)
        # an NPC's hit points are the DM's: the table hears of them only if they change its state
        after = condition_word(c)
        others = told(f"The DM changes {c['name']}'s state: now {after}.", combatant=cid) if after != before else None
        events.append(event("hp.set", f"The DM sets {c['name']}'s hit points to {c['hp']}.",
                            visibility=stats_visibility(state, cid), others=others, combatant=cid))

    # --- projections ---------------------------------------------------------------------------
    def is_checkpoint(self, state: State) -> bool:
        if state.get("phase") == "reaction":
            return True
        if state.get("phase") != "declarations":
            return False
        made = [a for a in state.get("declarations", {}).values() if a.get("by") not in ("auto", "computer")]
        return not made and (state.get("decl") or {}).get("order") is None

    def charge_view(self, state: State, cid: str, positional: bool = True) -> dict[str, Any]:
        """Charge reach of one combatant this round, and its arrival and retaliation against each foe."""
        return charge_view(state, cid, positional)

    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return board_view(self.id, state, viewer)

    # the common view shape (rules/contract.py's VIEW_KEYS), read off the projection above
    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        if view.get("status") != "active":
            return {"combatants": [], "label": "Over" if view.get("status") == "ended" else str(view.get("phase_label") or "")}
        segment = view.get("current_segment")
        label = (f"Round {view['round']}, " if view.get("round") else "") + str(view.get("phase_label") or "") + (f", segment {segment}" if segment is not None else "")
        due = ([c["id"] for c in view.get("combatants") or [] if not c.get("declared") and not self.view_fighter_out(c)]
               if view.get("phase") == "declarations" else [])
        return {"combatants": due, "label": label}

    def view_fighter_out(self, combatant: Mapping[str, Any]) -> bool:
        return bool(combatant.get("condition", "ok") != "ok")



def _inches(distance: int) -> str:
    """``1 inch``, ``3 inches``."""
    return f"{distance} inch" if distance == 1 else f"{distance} inches"
