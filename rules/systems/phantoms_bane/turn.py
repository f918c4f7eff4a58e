"""A turn of Phantom's Bane: the secret choices, then the resolution (ruling 5's dice order).

Every function here changes the state it is given (the system's ``apply`` hands them its copy).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules import read
from rules.core import GM_ONLY, Event, State, clone, event, owner_visibility, require
from rules.dice import DiceSource, Roll
from rules.errors import IllegalDeclaration, InvalidDeclaration
from rules.physical import rolled_by

from .computer import BY_COMPUTER, SETTLE, computer_pick
from .data import OPTION_LABELS, OPTION_VERBS, OPTIONS
from .ratings import capped, gear_bonus, half, opponent


def set_escape(state: State, declaration: Mapping[str, Any]) -> list[Event]:
    possible = require(declaration, "possible", bool, "possible (true or false)")
    state["escape_possible"] = possible
    text = (
        "The GM allows running away again." if possible else "The GM rules that running away cannot succeed."
    )
    return [event("escape.ruled", text, visibility=GM_ONLY, possible=possible)]


def choose(state: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
    cid = read.combatant(declaration, "combatant", state)
    if declaration.get(BY_COMPUTER):
        return state, computer_choose(state, cid, declaration, dice)
    option = declaration.get("option")
    if option not in OPTIONS:
        raise InvalidDeclaration(f"option must be one of {', '.join(OPTIONS)} (got {option!r})")
    combatant = state["combatants"][cid]
    changed = state["choices"][cid] is not None
    state["choices"][cid] = option
    state["chosen_by"][cid] = "declared"
    name = combatant["name"]
    events = [
        event("choice.made", f"{name} has chosen.", combatant=cid, changed=changed),
        event(
            "choice.made",
            f"{name} will {OPTION_LABELS[option].lower()} this turn" + (" (changed)." if changed else "."),
            visibility=owner_visibility(cid) if combatant["controller"] == "seat" else GM_ONLY,
            combatant=cid,
            option=option,
            changed=changed,
        ),
    ]
    if all(state["choices"][c] is not None for c in state["order"]):
        events += resolve_and_continue(state, dice)
    return state, events


def computer_choose(state: State, cid: str, declaration: Mapping[str, Any], dice: DiceSource) -> list[Event]:
    """The computer's own choice for ``cid`` (computer.py: :func:`next_choice` names it, the engine
    applies it): its pick, then the turn settled if ``settle`` and both have chosen now."""
    if state["choices"][cid] is not None:
        raise IllegalDeclaration(f"{state['combatants'][cid]['name']} has already chosen")
    events = computer_pick(state, cid, dice)
    if declaration.get(SETTLE) and all(state["choices"][c] is not None for c in state["order"]):
        events += resolve_and_continue(state, dice)
    return events


def start_turn(state: State) -> list[Event]:
    state["choices"] = {cid: None for cid in state["order"]}
    state["chosen_by"] = {cid: None for cid in state["order"]}
    turn = state["turn"]
    # the computer's combatants choose next, through the engine's loop (computer.py: next_choice)
    return [event("turn.started", f"Turn {turn} begins: both sides choose in secret.", turn=turn)]


# --- the computer opponent -----------------------------------------------------------------------


def resolve_and_continue(state: State, dice: DiceSource) -> list[Event]:
    events = resolve_turn(state, dice)
    if state["status"] == "active":
        state["turn"] += 1
        events += start_turn(state)
    return events


def resolve_turn(state: State, dice: DiceSource) -> list[Event]:
    """Settle the current turn from both recorded choices (mutates ``state``)."""
    a, b = state["order"]
    cs = state["combatants"]
    names = {cid: cs[cid]["name"] for cid in (a, b)}
    chosen = {cid: state["choices"][cid] for cid in (a, b)}
    turn = state["turn"]
    events: list[Event] = []
    breakdown: dict[str, Any] = {
        "turn": turn,
        "options": dict(chosen),
        "effective": dict(chosen),
        "escape": None,
        "dice": None,
        "totals": None,
        "damage": {cid: {"hits": 0, "penetration": 0, "counter": 0, "total": 0} for cid in (a, b)},
        "penetrations": [],
        "counters": [],
        "wear": [],
        "destroyed": [],
        "weakening": [],
        "defeated": [],
        "health": {},
        "text": "",
    }

    # 1. running away
    runners = [cid for cid in (a, b) if chosen[cid] == "run_away"]
    if runners:
        escaped, escape_events, escape_info = _resolve_escape(state, runners, chosen, dice)
        events += escape_events
        breakdown["escape"] = escape_info
        if escaped:
            for cid in escaped:
                cs[cid]["escaped"] = True
            who = " and ".join(names[cid] for cid in escaped)
            breakdown["text"] = f"{who} got away."
            breakdown["health"] = {cid: cs[cid]["health"] for cid in (a, b)}
            events.append(
                event(
                    "turn.resolved",
                    f"Turn {turn}: {who} got away; no blows were struck.",
                    turn=turn,
                    options=dict(chosen),
                    escaped=escaped,
                )
            )
            state["last_turn"] = breakdown
            _end_battle(state, events, escaped=escaped)
            return events
        for cid in runners:
            breakdown["effective"][cid] = "attack"
    effective = breakdown["effective"]

    # 2. the four combat dice, offence A, defence A, offence B, defence B
    rolls: dict[str, dict[str, Roll]] = {}
    for cid in (a, b):
        rolls[cid] = {
            "offence": rolled_by(dice, cid).roll(1, 6, f"{names[cid]} offence die"),
            "defence": rolled_by(dice, cid).roll(1, 6, f"{names[cid]} defence die"),
        }
    faces = {cid: {k: r.total for k, r in rolls[cid].items()} for cid in (a, b)}
    totals: dict[str, Any] = {}
    for cid in (a, b):
        c = cs[cid]
        option = effective[cid]
        off_mod = (
            half(c["offence"]) if option == "press" else -half(c["offence"]) if option == "defend" else 0
        )
        def_mod = (
            -half(c["defence"]) if option == "press" else half(c["defence"]) if option == "defend" else 0
        )
        weapon = capped(gear_bonus(c["weapon"]), c["offence"])
        armour = capped(gear_bonus(c["armour"]), c["defence"])
        totals[cid] = {
            "offence": {
                "die": faces[cid]["offence"],
                "attribute": c["offence"],
                "modifier": off_mod,
                "gear": weapon,
                "total": faces[cid]["offence"] + c["offence"] + off_mod + weapon,
            },
            "defence": {
                "die": faces[cid]["defence"],
                "attribute": c["defence"],
                "modifier": def_mod,
                "gear": armour,
                "total": faces[cid]["defence"] + c["defence"] + def_mod + armour,
            },
        }
    breakdown["dice"] = faces
    breakdown["dice_order"] = [
        faces[a]["offence"],
        faces[a]["defence"],
        faces[b]["offence"],
        faces[b]["defence"],
    ]
    breakdown["totals"] = totals

    def describe(cid: str) -> str:
        t = totals[cid]
        return f"{names[cid]} ({OPTION_LABELS[effective[cid]].lower()}) offence {t['offence']['total']}, defence {t['defence']['total']}"

    events.append(
        event(
            "turn.resolved",
            f"Turn {turn}: dice {' '.join(str(f) for f in breakdown['dice_order'])}. {describe(a)}; {describe(b)}.",
            rolls=[rolls[a]["offence"], rolls[a]["defence"], rolls[b]["offence"], rolls[b]["defence"]],
            turn=turn,
            options=dict(chosen),
            effective=dict(effective),
            dice=breakdown["dice_order"],
            totals=clone(totals),
        )
    )

    # 3. ordinary damage
    for attacker in (a, b):
        target = opponent(state, attacker)
        margin = totals[attacker]["offence"]["total"] - totals[target]["defence"]["total"]
        if margin > 0:
            breakdown["damage"][target]["hits"] = margin
            events.append(
                event(
                    "damage.dealt",
                    f"{names[attacker]} wounds {names[target]} for {margin}.",
                    attacker=attacker,
                    target=target,
                    amount=margin,
                )
            )

    # 4. penetrations (A then B), then counters (A then B)
    # (kind, the scorer's die, the other's die, the option that doubles it, breakdown list, event, wording)
    extra_damage = (
        ("penetration", "offence", "defence", "press", "penetrations", "penetration.scored", "gets through {}'s guard", " while pressing"),
        ("counter", "defence", "offence", "defend", "counters", "counter.scored", "counters {}", " from a defensive stance"),
    )
    for kind, own_die, other_die, doubling, listing, event_type, wording, stance in extra_damage:
        for scorer in (a, b):
            target = opponent(state, scorer)
            if faces[scorer][own_die] != 6 or faces[target][other_die] != 1:
                continue
            doubled = effective[scorer] == doubling
            half_dice = [rolled_by(dice, scorer).randint(1, 3, f"{names[scorer]} {kind} half-die") for _ in range(2 if doubled else 1)]
            amount = sum(r.total for r in half_dice)
            breakdown["damage"][target][kind] += amount
            breakdown[listing].append(
                {"by": scorer, "on": target, "half_dice": [r.total for r in half_dice], "amount": amount, "doubled": doubled}
            )
            text = f"{names[scorer]} {wording.format(names[target])}{stance if doubled else ''}: {amount} extra damage."
            events.append(
                event(event_type, text, rolls=half_dice, attacker=scorer, target=target, amount=amount, doubled=doubled)
            )

    # 5. health, then wear on armour (penetrations) and weapons (counters)
    for cid in (a, b):
        dmg = breakdown["damage"][cid]
        dmg["total"] = dmg["hits"] + dmg["penetration"] + dmg["counter"]
        cs[cid]["health"] -= dmg["total"]
    for cid in (a, b):
        events += _wear(cs[cid], cid, "armour", breakdown["damage"][cid]["penetration"], turn, breakdown)
    for cid in (a, b):
        events += _wear(cs[cid], cid, "weapon", breakdown["damage"][cid]["counter"], turn, breakdown)

    # 6. defeat, or weakening when both still stand
    fallen = [cid for cid in (a, b) if cs[cid]["health"] <= 0]
    if not fallen:
        for cid in (a, b):
            events += _weaken(cs[cid], cid, turn, breakdown)
        fallen = [cid for cid in (a, b) if cs[cid]["health"] <= 0]
    for cid in fallen:
        cs[cid]["defeated"] = True
        breakdown["defeated"].append(cid)
        events.append(
            event(
                "combatant.defeated", f"{names[cid]} is defeated (Health {cs[cid]['health']}).", combatant=cid
            )
        )
    breakdown["health"] = {cid: cs[cid]["health"] for cid in (a, b)}
    breakdown["text"] = _summary(breakdown, names)
    state["last_turn"] = breakdown
    if fallen:
        _end_battle(state, events, defeated=fallen)
    return events


def _resolve_escape(
    state: State, runners: list[str], chosen: Mapping[str, str], dice: DiceSource
) -> tuple[list[str], list[Event], dict[str, Any]]:
    cs = state["combatants"]
    names = {cid: cs[cid]["name"] for cid in state["order"]}
    events: list[Event] = []
    info: dict[str, Any] = {
        "runners": list(runners),
        "automatic": False,
        "impossible": False,
        "rolls": {},
        "escaped": [],
    }
    for cid in runners:
        other = opponent(state, cid)
        events.append(
            event(
                "escape.attempted",
                f"{names[cid]} tries to run away while {names[other]} {OPTION_VERBS[chosen[other]]}.",
                combatant=cid,
                other_option=chosen[other],
            )
        )
    if not state.get("escape_possible", True):
        info["impossible"] = True
        for cid in runners:
            events.append(
                event(
                    "escape.failed",
                    f"{names[cid]} finds no way out and must fight.",
                    combatant=cid,
                    impossible=True,
                )
            )
        return [], events, info
    runner = runners[0]
    other = opponent(state, runner)
    if len(runners) == 2 or chosen[other] == "defend":
        info["automatic"] = True
        info["escaped"] = list(runners)
        for cid in runners:
            events.append(
                event("escape.succeeded", f"{names[cid]} gets away.", combatant=cid, automatic=True)
            )
        return list(runners), events, info
    r, o = cs[runner], cs[other]
    run_roll = rolled_by(dice, runner).roll(2, 6, f"{names[runner]} disengagement")
    hold_roll = rolled_by(dice, other).roll(2, 6, f"{names[other]} engagement")
    run_total = run_roll.total + r["defence"] + r["skill"]
    hold_total = hold_roll.total + o["offence"] + o["skill"]
    info["rolls"] = {
        runner: {
            "faces": list(run_roll.faces),
            "attribute": r["defence"],
            "skill": r["skill"],
            "total": run_total,
        },
        other: {
            "faces": list(hold_roll.faces),
            "attribute": o["offence"],
            "skill": o["skill"],
            "total": hold_total,
        },
    }
    detail = f"{names[runner]} {run_total} against {names[other]} {hold_total}"
    if run_total > hold_total:
        info["escaped"] = [runner]
        events.append(
            event(
                "escape.succeeded",
                f"{names[runner]} gets away ({detail}).",
                rolls=[run_roll, hold_roll],
                combatant=runner,
                automatic=False,
                disengagement=run_total,
                engagement=hold_total,
            )
        )
        return [runner], events, info
    events.append(
        event(
            "escape.failed",
            f"{names[runner]} cannot break away ({detail}) and must attack.",
            rolls=[run_roll, hold_roll],
            combatant=runner,
            impossible=False,
            disengagement=run_total,
            engagement=hold_total,
        )
    )
    return [], events, info


def _wear(
    c: dict[str, Any], cid: str, slot: str, amount: int, turn: int, breakdown: dict[str, Any]
) -> list[Event]:
    """Armour loses penetration damage, a weapon loses counter damage (from its real bonus, floor 0)."""
    item = c.get(slot)
    if not amount or not item or item["bonus"] <= 0:
        return []
    before = item["bonus"]
    item["bonus"] = max(0, before - amount)
    destroyed = item["bonus"] == 0 and not item["natural"]
    breakdown["wear"].append(
        {
            "combatant": cid,
            "item": slot,
            "name": item["name"],
            "before": before,
            "after": item["bonus"],
            "destroyed": destroyed,
        }
    )
    events = [
        event(
            f"{slot}.worn",
            f"{c['name']}'s {item['name']} drops from +{before} to +{item['bonus']}.",
            combatant=cid,
            item=item["name"],
            before=before,
            after=item["bonus"],
        )
    ]
    if destroyed:
        c[slot] = None
        c["destroyed"].append(
            {"item": slot, "name": item["name"], "max_bonus": item["max_bonus"], "turn": turn}
        )
        breakdown["destroyed"].append({"combatant": cid, "item": slot, "name": item["name"]})
        events.append(
            event(
                f"{slot}.destroyed",
                f"{c['name']}'s {item['name']} is destroyed.",
                combatant=cid,
                item=item["name"],
            )
        )
    return events


def _weaken(c: dict[str, Any], cid: str, turn: int, breakdown: dict[str, Any]) -> list[Event]:
    """At the end of a turn: if the turns so far outnumber current Health, lose Defence, else Offence, else Health."""
    if turn <= c["health"]:
        return []
    attribute = "defence" if c["defence"] > 0 else "offence" if c["offence"] > 0 else "health"
    before = c[attribute]
    c[attribute] = before - 1
    breakdown["weakening"].append(
        {"combatant": cid, "attribute": attribute, "before": before, "after": before - 1}
    )
    return [
        event(
            "combatant.weakened",
            f"{c['name']} tires: {attribute.capitalize()} falls from {before} to {before - 1}.",
            combatant=cid,
            attribute=attribute,
            before=before,
            after=before - 1,
        )
    ]


def _summary(breakdown: Mapping[str, Any], names: Mapping[str, str]) -> str:
    parts = []
    for cid, dmg in breakdown["damage"].items():
        if dmg["total"]:
            parts.append(f"{names[cid]} takes {dmg['total']}")
    if not parts:
        parts.append("nobody is hurt")
    for w in breakdown["weakening"]:
        parts.append(f"{names[w['combatant']]} weakens")
    return "; ".join(parts).capitalize() + "."


def _end_battle(
    state: State, events: list[Event], *, defeated: list[str] | None = None, escaped: list[str] | None = None
) -> None:
    cs = state["combatants"]
    state["status"] = "ended"
    state["choices"] = {cid: None for cid in state["order"]}
    outcome: dict[str, Any] = {
        "result": "",
        "winner": None,
        "winner_side": None,
        "defeated": list(defeated or []),
        "escaped": list(escaped or []),
        "turn": state["turn"],
        "text": "",
    }
    if escaped:
        outcome["result"] = "escape"
        who = " and ".join(cs[cid]["name"] for cid in escaped)
        outcome["text"] = f"{who} escaped; the duel is over with no winner."
    elif defeated and len(defeated) == 2:
        outcome["result"] = "draw"
        outcome["text"] = "Both combatants fell: the duel is a draw."
    elif defeated:
        winner = opponent(state, defeated[0])
        outcome.update(result="victory", winner=winner, winner_side=cs[winner]["side"])
        outcome["text"] = f"{cs[winner]['name']} wins the duel."
    state["outcome"] = outcome
    events.append(event("battle.ended", outcome["text"], **{k: v for k, v in outcome.items() if k != "text"}))
