"""Resolution (phase 8) and the end of a round (phases 9 to 11): each action as it comes, attacks and
damage, spells, charges, prepared actions, bleeding and the recap."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ...core import GM_ONLY, PUBLIC, Event, State, event, told
from ...dice import DiceSource
from ...errors import IllegalDeclaration
from ...physical import rolled_by
from .charges import arrival_of, move_beside, move_toward, retaliators_of
from .combatants import (
    able,
    condition_after,
    condition_word,
    decl_visibility,
    missile_of,
    name_of,
    standing_by_side,
    stats_visibility,
    surprising_side,
    weapon_of,
)
from .data import FEET_PER_INCH, MISSILES, SIDES, WEAPONS, charge_per_segment_feet, parse_dice
from .declarations import open_declarations
from .segments import told_why


def resolve_group(state: State, group: list[dict[str, Any]], dice: DiceSource,
                  events: list[Event]) -> None:
    state["last_key"] = list(group[0]["key"])
    shown = [a for a in group if not (a["prepared"] and not a.get("triggered"))]
    if len(shown) > 1:
        names = ", ".join(name_of(a["combatant"], state) for a in shown)
        events.append(event("actions.simultaneous", f"At the same moment: {names}. All of it happens.",
                            combatants=[a["combatant"] for a in shown]))
    hits: list[tuple[str, int, str]] = []
    finishing = {a["combatant"] for a in group if a["kind"] == "spell"}
    able_at_start = {a["combatant"]: able(state["combatants"][a["combatant"]]) for a in group}
    for a in group:
        c = state["combatants"][a["combatant"]]
        if not able_at_start[a["combatant"]]:
            a["status"] = "lost"
            events.append(event("action.lost", f"{c['name']} is {c['condition']}: the action is lost.",
                                combatant=a["combatant"], action=a["id"]))
            continue
        if a["prepared"] and not a.get("triggered"):
            a["status"] = "readied"
            events.append(event("action.readied", f"{c['name']} is ready to act: {a['label']}.",
                                visibility=decl_visibility(state, a["combatant"]),
                                combatant=a["combatant"], action=a["id"]))
            continue
        a["status"] = "resolved"
        resolve_action(state, a, dice, events, hits)
    for target, amount, source in hits:
        deal_damage(state, target, amount, source, events, spare=finishing)


def resolve_action(state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                   hits: list[tuple[str, int, str]]) -> None:
    cid, kind = a["combatant"], a["kind"]
    c = state["combatants"][cid]
    why = why_text(a)
    data = {"combatant": cid, "action": a["id"], "letter": a["letter"], "segment": a["segment"], "why": a["why"]}
    if kind == "melee":
        w = weapon_of(c)
        events.append(event("action.resolved", f"{c['name']} strikes at {name_of(a['target'], state)}{why}.",
                            **data))
        for amount in attack(state, cid, a["target"], w["label"].lower(), w["damage"], a["attacks"],
                                   c["to_hit_bonus"], c["damage_bonus"], dice, events):
            hits.append((a["target"], amount, c["name"]))
    elif kind == "missile":
        m = missile_of(c)
        shoots = f"{c['name']} shoots {m['rate']} time{'s' if m['rate'] > 1 else ''} at {name_of(a['target'], state)} ({m['label'].lower()})"
        why_told = why_text(a, told=True)  # an NPC's reaction adjustment is the DM's
        events.append(event("action.resolved", f"{shoots}{why}.", visibility=PUBLIC if why_told == why else GM_ONLY,
                            others=told(f"{shoots}{why_told}.", **{**data, "why": told_why(a)}), **data))
        for amount in attack(state, cid, a["target"], m["label"].lower(), m["damage"], m["rate"],
                                   c["to_hit_bonus"], 0, dice, events):
            hits.append((a["target"], amount, c["name"]))
    elif kind == "charge":
        resolve_charge(state, a, dice, events, why)
    elif kind == "spell":
        resolve_spell(state, a, dice, events, hits, why)
    elif kind == "flee":
        c["condition"] = "fled"
        if surprising_side(state) and state["scale"] == "outdoors":
            why = " (outdoors, with the foe surprised, the encounter is simply avoided)"
        verb = {"retreat": "disengages and retreats from the fight",
                "panic": "flees the fight in panic"}.get(a.get("morale") or "", "flees the fight")
        events.append(event("combatant.fled", f"{c['name']} {verb}{why}.", **data))
    elif kind == "move":
        if a.get("x") is not None:
            c["x"], c["y"] = a["x"], a["y"]
            text = f"{c['name']} moves to square {a['x']}, {a['y']}{why}."
        else:
            text = f"{c['name']} moves (the DM places the token){why}."
        events.append(event("combatant.moved", text, **data))
    elif kind == "turn":
        roll = rolled_by(dice, cid).roll(1, 20, f"{c['name']} turns undead")
        events.append(event("turning.attempted",
                            f"{c['name']} presents a holy symbol to {name_of(a['target'], state)} and rolls "
                            f"{roll.total}; the DM reads the turning table{why}.", rolls=[roll], **data))
    elif kind in ("device", "custom") and surprising_side(state) and a.get("segments", 1) > 1:
        remaining = a["segments"] - 1
        state["casting"][cid] = {"kind": kind, "spell": "a task", "remaining": remaining, "note": a.get("note", "")}
        events.append(event("task.started", f"{c['name']} {'carries on' if a.get('continuing') else 'starts'} "
                                            f"{'using a device' if kind == 'device' else 'a task'}: {remaining} more "
                                            f"segment{'s' if remaining > 1 else ''} to go.", **data))
    else:
        if kind in ("device", "custom"):
            state["casting"].pop(cid, None)
        words = {"psionic": "psionic combat", "parley": "calls for a parley", "await": "waits and watches",
                 "device": "uses a device", "custom": "finishes the task", "set": "sets a weapon against "
                 "a charge"}.get(kind, kind)
        noted = f" ({a['note']})" if a.get("note") else ""
        private = bool(noted) and c["controller"] != "seat"  # the DM's note on an NPC's action
        events.append(event("action.resolved", f"{c['name']} {words}{noted}{why}.", visibility=GM_ONLY if private else PUBLIC,
                            others=told(f"{c['name']} {words}{why}.", **data), **data))


def why_text(a: Mapping[str, Any], *, told: bool = False) -> str:
    """The reasons after an action's first, for its log line (``told``: as the table hears them)."""
    extra = [w for w in (told_why(a) if told else a["why"])[1:] if w]
    return f" ({'; '.join(extra)})" if extra else ""


