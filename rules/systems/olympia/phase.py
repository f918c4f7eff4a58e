"""Resolving an Olympia phase: the strikes of both sides, the fallen, the structures, the break and
the prisoners (the dice order is the package's docstring's). Every function changes the state it is given."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.core import Event, State, event
from rules.dice import DiceSource
from rules.physical import rolled_by

from . import army
from .army import Attackers, Slot
from .data import (
    KEY_HIGH,
    KIND,
    PAIR_RECORDS,
    PHASE_WORDS,
    PHASES,
    REPORT_KEEP,
    SIDES,
    SMALL_PAIR,
    STRUCTURE_DESTROYED_AT,
    STRUCTURES,
)


def next_phase(state: State, dice: DiceSource) -> list[Event]:
    """Resolve the next phase in which anyone can strike (empty phases are passed over)."""
    events: list[Event] = []
    idle = 0
    while state["status"] == "active":
        phase = state["next_phase"]
        if army.phase_has_attackers(state, phase):
            events += resolve_phase(state, phase, dice)
            move_pointer(state, phase, events)
            return events
        move_pointer(state, phase, events)
        idle += 1
        if idle > len(PHASES):
            text = "The battle ends in a tie: neither side can harm the other."
            outcome: dict[str, Any] = {"winner": None, "result": "tie", "broken": [], "reason": "neither side can harm the other", "text": text}
            state["status"] = "ended"
            state["outcome"] = outcome
            events.append(event("battle.ended", text, **{k: v for k, v in outcome.items() if k != "text"}))
    return events


def move_pointer(state: State, phase: str, events: list[Event]) -> None:
    if state["status"] != "active":
        return
    if phase == "volley" or phase == PHASES[-1]:
        state["round"] += 1
        state["next_phase"] = PHASES[0]
        events.append(event("round.started", f"Round {state['round']} begins.", round=state["round"]))
    else:
        state["next_phase"] = PHASES[PHASES.index(phase) + 1]


def resolve_phase(state: State, phase: str, dice: DiceSource) -> list[Event]:
    opts = state["options"]
    sides = list(SIDES)
    slots = {s: army.slots(state, s) for s in sides}
    hits: dict[str, list[np.ndarray]] = {s: [] for s in sides}
    siege_hits: dict[str, int] = dict.fromkeys(sides, 0)
    plain_hits: dict[str, int] = dict.fromkeys(sides, 0)
    strikes: list[dict[str, Any]] = []
    rolls: list[dict[str, Any]] = []
    round_no = state["round"]
    title = f"Round {round_no}, {PHASE_WORDS[phase]}" if phase != "volley" else "Opening volley"

    def strike(side: str, att: Attackers, reach: str, cap: int | None, who: str) -> None:
        enemy = army.other(side)
        if reach == "any":
            targets = list(range(len(slots[enemy])))
        else:
            targets = [
                i for i, s in enumerate(slots[enemy])
                if (s.what == "men" and s.row == 0) or (s.what == "noble" and s.exposed) or s.what == "structure"
            ]
        result = fire(att, [slots[enemy][i] for i in targets], cap, state, side, dice, f"{title}: {who}")
        hits[enemy].append(result["hit_index"])
        siege_hits[enemy] += result["siege_structure_hits"]
        plain_hits[enemy] += result["plain_structure_hits"]
        result["who"] = who
        result["side"] = side
        strikes.append(result)
        rolls.extend(result["rolls"])

    if phase == "special":
        specials = army.active_specials(state)
        order = list(range(len(specials)))
        if len(specials) > 1:
            keys = np.asarray(dice.integers(0, KEY_HIGH, len(specials), f"{title}: order of the special attacks"), dtype=np.int64)
            order = [int(i) for i in np.argsort(keys, kind="stable")]
        for i in order:
            sp = specials[i]
            sp["used"] += 1
            att = Attackers([sp["name"]], [None], [None], [4 * sp["rating"]], [sp["attacks"]])
            strike(sp["side"], att, sp["reach"], None, sp["name"])
    elif phase in ("missile", "volley"):
        for side in [opts["defender"]] if phase == "volley" else sides:
            att = army.missile_attackers(state, side)
            if sum(att.counts):
                # ruling Olympia-5: the firing side's own front-row men that could be targeted now
                # (a noble still covered by his men does not count)
                cap = army.targetable(slots[side])
                strike(side, att, "front", cap, f"the missile troops of {army.side_name(state, side)}")
    else:
        for side in sides:
            att = army.melee_attackers(state, side)
            if sum(att.counts):
                defenders = army.targetable(slots[army.other(side)])
                strike(side, att, "front", 4 * defenders, f"the front row of {army.side_name(state, side)}")

    # the fallen leave: every hit man dies once, each hit noble gets one wound, structures take damage
    losses: dict[str, dict[str, int]] = {s: {} for s in sides}
    events: list[Event] = []
    fallen_nobles: list[Event] = []
    for side in sides:
        side_slots = slots[side]
        per_slot: Any = []
        if side_slots:
            # every man hit at least once falls once: mark the hit men, count the marks per slot
            struck = np.zeros(side_slots[-1].start + side_slots[-1].count, dtype=bool)
            for index in hits[side]:
                struck[index] = True
            starts = np.asarray([s.start for s in side_slots], dtype=np.int64)
            per_slot = np.add.reduceat(struck, starts, dtype=np.int64)
        for slot, dead in zip(side_slots, per_slot, strict=False):
            dead = int(dead)
            if dead == 0 or slot.what == "structure":
                continue
            noble = state["combatants"][slot.unit]
            if slot.what == "men":
                assert slot.kind is not None  # men's slots name their kind
                noble["troops"][slot.kind] -= dead
                losses[side][slot.kind] = losses[side].get(slot.kind, 0) + dead
            else:
                wound = rolled_by(dice, "gm").randint(1, 100, f"wound of {noble['name']}")
                w = wound.total
                noble["wound"] = w
                dies = w >= noble["health"]
                noble["health"] = max(0, noble["health"] - w)
                noble["state"] = "dead" if dies else "wounded"
                how = "is killed" if dies else "is wounded and leaves the battle"
                fallen_nobles.append(event(
                    "noble.killed" if dies else "noble.wounded",
                    f"{noble['name']} takes a wound of {w} and {how}.",
                    rolls=[wound], combatant=slot.unit, wound=w,
                ))
        for c in state["combatants"].values():
            if c["side"] == side:
                c["troops"] = {k: n for k, n in c["troops"].items() if n > 0}
    structure_events: list[Event] = []
    for side in sides:
        structure = state["sides"][side]["structure"]
        n_siege, n_plain = siege_hits[side], plain_hits[side]
        if not structure or structure["destroyed"] or not (n_siege or n_plain):
            continue
        damage = n_plain
        rolled: list[dict[str, Any]] = []
        if n_siege:
            faces = np.asarray(dice.integers(5, 10, n_siege, f"siege damage to {army.side_name(state, side)}'s structure"), dtype=np.int64)
            damage += int(faces.sum())
            rolled.append(summary("5-10" if n_siege == 1 else f"{n_siege}×5-10", "siege engine damage", faces))
        structure["damage"] += damage
        label = STRUCTURES[structure["kind"]].label
        if structure["damage"] >= STRUCTURE_DESTROYED_AT:
            structure["destroyed"] = True
            structure_events.append(event("structure.destroyed", f"The {label} of {army.side_name(state, side)} takes {damage} damage and is destroyed.", rolls=rolled, side=side, damage=structure["damage"]))
        else:
            structure_events.append(event("structure.damaged", f"The {label} of {army.side_name(state, side)} takes {damage} damage ({structure['damage']} in all).", rolls=rolled, side=side, damage=structure["damage"]))

    totals = army.totals(state)
    lines = []
    for r in strikes:
        lines.append(
            f"{r['who']} struck {r['attacks']:,} time{'s' if r['attacks'] != 1 else ''} and hit {r['hits']:,}"
            + (f" ({r['capped']:,} could have struck)" if r["capped"] else "")
        )
    for side in sides:
        lost = losses_text(losses[side])
        fallen = [
            f"{state['combatants'][e['data']['combatant']]['name']} ({'killed' if e['type'] == 'noble.killed' else 'wounded'})"
            for e in fallen_nobles if state["combatants"][e["data"]["combatant"]]["side"] == side
        ]
        if lost or fallen:
            lines.append(f"{army.side_name(state, side)} lost " + ", ".join(p for p in [lost, *fallen] if p))
    for side in sides:
        t = totals[side]
        lines.append(f"{army.side_name(state, side)} stands at {t['total']:,} (breaks at {t['threshold']:,})")
    text = f"{title}: " + ("; ".join(lines) if lines else "nobody struck") + "."
    report = {
        "round": round_no,
        "phase": phase,
        "title": title,
        "text": text,
        "strikes": [{k: r[k] for k in ("who", "side", "attacks", "hits", "capped")} for r in strikes],
        "losses": losses,
        "nobles": [e["data"]["combatant"] for e in fallen_nobles],
        "totals": totals,
    }
    state["report"] = (state["report"] + [report])[-REPORT_KEEP:]
    events.append(event("phase.resolved", text, rolls=rolls, **{k: v for k, v in report.items() if k != "text"}))
    events += fallen_nobles + structure_events
    events += check_break(state, totals, title, dice)
    if state["status"] == "active":
        for side in sides:
            events += advance_rows(state, side)
    return events


def advance_rows(state: State, side: str) -> list[Event]:
    units = [(cid, c) for cid, c in army.units(state, side) if c["state"] == "fighting" or sum(c["troops"].values())]
    if not units or any(c["behind"] == 0 for _, c in units):
        return []
    row = min(c["behind"] for _, c in units)
    moving = [c for _, c in units if c["behind"] == row]
    for c in moving:
        c["behind"] = 0
    names = ", ".join(c["name"] for c in moving)
    return [event("row.advanced", f"The front row of {army.side_name(state, side)} is empty: {names} advance from the {army.row_name(row)}.", side=side, behind=row)]


def check_break(state: State, totals: dict[str, Any], title: str, dice: DiceSource) -> list[Event]:
    broken = [s for s in SIDES if totals[s]["total2"] <= state["sides"][s]["threshold2"]]
    if not broken:
        return []
    events = []
    for s in broken:
        state["sides"][s]["broken"] = True
        events.append(event("side.broke", f"{army.Side_name(state, s)} falls to {totals[s]['total']:,}, at or below its break line of {totals[s]['threshold']:,}, and breaks.", side=s))
    outcome: dict[str, Any]
    if len(broken) == len(SIDES):
        outcome = {"winner": None, "result": "tie", "broken": broken, "reason": f"both sides broke in the same phase ({title})"}
        text = f"The battle ends in a tie: both sides broke in the same phase ({title})."
    else:
        winner = next(s for s in SIDES if s not in broken)
        outcome = {"winner": winner, "result": "win", "broken": broken, "reason": f"{army.side_name(state, broken[0])} broke ({title})"}
        text = f"{army.Side_name(state, winner)} wins: {army.side_name(state, broken[0])} broke in {title.lower()}."
    outcome["text"] = text
    state["status"] = "ended"
    state["outcome"] = outcome
    events.append(event("battle.ended", text, **{k: v for k, v in outcome.items() if k != "text"}))
    if state["options"]["prisoners"] and outcome["winner"]:
        events += take_prisoners(state, outcome["winner"], broken[0], dice)
    return events


def take_prisoners(state: State, winner: str, loser: str, dice: DiceSource) -> list[Event]:
    """Ruling Olympia-10: every surviving noble of the loser, wounded or not, is taken on his own d100."""
    chance = army.prisoner_chance(army.head_count(state, winner), army.head_count(state, loser))
    events: list[Event] = []
    by = army.side_name(state, winner)
    for cid, c in sorted(state["combatants"].items(), key=lambda item: item[1]["order"]):
        if c["side"] != loser or c["state"] == "dead":
            continue
        roll = rolled_by(dice, "gm").randint(1, 100, f"is {c['name']} taken prisoner ({chance}% or less)?")
        if roll.total <= chance:
            c["state"] = "prisoner"
            events.append(event("prisoner.taken", f"{c['name']} is taken prisoner by {by} (rolled {roll.total}, {chance}% chance).",
                                rolls=[roll], combatant=cid, chance=chance))
        else:
            events.append(event("prisoner.escaped", f"{c['name']} escapes capture (rolled {roll.total}, {chance}% chance).",
                                rolls=[roll], combatant=cid, chance=chance))
    return events


def summary(dice_text: str, purpose: str, faces: Any, total: int | None = None, **extra: Any) -> dict[str, Any]:
    """A roll record for many dice at once: every face when there are few; ``total`` says what they came to."""
    if total is None:
        total = int(np.asarray(faces, dtype=np.int64).sum()) if len(faces) else 0
    shown = [int(f) for f in faces] if len(faces) <= SMALL_PAIR else []
    return {"dice": dice_text, "purpose": purpose, "faces": shown, "modifier": 0, "total": total, **extra}


def losses_text(losses: Mapping[str, int]) -> str:
    parts = [army.plural(n, KIND[k]) for k, n in sorted(losses.items(), key=lambda kv: list(KIND).index(kv[0])) if n]
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def fire(
    att: Attackers,
    targets: Sequence[Slot],
    cap: int | None,
    state: Mapping[str, Any],
    side: str,
    dice: DiceSource,
    purpose: str,
) -> dict[str, Any]:
    """One side's (or one special attack's) strikes against the given target slots of the enemy."""
    enemy = army.other(side)
    counts = np.asarray(att.counts, dtype=np.int64)
    eligible = int(counts.sum())
    result: dict[str, Any] = {
        "attacks": 0, "hits": 0, "capped": 0, "rolls": [],
        "hit_index": np.zeros(0, dtype=np.int64), "siege_structure_hits": 0, "plain_structure_hits": 0,
    }
    if cap is not None and eligible > cap:
        result["capped"] = eligible
        if cap <= 0:
            return result
        keys = np.asarray(dice.integers(0, KEY_HIGH, eligible, f"{purpose}: who strikes"), dtype=np.int64)
        result["rolls"].append(summary(f"{eligible}×0-{KEY_HIGH}", f"who of {eligible:,} may strike ({cap:,} do)", keys, total=cap, count=eligible))
        chosen = np.argpartition(keys, cap - 1)[:cap] if cap < eligible else np.arange(eligible)
        strikes = np.zeros(eligible, dtype=bool)
        strikes[chosen] = True
        if counts.min() > 0:  # the strikers of each group: the marks in its stretch of the attackers
            counts = np.add.reduceat(strikes, np.cumsum(counts) - counts, dtype=np.int64)
        else:
            group_of = np.searchsorted(np.cumsum(counts), chosen, side="right")
            counts = np.bincount(group_of, minlength=len(counts)).astype(np.int64)
    n_attacks = int(counts.sum())
    slot_counts = np.asarray([t.count for t in targets], dtype=np.int64)
    n_slots = int(slot_counts.sum())
    if n_attacks == 0 or n_slots == 0:
        return result
    result["attacks"] = n_attacks
    picks = np.asarray(dice.integers(0, n_slots - 1, n_attacks, f"{purpose}: targets"), dtype=np.int64)
    result["rolls"].append(summary(f"{n_attacks}×0-{n_slots - 1}", f"target picks among {n_slots:,}", picks, total=n_attacks, count=n_attacks))
    n_groups, n_targets = len(counts), len(targets)
    # the target slot of every pick: a lookup in the slot of every pickable man (faster than a search)
    slot_index: NDArray[np.signedinteger[Any]] = np.arange(n_targets, dtype=np.int16 if n_targets < 2**15 else np.int32)
    target_of = np.repeat(slot_index, slot_counts)[picks]
    attacker_of: NDArray[np.signedinteger[Any]] = np.repeat(np.arange(n_groups, dtype=np.int32 if n_groups < 2**31 else np.int64), counts)
    # The odds of every attack: attack x4 of its attacker against the defence x4 of its target slot
    # (a pikeman's defence doubles against a mounted attacker), in lowest terms a : d. Attack and
    # defence ratings take few distinct values: the odds are worked out once per (attack, defence)
    # cell and every attack only looks its cell up (no per-attack arithmetic, no sorting).
    mounted = np.asarray([k in KIND and KIND[k].mounted for k in att.kinds], dtype=bool)
    b4_plain = [army.defence4(t, None, state, enemy) for t in targets]
    b4_mounted = [army.defence4(t, "knight", state, enemy) for t in targets]
    a_values = sorted(set(att.a4))
    b_values = sorted(set(b4_plain) | set(b4_mounted))
    b_class_plain = np.asarray([b_values.index(v) for v in b4_plain], dtype=np.int64)
    b_class_mounted = np.asarray([b_values.index(v) for v in b4_mounted], dtype=np.int64)
    n_b = len(b_values)
    # per cell: its batch of equal odds (-1: a certain hit, defence 0, not rolled); batches numbered as met
    odds: dict[tuple[int, int], int] = {}
    cell_batch = np.empty(len(a_values) * n_b, dtype=np.int16 if len(a_values) * n_b < 2**15 else np.int64)
    for ia, a4v in enumerate(a_values):
        for ib, b4v in enumerate(b_values):
            if b4v == 0:
                cell_batch[ia * n_b + ib] = -1
                continue
            g = math.gcd(a4v, b4v)
            cell_batch[ia * n_b + ib] = odds.setdefault((a4v // g, (a4v + b4v) // g), len(odds))
    batch_odds = list(odds)
    # per (attack rating, mounted) class of attacker and per target slot: the batch; one lookup per attack
    classes: dict[tuple[int, bool], int] = {}
    class_of_group = np.asarray([classes.setdefault((a_values.index(v), bool(m)), len(classes)) for v, m in zip(att.a4, mounted, strict=True)], dtype=np.int32)
    batch_table = np.empty((len(classes), n_targets), dtype=cell_batch.dtype)
    for (ia, is_mounted), row in classes.items():
        batch_table[row] = cell_batch[ia * n_b + (b_class_mounted if is_mounted else b_class_plain)]
    batch_of = batch_table.ravel()[np.repeat(class_of_group * n_targets, counts) + target_of]
    # the (attacker group, target) pairs: their roll records show single faces when there are few
    wide_pairs = n_groups * n_targets >= 2**31
    pair = attacker_of.astype(np.int64 if wide_pairs else np.int32) * n_targets + target_of
    pair_sizes = np.bincount(pair, minlength=n_groups * n_targets)
    pairs = np.flatnonzero(pair_sizes)
    per_pair = len(pairs) <= PAIR_RECORDS
    keep_faces = per_pair and int(pair_sizes[pairs].min(initial=SMALL_PAIR + 1)) <= SMALL_PAIR
    hit = batch_of < 0  # no defence at all: a certain hit, not rolled
    rolled = ~hit
    faces_of = np.zeros(n_attacks if keep_faces else 0, dtype=np.int64)
    if rolled.any():
        # one batch of rolls per distinct odds, the batches in the order their first attack comes, each
        # batch in attack order (a stable sort keeps it; small integers sort by radix in one pass)
        order = np.argsort(batch_of, kind="stable")
        sizes = np.bincount(batch_of.astype(np.int64) + 1, minlength=len(odds) + 1)
        ends = np.cumsum(sizes)
        segments = [(int(order[ends[u] - sizes[u]]), u - 1, int(ends[u] - sizes[u]), int(ends[u])) for u in range(1, len(odds) + 1) if sizes[u]]
        for _, b, lo, hi in sorted(segments):
            members = order[lo:hi]
            a, d = batch_odds[b]
            faces = np.asarray(dice.integers(1, d, len(members), f"{purpose}: hits at {a} in {d}"), dtype=np.int64)
            if keep_faces:
                faces_of[members] = faces
            hit[members] = faces <= a
        del order
    # the roll records: per attacker group and target when there are few pairs, else per kind of attacker
    records: list[tuple[Any, int, int | None, int, int]] = []
    if per_pair:
        for p in pairs.tolist():
            mask = pair == p
            records.append((mask, p // n_targets, p % n_targets, int(pair_sizes[p]), int(hit[mask].sum())))
    else:
        hits_of = np.bincount(attacker_of[hit], minlength=n_groups)
        by_kind: dict[str, list[int]] = {}
        for g, k in enumerate(att.kinds):
            by_kind.setdefault(str(k), []).append(g)
        for gs in by_kind.values():
            records.append((None, gs[0], None, int(counts[gs].sum()), int(hits_of[gs].sum())))
    del pair
    for mask, g, j, n, h in records:
        if j is None:
            label = att.labels[g] if att.kinds[g] is None else ("nobles" if att.kinds[g] == "noble" else KIND[str(att.kinds[g])].many)
            result["rolls"].append(summary(f"{n:,} rolls", f"{label}: {h:,} of {n:,} hit", [], total=h, count=n, hits=h))
            continue
        target = targets[j]
        what = "the structure" if target.what == "structure" else (
            state["combatants"][target.unit]["name"] if target.what == "noble" else KIND[str(target.kind)].many
        )
        first_attack = int(np.argmax(mask))
        if not rolled[first_attack]:
            result["rolls"].append(summary(f"{n}×certain", f"{att.labels[g]} against {what}: {n} of {n} hit (certain)", [], total=n, count=n, hits=n, needed=0))
            continue
        a, d = batch_odds[int(batch_of[first_attack])]
        result["rolls"].append(summary(
            f"{n}d{d}", f"{att.labels[g]} against {what} (hit on {a} or less): {h:,} of {n:,} hit",
            faces_of[mask] if n <= SMALL_PAIR else [], total=h, count=n, hits=h, needed=a,
        ))
    result["hits"] = int(hit.sum())
    # the hit men in the side's canonical numbering: a pick's place among the targets moved to its slot's start
    starts = np.asarray([t.start for t in targets], dtype=np.int64)
    shift = starts - (np.cumsum(slot_counts) - slot_counts)
    is_structure = np.asarray([t.what == "structure" for t in targets], dtype=bool)[target_of]
    men_hits = np.flatnonzero(hit & ~is_structure)
    result["hit_index"] = picks[men_hits] + shift[target_of[men_hits]]
    structure_hits = hit & is_structure
    if structure_hits.any():
        siege = np.asarray([k in KIND and KIND[k].siege for k in att.kinds], dtype=bool)[attacker_of]
        result["siege_structure_hits"] = int((structure_hits & siege).sum())
        result["plain_structure_hits"] = int((structure_hits & ~siege).sum())
    return result
