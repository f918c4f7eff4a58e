"""What each viewer of an AD&D battle sees: the board, the declarations and the resolution track
as far as that viewer may see them, the DM's checklist, the clock, and what the viewer may declare."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...core import Field, State, Viewer, may_see
from .charges import charge_view
from .combatants import (
    able,
    condition_word,
    describe,
    missile_of,
    name_of,
    sees_stats,
    surprising_side,
    weapon_of,
)
from .data import (
    ACTION_KINDS,
    FEET_PER_INCH,
    MISSILES,
    PHASE_LABELS,
    SECONDS_PER_SEGMENT,
    TARGETED,
    WEAPONS,
    delay_segments,
    morale_score,
)
from .declarations import awaited_player, elapsed, npcs_to_declare
from .resolution import who_bleeds
from .segments import next_group, told_why


def act_visible(state: State, viewer: Viewer, a: Mapping[str, Any]) -> bool:
    return viewer.is_gm or not a["hidden"] or a["status"] in ("resolved", "lost") or viewer.controls(
        state, a["combatant"])


def board_view(system_id: str, state: State, viewer: Viewer) -> dict[str, Any]:
    gm = viewer.is_gm
    mine = set(viewer.own_combatants(state))
    scale = state["scale"]
    combatants = []
    for cid in state["order"]:
        c = state["combatants"][cid]
        w = WEAPONS[c["weapon"]]
        entry: dict[str, Any] = {
            "id": cid, "name": c["name"], "side": c["side"], "seat": c["seat"], "controller": c["controller"],
            "x": c["x"], "y": c["y"], "condition": c["condition"], "status": condition_word(c),
            "mine": cid in mine, "weapon": w["label"], "declared": cid in state["declarations"],
            "casting": bool(state["casting"].get(cid)) and sees_stats(state, viewer, cid),
        }
        if sees_stats(state, viewer, cid):
            entry.update({
                "hp": c["hp"], "hp_max": c["hp_max"], "ac": c["ac"], "thac0": c["thac0"], "move": c["move"],
                "attacks": c["attacks"], "speed_factor": w["speed"], "length_feet": w["length"],
                "damage": weapon_of(c)["damage"], "missile": MISSILES[c["missile"]]["label"],
                "reaction_mod": c["reaction_mod"], "caster": c["caster"], "stable": c["stable"],
                "hit_dice": c["hit_dice"], "hit_dice_plus": c.get("hit_dice_plus", 0),
                "morale_score": morale_score(c["hit_dice"], c.get("hit_dice_plus", 0), c["morale_mod"]),
            })
        combatants.append(entry)
    declarations = []
    for cid in state["order"]:
        a = state["declarations"].get(cid)
        if a is None:
            continue
        if gm or state["combatants"][cid]["controller"] == "seat" or cid in mine:
            declarations.append({"combatant": cid, "name": name_of(cid, state), "label": describe(state, a),
                                 "letter": a["letter"], "kind": a["kind"], "target": a.get("target"),
                                 "delay": a.get("delay", 0), "seconds": a.get("seconds", 0),
                                 "prepared": a.get("prepared", False)})
    ordered = sorted(state["queue"], key=lambda a: (tuple(a["key"]), a["n"]))
    groups: list[list[Any]] = []
    for a in ordered:
        if not groups or groups[-1][0] != a["key"]:
            groups.append([a["key"], []])
        groups[-1][1].append(a)
    track = []
    step_no = 0
    for _key, acts in groups:
        shown = [a for a in acts if act_visible(state, viewer, a)]
        if not shown:
            continue
        step_no += 1
        for a in shown:
            track.append({
                "id": a["id"], "combatant": a["combatant"], "name": name_of(a["combatant"], state),
                "side": a["side"], "letter": a["letter"], "kind": a["kind"],
                "label": a["label"] if gm else a.get("told", a["label"]),
                "target": a.get("target"), "segment": min(10, a["segment"]), "step": step_no,
                "status": a["status"], "why": list(a["why"]) if gm else told_why(a), "attacks": a["attacks"],
                "together": len(shown) > 1,
            })
    spells = []
    for a in ordered:
        if a["kind"] == "spell" and a["status"] in ("pending", "readied") and act_visible(state, viewer, a):
            spells.append({"caster": a["combatant"], "name": name_of(a["combatant"], state),
                           "spell": a.get("spell", "a spell"), "completes_segment": a["segment"],
                           "target": a.get("target"), "status": a["status"]})
    for cid, s in state["casting"].items():
        if sees_stats(state, viewer, cid) and not any(x["caster"] == cid for x in spells):
            spells.append({"caster": cid, "name": name_of(cid, state), "spell": s["spell"],
                           "completes_segment": None, "remaining": s["remaining"], "target": s.get("target"),
                           "status": "casting"})
    charges = {cid: charge_view(state, cid, positional=not gm) for cid in state["order"]
               if able(state["combatants"][cid]) and sees_stats(state, viewer, cid)}
    encounter = copy.deepcopy(state["encounter"])
    if not gm and encounter.get("reaction", {}).get("private"):
        encounter.pop("reaction")
    recap = None
    if state["recap"]:
        recap = {"round": state["recap"]["round"],  # each line in the words written for this viewer
                 "lines": [ln["text"] if may_see(ln["visibility"], viewer, state) else ln["others"]
                           for ln in state["recap"]["lines"] if may_see(ln["visibility"], viewer, state) or ln.get("others")]}
    return {
        "system": system_id,
        "status": state["status"],
        "phase": state["phase"],
        "phase_label": PHASE_LABELS.get(state["phase"], state["phase"]),
        "round": state["round"],
        "surprise": {k: state["surprise"].get(k) for k in ("side", "segments", "segment")},
        "scale": scale,
        "grid": {**state["grid"], "feet_per_inch": FEET_PER_INCH[scale],
                 "unit": "1 inch = 10 ft" if scale == "indoors" else "1 inch = 10 yd"},
        "blocked": copy.deepcopy(state.get("blocked", [])),
        "combatants": combatants,
        "declarations": declarations,
        "initiative": copy.deepcopy(state["initiative"]),
        "encounter": encounter,
        "procedure": procedure_view(state, viewer),
        "clock": clock_view(state),
        "track": track,
        "current_segment": (state["last_key"] or [0, 0])[1] if state["phase"] == "resolution" else None,
        "spells": spells,
        "charges": charges,
        "recap": recap,
        "options": dict(state["options"]),
        "outcome": copy.deepcopy(state.get("outcome")),
        "legal": legal_declarations(state, viewer),
    }


def clock_view(state: State) -> dict[str, Any] | None:
    awaited = awaited_player(state)
    if awaited is None:
        return None
    decl = state["decl"]
    return {"combatant": awaited, "name": name_of(awaited, state), "seat": state["combatants"][awaited]["seat"],
            "open_at": decl["open_at"], "paused_since": decl["paused_since"],
            "server_time": state.get("last_at"),
            "delay_at_server_time": delay_segments(elapsed(state, state.get("last_at"))),
            "paused_total": decl["paused_total"], "seconds_per_segment": SECONDS_PER_SEGMENT}


def procedure_view(state: State, viewer: Viewer) -> dict[str, Any]:
    phase = state["phase"]
    encounter_keys = ["reaction", "surprise", "distance", "morale"]
    surprise_on = bool(state["surprise"].get("side")) and state["surprise"].get("segments", 0) > 0
    if surprise_on:
        encounter_keys.append("surprise_segments")
    round_keys = ["declarations", "initiative", "resolution", "bleeding", "recap", "recovery"]
    in_surprise = bool(surprising_side(state))
    if phase in encounter_keys:
        current = phase
    elif in_surprise:
        current = "surprise_segments"
    else:
        current = phase
    keys = encounter_keys + round_keys
    steps = []
    reached = False
    pos = keys.index(current) if current in keys else len(keys)
    for i, key in enumerate(keys):
        info = state["steps"].get(key, {})
        if key == current:
            st = "current"
            reached = True
        elif i < pos and key in encounter_keys:
            st = "skipped" if info.get("skipped") else "done"
        elif in_surprise and key in round_keys:
            st = "upcoming"
        elif not reached and i < pos:
            st = "done"
        else:
            st = "upcoming"
        note = info.get("note", "") if (viewer.is_gm or not info.get("private")) else "rolled in secret"
        if not viewer.is_gm and "told" in info:  # the step's words for the table (no NPC's numbers)
            note = info["told"]
        steps.append({"key": key, "label": PHASE_LABELS[key], "state": st, "note": note})
    return {"steps": steps, "current": current, "round": state["round"], "pending": pending_words(state, viewer),
            "awaiting": clock_view(state)}


def pending_words(state: State, viewer: Viewer) -> list[str]:
    phase = state["phase"]
    if state["status"] != "active":
        return []
    if phase in ("reaction", "surprise", "distance", "morale"):
        return [f"The DM makes the {PHASE_LABELS[phase].lower()} (or skips it with a note)."]
    if phase == "declarations":
        npcs = npcs_to_declare(state)
        if npcs:
            if viewer.is_gm:
                return ["The DM notes secret declarations for: " + ", ".join(name_of(c, state) for c in npcs)]
            return ["The DM is noting secret declarations."]
        if state["decl"]["order"] is None:
            return ["The DM rolls who declares first."]
        awaited = awaited_player(state)
        if awaited:  # (by the combatant's name: a seat's id means nothing to the table)
            paused = " (clock paused)" if state["decl"]["paused_since"] is not None else ""
            return [f"Waiting for {name_of(awaited, state)} to declare{paused}."]
    if phase == "initiative":
        return ["The DM rolls initiative: a d6 for each side."]
    if phase == "resolution":
        group = next_group(state)
        if group:
            shown = [a for a in group if act_visible(state, viewer, a)]
            who = ", ".join(name_of(a["combatant"], state) for a in shown) or "a secret action"
            seg = group[0]["segment"]
            when = f"after segment 10, order {seg}" if seg > 10 else f"segment {seg}"
            return [f"Next to resolve ({when}): {who}."]
    if phase == "bleeding":
        return ["The DM applies bleeding: " + (", ".join(name_of(c, state) for c in who_bleeds(state))
                                               or "nobody bleeds") + "."]
    if phase == "recap":
        return ["Read the recap aloud, then start the next round or end the encounter."]
    if phase == "recovery":
        return ["One turn of recovery; the DM finishes the encounter."]
    return []


# --- what each viewer may declare ----------------------------------------------------------
def declare_form(state: State, cid: str) -> dict[str, Any]:
    c = state["combatants"][cid]
    foes = [t for t in state["order"] if state["combatants"][t]["side"] != c["side"]
            and state["combatants"][t]["condition"] not in ("dead", "fled", "surrendered")]
    seg = state["surprise"].get("segment") if surprising_side(state) else 0
    if seg:
        foes = [t for t in foes if state["combatants"][t]["reaction_mod"] < seg]
    everyone = [t for t in state["order"] if state["combatants"][t]["condition"] not in ("dead", "fled")]
    actions = []
    for kind, (letter, label) in ACTION_KINDS.items():
        if kind in ("spell", "turn") and not c["caster"] or kind == "psionic" and not c.get("psionic"):
            continue
        if kind == "missile" and missile_of(c)["rate"] <= 0:
            continue
        targets = foes if kind in ("melee", "missile", "charge") else everyone if kind in ("turn", "spell") else []
        if kind in ("melee", "missile", "charge") and not targets:
            continue
        actions.append({"kind": kind, "letter": letter, "label": f"{letter} · {label}" if letter != "-" else label,
                        "targets": [{"id": t, "name": name_of(t, state)} for t in targets],
                        "needs_target": kind in TARGETED})
    return {
        "type": "declare", "combatant": cid, "label": f"Declare for {c['name']}", "testid": f"declare-{cid}",
        "actions": actions,
        "fields": [
            Field("spell", "Spell", "text", "", 0, 40, group="spell").to_dict(),
            Field("casting_time", "Casting time (segments)", "int", 1, 1, 10, group="spell").to_dict(),
            Field("damage", "Spell damage (optional)", "text", "", 0, 12, group="spell").to_dict(),
            Field("segments", "Segments needed", "int", 1, 1, 10, group="device custom").to_dict(),
            Field("prepared", "Prepare it with a trigger", "bool", False).to_dict(),
            Field("trigger", "Trigger", "text", "", 0, 80).to_dict(),
            Field("note", "Note", "text", "", 0, 80).to_dict(),
        ],
        "clock": clock_view(state) if awaited_player(state) == cid else None,
    }


def legal_declarations(state: State, viewer: Viewer) -> list[dict[str, Any]]:
    if state["status"] != "active" or viewer.role == "spectator":
        return []
    phase = state["phase"]
    out: list[dict[str, Any]] = []
    note = Field("note", "Why skip", "text", "", 0, 200).to_dict()
    if viewer.is_gm:
        checks = {"reaction": ("check_reaction", "Roll reaction (d100)",
                               [Field("adjustment", "Charisma adjustment (%)", "int", 0, -50, 50).to_dict(),
                                Field("private", "Roll in secret", "bool", False).to_dict()]),
                  "surprise": ("check_surprise", "Roll surprise (d6 per side)", []),
                  "distance": ("check_distance", "Roll distance and place the parties", []),
                  "morale": ("check_morale", "Roll opening morale",
                             [Field("side", "Side that checks", "choice", "B",
                                    choices=(("A", "Side A"), ("B", "Side B"))).to_dict(),
                              Field("modifier", "Modifier (%)", "int", 0, -100, 100).to_dict()])}
        if phase in checks:
            kind, label, fields = checks[phase]
            out.append({"type": kind, "label": label, "fields": fields, "testid": f"gm-{kind}"})
            skip_fields = [note]
            if phase == "distance":
                skip_fields = [Field("distance", "Known distance (inches)", "int", 3, 0, 60).to_dict(), note]
            out.append({"type": kind, "label": "Skip with a note", "fixed": {"skip": True},
                        "fields": skip_fields, "testid": f"gm-skip-{phase}"})
        elif phase == "declarations":
            npcs = npcs_to_declare(state)
            for cid in npcs:
                out.append(declare_form(state, cid))
            if not npcs and state["decl"]["order"] is None:
                out.append({"type": "roll_order", "label": "Roll who declares first", "fields": [],
                            "testid": "gm-roll-order"})
            awaited = awaited_player(state)
            if awaited:
                paused = state["decl"]["paused_since"] is not None
                out.append({"type": "resume_clock" if paused else "pause_clock",
                            "label": "Resume the clock" if paused else "Pause the clock (question to the DM)",
                            "fields": [], "testid": "gm-clock"})
                out.append(declare_form(state, awaited))
        elif phase == "initiative":
            out.append({"type": "roll_initiative", "label": "Roll initiative (d6 per side)", "fields": [],
                        "testid": "gm-initiative"})
        elif phase == "resolution":
            out.append({"type": "resolve_next", "label": "Resolve the next step", "fields": [],
                        "testid": "gm-resolve-next"})
            out.append({"type": "resolve_all", "label": "Resolve the rest of the round", "fields": [],
                        "testid": "gm-resolve-all"})
        elif phase == "bleeding":
            out.append({"type": "bleed", "label": "Apply bleeding", "fields": [], "testid": "gm-bleed"})
            out.append({"type": "bleed", "label": "Skip with a note", "fixed": {"skip": True}, "fields": [note],
                        "testid": "gm-skip-bleeding"})
        elif phase == "recap":
            out.append({"type": "next_round", "label": "Next round", "fields": [], "testid": "gm-next-round"})
            out.append({"type": "end_encounter", "label": "End the encounter", "fields": [],
                        "testid": "gm-end-encounter"})
        elif phase == "recovery":
            out.append({"type": "finish", "label": "Finish after the recovery turn", "fields": [],
                        "testid": "gm-finish"})
        if phase in ("declarations", "resolution", "recap"):
            out.append({"type": "check_morale", "label": "Morale check for a side", "testid": "gm-morale",
                        "fields": [Field("side", "Side", "choice", "B",
                                         choices=(("A", "Side A"), ("B", "Side B"))).to_dict(),
                                   Field("modifier", "Modifier (%)", "int", 0, -100, 100).to_dict()]})
        alive = [(cid, name_of(cid, state)) for cid in state["order"]
                 if state["combatants"][cid]["condition"] != "fled"]
        out.append({"type": "move", "label": "Move a token", "testid": "gm-move",
                    "fields": [Field("combatant", "Combatant", "choice", alive[0][0] if alive else "",
                                     choices=tuple(alive)).to_dict(),
                               Field("x", "Column", "int", 0, 0, state["grid"]["width"] - 1).to_dict(),
                               Field("y", "Row", "int", 0, 0, state["grid"]["height"] - 1).to_dict()]})
        out.append({"type": "set_scale", "label": "Switch scale", "testid": "gm-scale",
                    "fields": [Field("scale", "Scale", "choice", state["scale"],
                                     choices=(("indoors", "Indoors"), ("outdoors", "Outdoors"))).to_dict()]})
        out.append({"type": "set_hp", "label": "Set hit points (healing, adjustments)", "testid": "gm-set-hp",
                    "fields": [Field("combatant", "Combatant", "choice", alive[0][0] if alive else "",
                                     choices=tuple(alive)).to_dict(),
                               Field("hp", "Hit points", "int", 1, -20, 500).to_dict()]})
        down = [(cid, name_of(cid, state)) for cid in state["order"]
                if state["combatants"][cid]["condition"] == "down" and not state["combatants"][cid]["stable"]]
        if down:
            out.append({"type": "first_aid", "label": "First aid (stops bleeding)", "testid": "gm-first-aid",
                        "fields": [Field("combatant", "Combatant", "choice", down[0][0],
                                         choices=tuple(down)).to_dict()]})
    else:
        awaited = awaited_player(state)
        if phase == "declarations" and awaited and viewer.controls(state, awaited):
            out.append(declare_form(state, awaited))
    if phase == "resolution":
        for a in state["queue"]:
            if not viewer.controls(state, a["combatant"]):
                continue
            if a["status"] == "pending" and a["kind"] != "flee":
                out.append({"type": "cancel", "combatant": a["combatant"], "fields": [],
                            "label": f"Call off {name_of(a['combatant'], state)}'s action",
                            "testid": f"cancel-{a['combatant']}"})
            elif a["status"] == "readied":
                out.append({"type": "trigger", "combatant": a["combatant"], "fields": [],
                            "label": f"Trigger {name_of(a['combatant'], state)}: {a['trigger']}",
                            "testid": f"trigger-{a['combatant']}"})
    seen: set[tuple[str, str]] = set()
    unique = []
    for t in out:
        k = (t["type"], str(t.get("combatant")) + str(t.get("fixed")))
        if k not in seen:
            seen.add(k)
            unique.append(t)
    return unique
