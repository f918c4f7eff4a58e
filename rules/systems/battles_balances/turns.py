"""Battles&Balances' clock: characters act in lineup order, each one who holds no action point
refreshes instead, the coming turns (the timeline) and the end of the battle.

>>> ap_words(3), ap_words(-4)
('3 AP left', '4 AP borrowed')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.core import Event, State, event

from .data import TIMELINE_LENGTH


def ap_words(ap: int) -> str:
    return f"{ap} AP left" if ap >= 0 else f"{-ap} AP borrowed"


def living(state: Mapping[str, Any]) -> list[str]:
    return [cid for cid in state["order"] if not state["combatants"][cid]["defeated"]]


def advance(state: State) -> list[Event]:
    """Hand the turn on: skip defeated characters; one with 0 AP or less refreshes instead of acting."""
    events: list[Event] = []
    order = state["order"]
    if not order:
        state["actor"] = None
        return events
    idx = state["turn_index"]
    if any(can_ever_act(state["combatants"][cid]) for cid in order):
        # A debt deeper than one allowance takes several refresh turns, and the order goes on through
        # them (ruling B&B-2). After a whole pass in which nobody could act, the further passes in
        # which everybody only refreshes are counted at once; someone acts within two passes after.
        for _ in range(4):
            for _ in range(len(order)):
                idx = (idx + 1) % len(order)
                cid = order[idx]
                c = state["combatants"][cid]
                if not can_ever_act(c):
                    continue
                state["turn"] += 1
                if c["ap"] >= 1:
                    state["turn_index"] = idx
                    state["actor"] = cid
                    events.append(event("turn.started", f"{c['name']} acts ({ap_words(c['ap'])}).", combatant=cid,
                                        ap=c["ap"], turn=state["turn"]))
                    return events
                before = c["ap"]
                c["ap"] += c["ap_max"]
                events.append(event("ap.refreshed", f"{c['name']} is out of action points and recovers {c['ap_max']} "
                                    f"({before} to {c['ap']}).", combatant=cid, before=before, ap=c["ap"],
                                    turn=state["turn"]))
            events += refresh_passes(state)
    state["turn_index"] = idx
    state["actor"] = None
    events.append(event("turn.stalled", "Nobody can act: every character in play has no action points to gain."))
    return events


def refresh_passes(state: State) -> list[Event]:
    """After a whole pass of the order in which everybody refreshed: the further whole passes in which
    nobody reaches 1 AP yet, taken at once (each of them one refresh turn for every character)."""
    waiting = [state["combatants"][cid] for cid in state["order"] if can_ever_act(state["combatants"][cid])]
    if not waiting or any(c["ap"] >= 1 for c in waiting):
        return []
    # refreshes each still needs to reach 1 AP; whole passes before the first of them gets there
    passes = min(-(-(1 - c["ap"]) // c["ap_max"]) for c in waiting) - 1
    if passes <= 0:
        return []
    events: list[Event] = []
    for c in waiting:
        before = c["ap"]
        c["ap"] += passes * c["ap_max"]
        state["turn"] += passes
        events.append(event("ap.refreshed", f"{c['name']} is still in debt and recovers {c['ap_max']} in each of "
                            f"{passes} more refresh turns ({before} to {c['ap']}).", combatant=c["id"], before=before,
                            ap=c["ap"], turn=state["turn"], turns=passes))
    return events


def can_ever_act(c: Mapping[str, Any]) -> bool:
    """In play and either holding a point now or gaining some at a refresh (Speed 0 never does)."""
    return not c["defeated"] and (c["ap"] >= 1 or c["ap_max"] > 0)


def next_actor(state: Mapping[str, Any]) -> str | None:
    line = timeline(state)
    for entry in line[1:]:
        if entry["kind"] == "act":
            actor: str = entry["combatant"]
            return actor
    return None


def timeline(state: Mapping[str, Any], length: int = TIMELINE_LENGTH) -> list[dict[str, Any]]:
    """The coming turns, starting with the one under way, guessing that each acting turn is an attack."""
    order = state["order"]
    if state["status"] != "active" or not state["actor"]:
        return []
    ap = {cid: c["ap"] for cid, c in state["combatants"].items()}
    if not any(can_ever_act(state["combatants"][cid]) for cid in order):
        return []
    out: list[dict[str, Any]] = []
    idx = state["turn_index"]
    guard = 0
    while len(out) < length and guard < length * len(order) * 50:
        guard += 1
        cid = order[idx]
        c = state["combatants"][cid]
        idx = (idx + 1) % len(order)
        if c["defeated"] or (ap[cid] < 1 and c["ap_max"] <= 0):
            continue
        before = ap[cid]
        if before >= 1:
            ap[cid] = before - c["attack_cost"]
            out.append({"combatant": cid, "name": c["name"], "kind": "act", "ap": before, "after": ap[cid]})
        else:
            ap[cid] = before + c["ap_max"]
            out.append({"combatant": cid, "name": c["name"], "kind": "refresh", "ap": before, "after": ap[cid]})
    return out


def check_outcome(state: State) -> list[Event]:
    if state["status"] != "active" or len(state["sides_in_play"]) < 2:
        return []
    standing = sorted({state["combatants"][cid]["side"] for cid in living(state)})
    if len(standing) > 1:
        return []
    winner = standing[0] if standing else None
    state["status"] = "ended"
    state["actor"] = None
    if winner:
        names = ", ".join(state["combatants"][cid]["name"] for cid in living(state))
        text = f"The battle is over: side {winner} holds the field ({names})."
    else:
        text = "The battle is over: nobody is left standing."
    state["outcome"] = {"winner": winner, "text": text}
    return [event("battle.ended", text, winner=winner)]


def after_gm_change(state: State) -> list[Event]:
    """After a GM tool changed numbers: end the battle if a side is gone, or hand the turn on when the
    one acting was put out of play, or restart the clock when it had stalled."""
    events = check_outcome(state)
    if state["status"] != "active" or not state["order"]:
        return events
    actor = state["actor"]
    if (actor and state["combatants"][actor]["defeated"]) or (
        actor is None and any(can_ever_act(state["combatants"][cid]) for cid in state["order"])
    ):
        events += advance(state)
    return events