def attack(state: State, cid: str, target: str, with_what: str, damage: str, count: int,
           to_hit: int, bonus: int, dice: DiceSource, events: list[Event]) -> list[int]:
    c, t = state["combatants"][cid], state["combatants"][target]
    if t["condition"] in ("dead", "fled"):
        events.append(event("attack.wasted", f"{t['name']} is {t['condition']}: {c['name']}'s attack finds "
                                             "nobody.", attacker=cid, target=target))
        return []
    if t["condition"] == "surrendered":
        shot = with_what in {m["label"].lower() for m in MISSILES.values()}
        events.append(event("attack.held", f"{t['name']} has surrendered: {c['name']} holds "
                                           f"{'fire' if shot else 'the blow'}.", attacker=cid, target=target))
        return []
    need = c["thac0"] - t["ac"]
    # the number needed tells an NPC's THAC0 or AC: the whole line for the DM when either is one
    shown = stats_visibility(state, cid, target)
    n, sides, mod = parse_dice(damage)
    dealt = []
    for _ in range(count):
        roll = rolled_by(dice, cid).roll(1, 20, f"{c['name']} attacks {t['name']}", to_hit)
        if roll.total >= need:
            dmg = rolled_by(dice, cid).roll(n, sides, f"{c['name']}'s {with_what} damage", mod + bonus)
            amount = max(1, dmg.total)
            dealt.append(amount)
            hit = f"{c['name']} hits {t['name']} with the {with_what}: "
            events.append(event("attack.hit", f"{hit}{roll.total} against {need} needed, {amount} damage.", visibility=shown,
                                others=told(f"{hit}rolled {roll.total}, {amount} damage.", rolls=[roll, dmg], attacker=cid, target=target,
                                            damage=amount),
                                rolls=[roll, dmg], attacker=cid, target=target, damage=amount))
        else:
            miss = f"{c['name']} misses {t['name']}: "
            events.append(event("attack.missed", f"{miss}{roll.total} against {need} needed.", visibility=shown,
                                others=told(f"{miss}rolled {roll.total}.", rolls=[roll], attacker=cid, target=target),
                                rolls=[roll], attacker=cid, target=target))
    return dealt


