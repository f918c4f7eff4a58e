"""Re-apply a battle's log with the same rules code: the core of ``battleboard verify``, of the export
(which records every draw of the dice on the way) and of ``battleboard replay``.

A battle's log is its setup (version 1) and one command per later version. :func:`reapply` computes,
version by version, the state, the events and the dice drawn, from the seed, the players' client
seeds and the commands alone, through the same step as the authority (:mod:`webapp.authority`):

* a rule system's declaration, ``assign``, ``end``, typed dice, the GM's switch to real dice and a
  roll for anything (``dice_roll``, :mod:`rules.roller`):
  :func:`rules.engine.step` with the dice of the command's step (:func:`rules.fair.command_dice`);
* ``undo``: back one step, to the state the last step was applied to (an undo written before undos
  took back one step went back to the last checkpoint, walking the versions' links);
* ``assign`` in older logs, without the controller: the stored snapshot;
* ``entropy``: the state unchanged, the client seed mixed in;

and after each, the dice seed's reveal when the command ended the battle (:func:`rules.engine.settle`).
:func:`verify_document` checks an exported document against that.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rules import RulesError, Viewer, engine, get_system
from rules.core import event as make_event
from rules.dice import commitment, mix_entropy
from rules.fair import (
    ENTROPY,
    command_dice,
    committed_event,
    entropy_event,
    epoch_steps,
    seed_at,
    undone_event,
)
from rules.fair import undone_versions as undone_in_events

#: commands the authority makes itself; every other type is a rule system's declaration
AUTHORITY_COMMANDS = {"undo", "assign", "end", ENTROPY}


def viewer_of(actor: str) -> Viewer:
    """The viewer a stored command's actor names (``gm``, ``seat:<public id>``, ``spectator``)."""
    if actor.startswith("seat:"):
        return Viewer.player(actor.split(":", 1)[1])
    return Viewer.gm() if actor == "gm" else Viewer.spectator()


@dataclass
class Step:
    """One version as re-applied: its state, its events (with their visibility), the dice drawn."""

    version: int
    state: dict[str, Any]
    events: list[dict[str, Any]]
    draws: list[dict[str, Any]]
    mix: str
    prev_version: int | None
    checkpoint: bool
    status: str
    #: the command's type ("setup" for version 1)
    kind: str = "setup"
    #: the step its state stands at (:mod:`rules.fair`): the next command rolls the dice of this + 1
    #: (None: its own version)
    dice_step: int | None = None
    #: the step whose dice the command rolled (None: its own version)
    rolled: int | None = None

    @property
    def at_step(self) -> int:
        return self.version if self.dice_step is None else self.dice_step


class Mismatch(Exception):
    """The log does not re-apply: names the first version that does not match."""

    def __init__(self, version: int, what: str, message: str) -> None:
        super().__init__(f"version {version} ({what}): {message}")
        self.version = version


