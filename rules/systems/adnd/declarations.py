"""Declarations (phase 6): opening a round's declarations, who still has to declare, the players'
clock, checking a declared action, and closing the declarations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import read, terrain
from ...core import GM_ONLY, Event, State, event
from ...dice import DiceSource
from ...errors import IllegalDeclaration, InvalidDeclaration
from .combatants import able, actors, auto_declaration, decl_visibility, describe, missile_of, surprising_side
from .computer import computer_declaration
from .data import ACTION_KINDS, TARGETED, parse_dice
from .morale import flight_declaration
from .segments import build_queue


def after_opening(state: State, dice: DiceSource, events: list[Event]) -> None:
    if state["surprise"].get("side") and state["surprise"]["segments"] > 0:
        state["surprise"]["segment"] = 1
        events.append(event("surprise.started",
                            f"Surprise segment 1 of {state['surprise']['segments']}: only side "
                            f"{surprising_side(state)} acts."))
    else:
        state["round"] = 1
        events.append(event("round.started", "Round 1 begins."))
    open_declarations(state, dice, events)


def open_declarations(state: State, dice: DiceSource, events: list[Event], *, in_resolution: bool = False) -> None:
    """The declarations open (a round, or a surprise segment). ``in_resolution``: a surprise segment
    opened by the resolution of the one before: the computer declares inline (see :func:`declare_from`)."""
    state["phase"] = "declarations"
    state["declarations"] = {}
    state["queue"] = []
    state["initiative"] = None
    state["last_key"] = None
    if not surprising_side(state):
        state["round_start_hp"] = {cid: c["hp"] for cid, c in state["combatants"].items()}
        state["recap"] = None
        state["round_log"] = []
    state["decl"] = {"order": None, "index": 0, "open_at": None, "paused_total": 0.0,
                     "paused_since": None, "roll": None}
    declare_from(state, 0, dice, events, inline=in_resolution)


def declare_from(state: State, start: int, dice: DiceSource, events: list[Event], *, inline: bool = False) -> None:
    """The automatic declarations of the actors from the ``start``-th on, in their order (a task begun
    in surprise, a spell being cast, a combatant that has lost heart); then the declarations close if
    nobody else has to declare. At a combatant the computer plays it stops: the computer declares for
    it through the engine's loop (computer.py), and its declaration goes on from the next actor.

    ``inline``: the computer declares here instead, in its place among the others. So it does when a
    surprise segment opens in the middle of the resolution of the one before: when nobody else has
    to declare, the declarations close at once and the DM's ``resolve_all`` goes on resolving the new
    segment in the same declaration, so the computer's declarations (and the d-roll that picks a
    target among equals) must come before those rolls, inside that resolution, where the engine's
    loop (which runs after a declaration) cannot put them."""
    for cid in actors(state)[start:]:
        c = state["combatants"][cid]
        spell = state["casting"].get(cid)
        if spell and spell.get("kind", "spell") != "spell":
            state["declarations"][cid] = {
                **auto_declaration(spell["kind"]), "segments": spell["remaining"], "note": spell.get("note", ""),
                "continuing": True,
            }
            events.append(event("declaration.made", f"{c['name']} carries on with the task begun in surprise.",
                                visibility=decl_visibility(state, cid), combatant=cid))
        elif spell:
            state["declarations"][cid] = {
                "kind": "spell", "letter": "D", "target": spell.get("target"), "spell": spell["spell"],
                "casting_time": spell["remaining"], "damage": spell.get("damage", ""), "continuing": True,
                "prepared": False, "trigger": "", "note": "", "delay": 0, "seconds": 0, "by": "auto",
            }
            events.append(event("declaration.made", f"{c['name']} keeps casting {spell['spell']}.",
                                visibility=decl_visibility(state, cid), combatant=cid))
        elif c.get("morale") in ("retreat", "panic") or c.get("morale_failed"):
            band = c.get("morale") or "panic"
            state["declarations"][cid] = flight_declaration(c)
            words = "disengages and retreats" if band == "retreat" else "flees in panic"
            events.append(event("declaration.made", f"{c['name']} has lost heart and {words}.",
                                visibility=decl_visibility(state, cid), combatant=cid))
        elif c["controller"] == "computer":
            if not inline:
                return
            note_computer_declaration(state, cid, dice, events)
    maybe_finish_declarations(state, dice, events)


def note_computer_declaration(state: State, cid: str, dice: DiceSource, events: list[Event]) -> None:
    state["declarations"][cid] = computer_declaration(state, cid, dice)
    events.append(event("declaration.made",
                        f"The computer notes {state['combatants'][cid]['name']}'s action: "
                        f"{describe(state, state['declarations'][cid])}.",
                        visibility=GM_ONLY, combatant=cid))


def computer_declares(state: State, cid: str, dice: DiceSource, events: list[Event], *, opening: bool) -> None:
    """The computer's declaration for ``cid`` (its own, computer.py: the engine's loop sends it): when
    the declarations open (``opening``), the automatic ones of the actors after it follow; when it
    answers an assignment, the declarations close if nobody else has to declare."""
    note_computer_declaration(state, cid, dice, events)
    if opening:
        declare_from(state, actors(state).index(cid) + 1, dice, events)
    else:
        maybe_finish_declarations(state, dice, events)


def players_to_declare(state: State) -> list[str]:
    return [cid for cid in actors(state) if state["combatants"][cid]["controller"] == "seat"
            and cid not in state["declarations"]]


def npcs_to_declare(state: State) -> list[str]:
    return [cid for cid in actors(state) if state["combatants"][cid]["controller"] != "seat"
            and cid not in state["declarations"]]


def awaited_player(state: State) -> str | None:
    decl = state.get("decl") or {}
    if state["phase"] != "declarations" or decl.get("order") is None:
        return None
    late = [c for c in players_to_declare(state) if c not in decl["order"]]
    cid: str
    for cid in list(decl["order"]) + late:
        c = state["combatants"][cid]
        if cid not in state["declarations"] and able(c) and c["controller"] == "seat":
            return cid
    return None


def elapsed(state: State, at: float | None) -> float:
    decl = state["decl"]
    if at is None or decl.get("open_at") is None:
        return 0.0
    end = decl["paused_since"] if decl.get("paused_since") is not None else at
    return max(0.0, float(end) - float(decl["open_at"]) - float(decl["paused_total"]))


def maybe_finish_declarations(state: State, dice: DiceSource, events: list[Event]) -> None:
    if npcs_to_declare(state) or players_to_declare(state):
        return
    if state["decl"]["order"] is None and any(
        state["combatants"][c]["controller"] == "seat" and state["declarations"][c].get("by") != "auto"
        for c in state["declarations"]
    ):
        return
    if state["decl"]["order"] is None:
        state["decl"]["order"] = []
    if surprising_side(state):
        state["initiative"] = None
        build_queue(state, events)
        state["phase"] = "resolution"
    else:
        state["phase"] = "initiative"
        events.append(event("declarations.closed", "Everyone has declared. The DM rolls initiative."))


def clean_action(state: State, cid: str, d: Mapping[str, Any]) -> dict[str, Any]:
    c = state["combatants"][cid]
    kind = d.get("kind")
    if kind not in ACTION_KINDS:
        raise InvalidDeclaration(f"kind must be one of {', '.join(ACTION_KINDS)} (got {kind!r})")
    letter = ACTION_KINDS[kind][0]
    out: dict[str, Any] = {"kind": kind, "letter": letter, "target": None, "prepared": False, "trigger": "",
                           "note": read.text(d, "note", 80)}
    target = d.get("target")
    if kind in TARGETED or (kind == "spell" and target):
        if not isinstance(target, str) or target not in state["combatants"]:
            raise InvalidDeclaration(f"{ACTION_KINDS[kind][1].lower()} needs a target combatant")
        t = state["combatants"][target]
        if t["condition"] in ("dead", "fled"):
            raise IllegalDeclaration(f"{t['name']} is no longer in the fight")
        if t["condition"] == "surrendered" and kind in ("melee", "missile", "charge"):
            raise IllegalDeclaration(f"{t['name']} has surrendered and is no longer a target")
        if kind in ("melee", "missile", "charge") and (target == cid or t["side"] == c["side"]):
            raise IllegalDeclaration(f"{c['name']} cannot attack {t['name']}, who is on the same side")
        seg = state["surprise"].get("segment") if surprising_side(state) else 0
        if seg and target != cid and t["reaction_mod"] >= seg:
            raise IllegalDeclaration(
                f"{t['name']} reacts too fast to be targeted in surprise segment {seg}")
        out["target"] = target
    if kind == "spell":
        if not c["caster"]:
            raise IllegalDeclaration(f"{c['name']} does not cast spells")
        out["spell"] = read.text(d, "spell", 40) or "a spell"
        out["casting_time"] = read.whole(d, "casting_time", 1, 10, default=1)
        dmg = read.text(d, "damage", 12)
        if dmg:
            parse_dice(dmg)
        out["damage"] = dmg
    if kind == "missile" and missile_of(c)["rate"] <= 0:
        raise IllegalDeclaration(f"{c['name']} has no missile weapon")
    if kind == "turn" and not c["caster"]:
        raise IllegalDeclaration(f"{c['name']} cannot turn undead")
    if kind == "psionic" and not c.get("psionic"):
        raise IllegalDeclaration(f"{c['name']} has no psionic powers")
    if kind in ("device", "custom"):
        out["segments"] = read.whole(d, "segments", 1, 10, default=1)
    if kind == "move" and (d.get("x") is not None or d.get("y") is not None):
        x = read.whole(d, "x", 0, state["grid"]["width"] - 1, default=0)
        y = read.whole(d, "y", 0, state["grid"]["height"] - 1, default=0)
        if [x, y] in state.get("blocked", []):
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        way = terrain.path_length((c["x"], c["y"]), (x, y), terrain.blocked_of(state), state["grid"]["width"],
                                  state["grid"]["height"])
        if way is None:
            raise IllegalDeclaration(f"blocked squares leave {c['name']} no way to ({x}, {y})")
        dist = way
        limit = c["move"] / 10 if surprising_side(state) else c["move"]
        if dist > limit + 1e-9:
            raise IllegalDeclaration(f"{c['name']} can move at most {limit:g} inches now")
        out["x"], out["y"] = x, y
    if d.get("prepared"):
        if kind in ("none", "psionic"):
            raise IllegalDeclaration("only a real action can be prepared")
        out["prepared"] = True
        out["trigger"] = read.text(d, "trigger", 80) or "when the moment comes"
    return out


def declared_at(d: Mapping[str, Any]) -> float:
    at = d.get("at")
    if at is None or isinstance(at, bool) or not isinstance(at, int | float):
        raise InvalidDeclaration("the declaration needs its time stamp 'at'")
    return float(at)