def deal_damage(state: State, target: str, amount: int, source: str, events: list[Event],
                spare: set[str] | frozenset[str] = frozenset()) -> None:
    t = state["combatants"][target]
    if t["condition"] in ("dead", "fled"):
        return
    before = t["hp"]
    t["hp"] -= amount
    t["stable"] = False
    words = condition_after(state, target)
    # an NPC's hit points are the DM's: the table hears the damage and what it did
    events.append(event("damage.dealt", f"{t['name']} takes {amount} damage from {source} "
                                        f"({before} to {t['hp']}){words}.", visibility=stats_visibility(state, target),
                        others=told(f"{t['name']} takes {amount} damage from {source}{words}.", combatant=target, amount=amount),
                        combatant=target, amount=amount, hp=t["hp"]))
    if target in spare:
        return
    lost = [a for a in state["queue"] if a["combatant"] == target and a["kind"] == "spell"
            and a["status"] in ("pending", "readied")]
    for a in lost:
        a["status"] = "lost"
        a["why"].append("the caster was hurt before the spell was done")
        events.append(event("spell.lost", f"{t['name']} is hurt before {a.get('spell', 'the spell')} is "
                                          "done: the spell is lost.", combatant=target, action=a["id"]))
    if target in state["casting"] and not lost:
        spell = state["casting"].pop(target)
        events.append(event("spell.lost", f"{t['name']} is hurt while casting {spell['spell']}: the spell is "
                                          "lost.", combatant=target))
    elif target in state["casting"]:
        state["casting"].pop(target)


def resolve_spell(state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                  hits: list[tuple[str, int, str]], why: str) -> None:
    cid = a["combatant"]
    c = state["combatants"][cid]
    data = {"combatant": cid, "action": a["id"], "letter": "D", "segment": a["segment"], "why": a["why"]}
    if surprising_side(state) and a["casting_time"] > 1:
        remaining = a["casting_time"] - 1
        state["casting"][cid] = {"spell": a["spell"], "target": a.get("target"), "damage": a.get("damage", ""),
                                 "remaining": remaining}
        verb = "keeps casting" if a.get("continuing") else "begins to cast"
        events.append(event("spell.started", f"{c['name']} {verb} {a['spell']}: {remaining} more "
                                             f"segment{'s' if remaining > 1 else ''} to go.", **data))
        return
    state["casting"].pop(cid, None)
    target = a.get("target")
    at = f" at {name_of(target, state)}" if target else ""
    events.append(event("spell.completed", f"{c['name']}'s {a['spell']} goes off{at}{why}.", **data))
    if a.get("damage") and target:
        n, sides, mod = parse_dice(a["damage"])
        roll = rolled_by(dice, cid).roll(n, sides, f"{c['name']}'s {a['spell']}", mod)
        amount = max(1, roll.total)
        events.append(event("spell.damaged", f"{a['spell']} deals {amount} damage to {name_of(target, state)}.",
                            rolls=[roll], combatant=cid, target=target, damage=amount))
        hits.append((target, amount, f"{c['name']}'s {a['spell']}"))


def resolve_charge(state: State, a: dict[str, Any], dice: DiceSource, events: list[Event],
                   why: str) -> None:
    cid, target = a["combatant"], a["target"]
    c, t = state["combatants"][cid], state["combatants"][target]
    data = {"combatant": cid, "action": a["id"], "letter": "E", "segment": a["segment"], "why": a["why"]}
    if t["condition"] in ("dead", "fled"):
        events.append(event("charge.wasted", f"{c['name']} charges, but {t['name']} is {t['condition']}.",
                            **data))
        return
    surprise = bool(surprising_side(state))
    limit = 1 if surprise else max(1, 10 - a["delay"])
    arrival = arrival_of(state, cid, target, limit)
    if arrival is None:
        segs = limit
        move_toward(state, cid, target, Fraction(charge_per_segment_feet(c["move"], state["scale"]) * segs,
                                                       FEET_PER_INCH[state["scale"]]))
        events.append(event("charge.fell_short", f"{c['name']} charges {t['name']} but does not reach "
                                                 f"striking range this {'segment' if surprise else 'round'}.",
                            **data))
        return
    move_beside(state, cid, target)
    seg = arrival + (0 if surprise else a["delay"])
    seg = max(seg, a["segment"]) if not surprise else seg
    why = why_text({"why": [w for w in a["why"] if not w.startswith("reaches striking")]})
    events.append(event("charge.arrived", f"{c['name']} charges {t['name']} and reaches striking range in "
                                          f"segment {seg}{why}.", **data))
    fighters = [(cid, target)] + [(r, cid) for r in retaliators_of(state, cid, target, spend=True)]
    lengths = sorted({Fraction(str(WEAPONS[state["combatants"][f]["weapon"]]["length"])) for f, _ in fighters},
                     reverse=True)
    if len(fighters) > 1:
        order = "; ".join(
            f"{name_of(f, state)} ({WEAPONS[state['combatants'][f]['weapon']]['label'].lower()}, "
            f"{float(Fraction(str(WEAPONS[state['combatants'][f]['weapon']]['length']))):g} ft)"
            for f, _ in sorted(fighters, key=lambda p: -Fraction(str(
                WEAPONS[state["combatants"][p[0]]["weapon"]]["length"]))))
        events.append(event("charge.met", f"Blows against the charge go by weapon length, longest first: "
                                          f"{order}.", combatant=cid))
    ready = {f: f == cid or able(state["combatants"][f]) for f, _ in fighters}
    for length in lengths:
        hits: list[tuple[str, int, str]] = []
        for f, foe in fighters:
            fc = state["combatants"][f]
            if Fraction(str(WEAPONS[fc["weapon"]]["length"])) != length or not ready[f]:
                continue
            w = weapon_of(fc)
            for amount in attack(state, f, foe, w["label"].lower(), w["damage"], 1, fc["to_hit_bonus"],
                                       fc["damage_bonus"], dice, events):
                hits.append((foe, amount, fc["name"]))
        for foe, amount, source in hits:
            deal_damage(state, foe, amount, source, events)
            if not able(state["combatants"][foe]):
                ready[foe] = False