def reapply(
    system_id: str,
    seed: str | Mapping[int, str],
    setup: Mapping[str, Any] | None,
    initial_state: Mapping[str, Any],
    commands: Sequence[Mapping[str, Any]],
    *,
    stored_state: Callable[[int], dict[str, Any] | None] | None = None,
) -> Iterator[Step]:
    """Every version of a battle from its setup and commands (each ``{version, actor, declaration}``,
    in order from version 2). ``setup`` (``{lineup, options}``) re-runs the system's setup; without it
    (older battles) ``initial_state`` is taken as given. ``stored_state``: a stored snapshot, for
    commands of older logs that cannot be re-applied (an assignment without its controller)."""
    system = get_system(system_id)
    seeds = {1: seed} if isinstance(seed, str) else dict(seed)
    seed = seeds[1]
    by_step = {1: seed}  # the seeds by the first step each rolls
    in_force = seed  # the seed the battle's end reveals
    rolled = 1  # the highest step rolled so far
    status_of: Callable[[Mapping[str, Any], str], str] = lambda state, before: str(state.get("status", before))  # noqa: E731
    if setup is not None:
        dice = command_dice(seed, "", 1, record=True)
        state, events = engine.start(system, copy.deepcopy(setup["lineup"]), copy.deepcopy(setup["options"]), dice)
        events = list(events) or [make_event("battle.started", f"A {system.name} battle begins.")]
        first = Step(1, state, [*events, committed_event(seed)], dice.draws, "", None, True, status_of(state, "active"))
    else:
        state = copy.deepcopy(dict(initial_state))
        first = Step(1, state, [], [], "", None, True, status_of(state, "active"))
    yield first
    steps: dict[int, Step] = {1: first}
    actors: dict[int, str] = {}
    current = first
    for command in commands:
        version = int(command["version"])
        if version != current.version + 1:
            raise Mismatch(version, "order", f"the commands skip from version {current.version} to {version}")
        declaration = dict(command["declaration"])
        kind = str(declaration.get("type", ""))
        draws: list[dict[str, Any]] = []
        made: engine.Step | None = None
        prev: int | None
        mix, prev, checkpoint = current.mix, current.version, True
        key = current.at_step + 1  # the step this command is (its dice); its state stands at it
        dice_step: int | None = key
        if kind == "undo" and "step" in declaration:  # one step back: to the state the last step was applied to
            if current.prev_version is None:
                raise Mismatch(version, kind, "there was nothing to undo")
            target, step = steps[current.prev_version], current.prev_version + 1
            if declaration.get("step") != step:
                raise Mismatch(version, kind, f"it says it took back version {declaration.get('step')}, but the last step was version {step}")
            state, prev, checkpoint, dice_step = copy.deepcopy(target.state), target.prev_version, target.checkpoint, target.at_step
            events = [undone_event(step, steps[step].events, actors.get(step, ""), current.state)]
            if current.status == "ended":  # the end taken back: a new seed for every step not rolled yet
                if version not in seeds:
                    raise Mismatch(version, kind, "the end was taken back, but the file lacks the new seed committed to then")
                in_force = by_step[rolled + 1] = seeds[version]
                events.append(committed_event(seeds[version], rolled + 1))
        elif kind == "undo":  # written before undos took back one step: back to the last checkpoint
            cursor, old_target = current.prev_version, None
            while cursor is not None:
                snap = steps[cursor]
                if snap.checkpoint:
                    old_target = snap
                    break
                cursor = snap.prev_version
            if old_target is None:
                raise Mismatch(version, kind, "there was nothing to undo")
            state, prev, dice_step = copy.deepcopy(old_target.state), old_target.prev_version, version
            text = f"The GM undid the last step (back to the state of version {old_target.version})."
            events = [make_event("battle.undone", text, back_to=old_target.version)]
            if current.status == "ended":  # the end taken back: the battle goes on with a new seed
                if version not in seeds:
                    raise Mismatch(version, kind, "the end was taken back, but the file lacks the new seed committed to then")
                in_force = by_step[version] = seeds[version]
                events.append(committed_event(seeds[version]))
        elif kind == ENTROPY:
            seat, client_seed = str(declaration.get("seat")), str(declaration.get("client_seed"))
            if command.get("actor") != f"seat:{seat}":
                raise Mismatch(version, kind, "a client seed sent for another seat")
            mix = mix_entropy(current.mix, seat, client_seed)
            state, events = copy.deepcopy(current.state), [entropy_event(seat, client_seed)]
            prev, checkpoint = current.prev_version, current.checkpoint
        elif kind == "assign" and "controller" not in declaration:
            stored = stored_state(version) if stored_state is not None else None
            if stored is None:
                raise Mismatch(version, kind, "an assignment without its controller cannot be re-applied")
            state, events = stored, list(command.get("events") or [])
            checkpoint = bool(system.is_checkpoint(state))
        else:  # the authority's own step: a declaration, an assignment, the GM's end, typed dice, a switch
            dice = command_dice(seed_at(by_step, key), current.mix, key, declaration, record=True)
            try:
                made = engine.step(
                    system, current.state, engine.Command.recorded(declaration, viewer_of(str(command.get("actor", "")))), dice,
                    seed=in_force, board={"version": key, "mix": current.mix or ""},
                    board_dice=lambda kept: _board_dice(by_step, kept))
            except RulesError as exc:
                raise Mismatch(version, kind, f"the rules refuse this declaration now ({exc})") from None
            state, events, checkpoint, draws = made.state, made.events, made.checkpoint, dice.draws
        if made is None:  # the authority's own commands end as every step does: the reveal, if it ended the battle
            events = engine.settle(current.state, state, events, checkpoint, seed=in_force, record=declaration).events
        status = status_of(state, current.status)
        events = [dict(e) for e in events]
        current = Step(version, state, events, draws, mix, prev, checkpoint, status, kind, dice_step, key)
        rolled = max(rolled, current.at_step)
        steps[version] = current
        actors[version] = str(command.get("actor", ""))
        yield current


