"""The order of resolution (phase 7): each declaration's action letter and segment, the side that
won initiative first, and the out-of-sequence cases (missiles and reaction, spells, charges, multiple
attack routines, much faster weapons on a tie)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...core import Event, State
from .charges import arrival_of, in_striking_range
from .combatants import chebyshev, describe, name_of, surprising_side
from .data import AFTER_BOTH_SIDES, LETTER_RANK, WEAPONS


def _minus(n: int) -> str:
    """A signed adjustment as the queue writes it: −2, +1."""
    return f"−{-n}" if n < 0 else f"+{n}"


def _add_reason(state: Mapping[str, Any], a: dict[str, Any], words: str, told: str) -> None:
    """Add why an action goes when it does: ``told`` is the reason as the table hears it when the
    actor is an NPC (``words`` hold its numbers, the DM's alone)."""
    a["why"].append(words)
    if told != words and state["combatants"][a["combatant"]]["controller"] != "seat":
        a.setdefault("why_told", {})[str(len(a["why"]) - 1)] = told


def told_why(a: Mapping[str, Any]) -> list[str]:
    """An action's reasons as the table hears them (see :func:`_add_reason`)."""
    told = a.get("why_told") or {}
    return [told.get(str(i), words) for i, words in enumerate(a["why"])]


def build_queue(state: State, events: list[Event]) -> None:
    init = state["initiative"]
    surprise_side = surprising_side(state)
    winner = init["winner"] if init else surprise_side
    tie = init is not None and init["winner"] is None
    faces = init["dice"] if init else {}
    combatants = state["combatants"]

    def block(side: str, letter: str) -> int:
        if letter == "P":
            return 0
        rank = LETTER_RANK[letter]
        return rank if tie or side == winner else 10 + rank

    tie_speeds = [WEAPONS[combatants[c]["weapon"]]["speed"] for c, a in state["declarations"].items()
                  if a["kind"] == "melee" and WEAPONS[combatants[c]["weapon"]]["speed"]]
    fastest = min(tie_speeds) if tie_speeds else 1
    queue: list[dict[str, Any]] = []
    for n, cid in enumerate(state["order"]):
        a = state["declarations"].get(cid)
        if a is None or a["kind"] == "none":
            continue
        c = combatants[cid]
        side, letter, delay = c["side"], a["letter"], a.get("delay", 0)
        why: list[str] = []
        if surprise_side:
            why.append(f"surprise segment {state['surprise']['segment']}: only side {side} acts")
        elif tie:
            why.append(f"tied initiative: letter {letter} for both sides")
        else:
            why.append(f"side {side} {'won' if side == winner else 'lost'} initiative: letter {letter}")
        always = False
        base = 1
        if surprise_side:
            base = 1
        elif a["kind"] == "spell":
            base = a["casting_time"]
            why.append(f"casting time {base} segment{'s' if base > 1 else ''}")
        elif a["kind"] in ("device", "custom"):
            base = a["segments"]
        elif a["kind"] == "charge":
            arrival = arrival_of(state, cid, a["target"])
            base = arrival or 10
            why.append(f"reaches striking range in segment {arrival}" if arrival
                       else "too far to reach the target this round")
        elif a["kind"] == "melee" and tie:
            speed = WEAPONS[c["weapon"]]["speed"]
            if speed:
                base = speed
                why.append(f"weapon speed factor {speed}")
            else:
                base, always = fastest, True
                why.append("no speed factor: always strikes on a tie, with the fastest weapons")
        seg = base + delay
        if delay:
            why.append(f"{delay} segment{'s' if delay > 1 else ''} late for slow declaring")
        act = {
            "id": f"{state['round']}.{state['surprise'].get('segment', 0)}.{cid}", "combatant": cid,
            "side": side, "letter": letter, "kind": a["kind"], "target": a.get("target"),
            "segment": seg, "key": [block(side, letter), seg, 0], "n": n, "status": "pending",
            "why": why, "hidden": c["controller"] != "seat", "prepared": a.get("prepared", False),
            "trigger": a.get("trigger", ""), "attacks": c["attacks"] if a["kind"] == "melee" else 1,
            "always": always, "delay": delay, "label": describe(state, a),
            # the label the table sees once the action is out: an NPC's without the DM's note
            "told": describe(state, a, note=c["controller"] == "seat"),
        }
        for k in ("spell", "casting_time", "damage", "segments", "x", "y", "continuing", "note", "morale"):
            if k in a:
                act[k] = a[k]
        if a.get("morale"):
            what = "retreats" if a["morale"] == "retreat" else "flees in panic"
            why.append(f"lost heart (morale failed by {a.get('morale_margin', 0)}): {what}")
        if seg > 10 and a["kind"] == "melee":
            # ruling AD&D-8: the number orders blows, it does not place them in segments
            why.append(f"order {seg}: after every faster blow, still this round")
        elif seg > 10:
            act["status"] = "lost"
            why.append("that pushes it past segment 10: the action is lost this round")
        queue.append(act)
    if not surprise_side:
        out_of_sequence(state, queue, faces, winner, tie)
    queue.sort(key=lambda a: (tuple(a["key"]), a["n"]))
    state["queue"] = queue


def out_of_sequence(state: State, queue: list[dict[str, Any]], faces: Mapping[str, int],
                    winner: str | None, tie: bool) -> None:
    combatants = state["combatants"]
    live = [a for a in queue if a["status"] == "pending"]
    caster_act = {a["combatant"]: a for a in live if a["kind"] in ("spell", "device")}

    def other(side: str) -> str:
        return "B" if side == "A" else "A"

    def place(a: dict[str, Any], anchor: dict[str, Any], offset: int, reason: str) -> None:
        a["key"] = [anchor["key"][0], anchor["key"][1], anchor["key"][2] + offset]
        a["why"].append(reason)

    def before(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return (tuple(a["key"]), a["n"]) < (tuple(b["key"]), b["n"])

    # missiles shifted by the shooter's reaction adjustment
    for a in live:
        if a["kind"] != "missile":
            continue
        mod = combatants[a["combatant"]]["reaction_mod"]
        own, enemy = faces[a["side"]] + mod, faces[other(a["side"])]
        if mod == 0:
            continue
        # (the reaction adjustment is the shooter's own number: an NPC's reasons have words for the table)
        if tie:
            a["key"][2] += -1 if mod > 0 else 1
            then = f"shoots {'before' if mod > 0 else 'after'} the other missiles"
            _add_reason(state, a, f"reaction adjustment {mod:+d}: {then}", f"reaction adjustment: {then}")
        elif a["side"] != winner and own >= enemy:
            a["key"] = [LETTER_RANK["D"], a["key"][1], -1 if own > enemy else 0]
            then = f"shoots {'before' if own > enemy else 'together with'} the winning side's missiles"
            _add_reason(state, a, f"die {faces[a['side']]}{mod:+d} = {own} against {enemy}: {then}",
                        f"die {faces[a['side']]} and its reaction adjustment against {enemy}: {then}")
        elif a["side"] == winner and own < enemy:
            # ruling AD&D-9: after the losing side's whole turn, its melee blows included
            a["key"] = [AFTER_BOTH_SIDES, a["key"][1], 0]
            then = f"after everything side {other(a['side'])} does this round"
            _add_reason(state, a, f"shoots last: reaction {_minus(mod)} + {faces[a['side']]} < {enemy}, {then}",
                        f"shoots last: its reaction adjustment leaves die {faces[a['side']]} short of {enemy}, {then}")
        elif a["side"] == winner and own == enemy:
            a["key"] = [10 + LETTER_RANK["D"], a["key"][1], 0]
            then = "shoots together with the losing side's missiles"
            _add_reason(state, a, f"die {faces[a['side']]}{mod:+d} = {own} against {enemy}: {then}",
                        f"die {faces[a['side']]} and its reaction adjustment against {enemy}: {then}")
    # spell against spell, casters targeting each other
    for a in live:
        b = caster_act.get(a.get("target") or "")
        if a["kind"] != "spell" or b is None or b["kind"] != "spell" or b.get("target") != a["combatant"]:
            continue
        if a["n"] > b["n"]:
            continue
        if a["segment"] != b["segment"]:
            fast, slow = (a, b) if a["segment"] < b["segment"] else (b, a)
            if not before(fast, slow):
                place(slow, fast, 1, f"casting time {slow['segment']} is longer than "
                                     f"{name_of(fast['combatant'], state)}'s {fast['segment']}")
        elif faces.get(a["side"]) == faces.get(b["side"]):
            b["key"] = list(a["key"])
            a["why"].append("same casting time and same initiative: both spells go off together")
            b["why"].append("same casting time and same initiative: both spells go off together")
        else:
            high, low = (a, b) if faces[a["side"]] > faces[b["side"]] else (b, a)
            if not before(high, low):
                place(low, high, 1, "same casting time: the higher initiative die finishes first")
    # on a tie, missiles or turning against a spell: the caster's die against the casting time
    if tie:
        for m in live:
            s = caster_act.get(m.get("target") or "")
            if s is None and m["kind"] in ("missile", "turn"):
                s = next((x for x in live if x["kind"] == "spell" and x.get("target") == m["combatant"]), None)
            if m["kind"] not in ("missile", "turn") or s is None or s["side"] == m["side"]:
                continue
            order_against_caster(state, m, s, faces[s["side"]], "the caster's initiative die", place)
    # charges against casters, then missiles and turning against chargers
    for a in live:
        s = caster_act.get(a.get("target") or "")
        if a["kind"] == "charge" and s is not None:
            order_against_caster(state, a, s, a["segment"], "the charge's arrival segment", place)
    for a in live:
        if a["kind"] not in ("missile", "turn"):
            continue
        charge = next((x for x in live if x["combatant"] == a.get("target") and x["kind"] == "charge"), None)
        if charge is not None and not before(a, charge):
            place(a, charge, -1, f"aimed at {name_of(charge['combatant'], state)}, who charges: "
                                 "missiles and turning come first")
    # a blow aimed at a charger still out of reach waits for the charge to arrive
    for a in live:
        if a["kind"] != "melee":
            continue
        charge = next((x for x in live if x["combatant"] == a.get("target") and x["kind"] == "charge"), None)
        if charge is None or chebyshev(combatants[a["combatant"]], combatants[charge["combatant"]]) <= 1:
            continue
        if before(a, charge):
            place(a, charge, 1, f"{name_of(charge['combatant'], state)} is charging from out of reach: "
                                "this blow waits for the charge to arrive")
    # melee against a caster: speed factor (or the caster's die) against the casting time
    for a in live:
        s = caster_act.get(a.get("target") or "")
        if a["kind"] != "melee" or s is None or s["side"] == a["side"]:
            continue
        speed = WEAPONS[combatants[a["combatant"]]["weapon"]]["speed"]
        if speed:
            value, what = speed + a["delay"], f"speed factor {speed}"
        else:
            value, what = faces[s["side"]] + a["delay"], "the caster's initiative die"
        a["segment"] = value
        order_against_caster(state, a, s, value, what, place)
    # multiple attack routines: one blow slips in before the enemy's first
    if not tie:
        for a in list(live):
            if a["kind"] != "melee" or a["attacks"] < 2 or a["side"] == winner:
                continue
            if a.get("target") in caster_act:
                continue
            foes = [x for x in live if x["kind"] == "melee" and x["side"] == winner
                    and x["status"] == "pending"]
            if not foes:
                continue
            first = min(foes, key=lambda x: (tuple(x["key"]), x["n"]))
            part = copy.deepcopy(a)
            part.update({"id": a["id"] + ".1", "attacks": 1, "why": list(a["why"])})
            place(part, first, -1, f"{a['attacks']} attack routines: one blow slips in just before "
                                   f"{name_of(first['combatant'], state)}'s first")
            a["attacks"] -= 1
            queue.append(part)
    # option (ruling AD&D-7): a much faster weapon strikes twice before the slower on a tie, and
    # a third time with it when 10 or more faster; never while either of the two is closing or charging
    if tie and state["options"].get("fast_weapon_extra"):
        by_cid = {a["combatant"]: a for a in live if a["kind"] == "melee"}
        for a in list(live):
            t = by_cid.get(a.get("target") or "")
            if a["kind"] != "melee" or t is None:
                continue
            mine = WEAPONS[combatants[a["combatant"]]["weapon"]]["speed"]
            theirs = WEAPONS[combatants[t["combatant"]]["weapon"]]["speed"]
            if not mine or not theirs or mine >= theirs:
                continue
            if theirs - mine >= 10:
                reason = "10 or more faster"
            elif theirs >= 2 * mine:
                reason = "at most half"
            elif theirs - mine >= 5:
                reason = "5 or more faster"
            else:
                continue
            closing = [x for x in (a, t) if not in_striking_range(state, x["combatant"], x["target"])]
            if closing:
                who = name_of(closing[0]["combatant"], state)
                a["why"].append(f"{who} is closing to striking range: no extra blows this round (option)")
                continue
            name = name_of(t["combatant"], state)
            a["attacks"] += 1
            a["why"].append(f"speed factor {mine} against {theirs}: {reason}, two blows first (option)")
            if theirs - mine >= 10:
                part = copy.deepcopy(a)
                part.update({"id": a["id"] + ".3", "attacks": 1, "segment": t["segment"], "why": a["why"][:-1]})
                place(part, t, 0, f"speed factor {mine} against {theirs}: 10 or more faster, a third blow "
                                  f"with {name}'s (option)")
                queue.append(part)


def order_against_caster(state: State, a: dict[str, Any], spell: dict[str, Any], value: int,
                         what: str, place: Any) -> None:
    """Order action ``a`` against the spell (or device) it is aimed at: shorter time goes first."""
    cast = spell["segment"]
    name = name_of(spell["combatant"], state)
    key_a, key_s = (tuple(a["key"]), a["n"]), (tuple(spell["key"]), spell["n"])
    if cast < value:
        if key_a < key_s:
            place(a, spell, 1, f"{name}'s casting time {cast} is shorter than {what} ({value}): "
                               "the spell goes first")
        else:
            a["why"].append(f"{name}'s casting time {cast} is shorter than {what} ({value})")
    elif cast == value:
        place(a, spell, 0, f"{name}'s casting time {cast} equals {what}: both happen together")
    elif key_a > key_s:
        place(a, spell, -1, f"{what} ({value}) beats {name}'s casting time {cast}: this comes first")
    else:
        a["why"].append(f"{what} ({value}) beats {name}'s casting time {cast}")


def next_group(state: State) -> list[dict[str, Any]]:
    pending = [a for a in state["queue"] if a["status"] == "pending"]
    if not pending:
        return []
    first = min(pending, key=lambda a: (tuple(a["key"]), a["n"]))
    return [a for a in pending if a["key"] == first["key"]]