def end_resolution(state: State, dice: DiceSource, events: list[Event]) -> None:
    for a in state["queue"]:
        if a["status"] == "readied":
            a["status"] = "lapsed"
            events.append(event("action.lapsed", f"{name_of(a['combatant'], state)}'s prepared action was never "
                                                 "triggered.", visibility=decl_visibility(state, a["combatant"]),
                                combatant=a["combatant"]))
    sur = state["surprise"]
    if surprising_side(state):
        if sur["segment"] < sur["segments"]:
            sur["segment"] += 1
            events.append(event("surprise.segment_started", f"Surprise segment {sur['segment']} of "
                                                            f"{sur['segments']}."))
        else:
            sur["segment"] = 0
            state["round"] = 1
            events.append(event("surprise.ended", "The surprise is over. Round 1 begins."))
        open_declarations(state, dice, events, in_resolution=True)  # the computer declares inline (declarations.py)
        return
    state["phase"] = "bleeding"
    events.append(event("resolution.finished", f"Every action of round {state['round']} is resolved."))


def find_act(state: State, cid: str, statuses: tuple[str, ...]) -> dict[str, Any]:
    acts: list[dict[str, Any]] = [a for a in state["queue"] if a["combatant"] == cid and a["status"] in statuses]
    if not acts:
        raise IllegalDeclaration(f"{name_of(cid, state)} has no action that can be {'triggered' if statuses == ('readied',) else 'called off'} now")
    return acts[0]


# --- phases 9 and 10: bleeding and the recap -------------------------------------------------
def who_bleeds(state: State) -> list[str]:
    at_zero = state["options"].get("bleed_at_zero")
    out = []
    for cid in state["order"]:
        c = state["combatants"][cid]
        start = state["round_start_hp"].get(cid, c["hp"])
        if c["condition"] == "down" and not c["stable"] and (start < 0 or (at_zero and start <= 0)):
            out.append(cid)
    return out


def make_recap(state: State) -> None:
    skip = {"declaration.made", "declaration.noted", "clock.paused", "clock.resumed", "recap.ready",
            "declarations.closed", "action.resolved", "actions.simultaneous"}
    lines = [dict(e) for e in state["round_log"] if e["type"] not in skip]
    for side in SIDES:
        members = [c for c in (state["combatants"][k] for k in state["order"]) if c["side"] == side]
        public = ", ".join(f"{c['name']} {condition_word(c)}" for c in members)
        lines.append({"type": "side.summary", "text": f"Side {side}: {public}.", "visibility": PUBLIC})
        hidden = [c for c in members if c["controller"] != "seat"]
        if hidden:
            hp = ", ".join(f"{c['name']} {c['hp']}/{c['hp_max']} hp" for c in hidden)
            lines.append({"type": "side.summary", "text": f"(DM) side {side}: {hp}.", "visibility": GM_ONLY})
    standing = standing_by_side(state)
    decided = [s for s, n in standing.items() if n == 0]
    if decided:
        lines.append({"type": "battle.decided", "text": "One side can fight no more: time to end the encounter.",
                      "visibility": PUBLIC})
    state["recap"] = {"round": state["round"], "lines": lines}