def _board_dice(by_step: Mapping[int, str], kept: Mapping[str, Any]) -> Any:
    """The board's dice of the command a waiting declaration came with (its ``board``: its step and mix)."""
    first_step = int(kept.get("version", 0))
    return command_dice(seed_at(by_step, first_step), kept.get("mix", ""), first_step, record=True)


def undone_versions(commands: Sequence[Mapping[str, Any]], events: Mapping[int, Sequence[Mapping[str, Any]]]) -> set[int]:
    """The versions an undo took back (:func:`rules.fair.undone_versions`; a client seed stays mixed
    in: never undone)."""
    kinds = {c["version"]: c["declaration"].get("type") for c in commands}
    return {v for v in undone_in_events(events) if kinds.get(v) != ENTROPY}


@dataclass
class Verdict:
    ok: bool
    message: str
    versions: int = 0
    dice: int = 0
    steps: list[Step] = field(default_factory=list)


def _first_difference(mine: Any, theirs: Any, where: str = "") -> str:
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in list(mine) + [k for k in theirs if k not in mine]:
            if key not in mine or key not in theirs or mine[key] != theirs[key]:
                if key in mine and key in theirs:
                    return _first_difference(mine[key], theirs[key], f"{where}.{key}")
                return f"{where}.{key} is {'missing' if key not in theirs else 'extra'} in the file"
    if isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            return f"{where or 'the list'} has {len(theirs)} entries in the file, {len(mine)} re-applied"
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}[{i}]")
    return f"{where or 'the value'} is {str(theirs)[:80]!r} in the file, {str(mine)[:80]!r} re-applied"


def _physical_ok(theirs: Sequence[Mapping[str, Any]], mine: Sequence[Mapping[str, Any]]) -> bool:
    """Events that differ only in dice entered by hand (roll records with ``physical: true``), each
    face in its die's range: the hand-entered faces are checked only for being possible."""
    if len(theirs) != len(mine):
        return False
    for a, b in zip(theirs, mine, strict=True):
        rolls_a, rolls_b = a.get("rolls") or [], b.get("rolls") or []
        if {k: v for k, v in a.items() if k != "rolls"} != {k: v for k, v in b.items() if k != "rolls"} or len(rolls_a) != len(rolls_b):
            return False
        for ra, rb in zip(rolls_a, rolls_b, strict=True):
            if ra == rb:
                continue
            if not ra.get("physical") or not _in_range(ra):
                return False
    return True


def _in_range(roll: Mapping[str, Any]) -> bool:
    text, faces = str(roll.get("dice", "")), roll.get("faces") or []
    low, high = 1, None
    if "d" in text:
        sides = text.split("d", 1)[1].split("+")[0].split("-")[0]
        high = int(sides) if sides.isdigit() else None
    elif "-" in text.lstrip("-"):
        a, _, b = text.rpartition("-") if not text.startswith("-") else ("", "", "")
        low, high = (int(a), int(b)) if a.lstrip("-").isdigit() and b.isdigit() else (1, None)
    return high is not None and all(isinstance(f, int) and low <= f <= high for f in faces)


def verify_document(doc: Mapping[str, Any]) -> Verdict:
    """Check an exported battle (already checked against the schema): the commitment, every die,
    every declaration re-applied, every event and the final state. The verdict names the first
    command that does not match."""
    if doc.get("audience", "gm") != "gm":
        return Verdict(False, "this is the public copy of a battle: it leaves out what only the GM saw, so its commands cannot "
                              "be re-applied (its dice still verify with verify_dice.py)")
    dice_part = doc["dice"]
    epochs = dice_part.get("seeds") or [{"version": 1, "commitment": dice_part["commitment"], "seed": dice_part.get("seed")}]
    if epochs[0]["version"] != 1 or epochs[0]["commitment"] != dice_part["commitment"] or epochs[0]["seed"] != dice_part.get("seed"):
        return Verdict(False, "the file's first seed is not the one committed to at the start")
    seeds: dict[int, str] = {}
    for epoch in epochs:
        if not isinstance(epoch.get("seed"), str):
            return Verdict(False, "the battle has not ended: its seed is not revealed, so its dice cannot be checked")
        if commitment(epoch["seed"]) != epoch["commitment"]:
            return Verdict(False, f"the revealed seed does not match the commitment published at version {epoch['version']}")
        seeds[int(epoch["version"])] = epoch["seed"]
    events: dict[int, list[dict[str, Any]]] = {}
    for ev in doc["events"]:
        events.setdefault(int(ev["v"]), []).append({k: v for k, v in ev.items() if k not in ("v", "i", "undone")})
    commands = sorted(doc["commands"], key=lambda c: c["version"])
    final = doc["battle"]["version"]
    if (commands and commands[-1]["version"] != final) or (not commands and final != 1):
        return Verdict(False, f"the file says the battle reached version {final}, but its commands end at "
                              f"{commands[-1]['version'] if commands else 1}")
    steps: list[Step] = []
    count = 0
    seeds_seen: list[dict[str, Any]] = []
    try:
        for step in reapply(doc["system"]["id"], seeds, doc.get("setup"), doc["initial_state"], commands):
            steps.append(step)
            what = step.kind
            if step.version == 1 and doc.get("setup") is not None and step.state != doc["initial_state"]:
                raise Mismatch(1, "setup", "the first state differs: " + _first_difference(step.state, doc["initial_state"], "state"))
            theirs = events.get(step.version, [])
            if doc.get("setup") is not None or step.version > 1:
                mine = [dict(e) for e in step.events]
                if mine != theirs and not _physical_ok(theirs, mine):
                    detail = _first_difference(mine, theirs, "events")
                    raise Mismatch(step.version, what, f"the events differ ({detail})")
            if what == ENTROPY:
                seeds_seen.append({"version": step.version, "seat": commands[step.version - 2]["declaration"]["seat"],
                                   "client_seed": commands[step.version - 2]["declaration"]["client_seed"]})
            count += sum(len(d.get("faces", ())) or d.get("size", 0) for d in step.draws)
    except Mismatch as exc:
        return Verdict(False, f"mismatch at {exc}", steps=steps)
    except RulesError as exc:
        return Verdict(False, f"the log cannot be re-applied: {exc}", steps=steps)
    first_steps = epoch_steps(events)
    if any(epoch.get("step", epoch["version"]) != first_steps.get(int(epoch["version"]), epoch["version"]) for epoch in epochs):
        return Verdict(False, "the first steps listed for the seeds are not those their commitments name", steps=steps)
    if seeds_seen != list(dice_part.get("client_seeds", [])):
        return Verdict(False, "the client seeds listed in the file are not those of its commands", steps=steps)
    if steps[-1].state != doc["final_state"]:
        return Verdict(False, "the final state differs: " + _first_difference(steps[-1].state, doc["final_state"], "state"), steps=steps)
    listed = {entry["version"]: entry["draws"] for entry in dice_part.get("draws", [])}
    listed_steps = {entry["version"]: entry.get("step", entry["version"]) for entry in dice_part.get("draws", [])}
    for step in steps:
        if step.draws != listed.get(step.version, []):
            return Verdict(False, f"mismatch at version {step.version} ({step.kind}): the dice listed differ from the seed's", steps=steps)
        if step.draws and listed_steps.get(step.version) != (step.rolled or step.version):
            return Verdict(False, f"mismatch at version {step.version} ({step.kind}): the file says it rolled the dice of step "
                                  f"{listed_steps.get(step.version)}, but it was step {step.rolled or step.version}", steps=steps)
    return Verdict(True, f"OK: {doc['system']['id']} battle of {final} versions, commitment {dice_part['commitment'][:16]}… matches its seed, "
                         f"{count} dice re-derived, {len(commands)} commands re-applied, every event and the final state match",
                   versions=final, dice=count, steps=steps)
