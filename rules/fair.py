"""Provable dice: the commitment, the players' client seeds, the reveal, and the commands the
authority adds around a rule system (pure: no I/O, shared by the server and the verifier).

The derivation, exactly (all text is UTF-8, all hashes are SHA-256 in lowercase hex):

1. The server's seed ``S`` is 32 hex characters (16 random bytes). At the start of a battle the board
   publishes ``commitment = SHA-256(S)``.
2. The mix ``M`` starts as the empty string. Each client seed ``c`` a seat ``p`` sends becomes a
   command of the log (its own version) and sets ``M = SHA-256(M + "|" + p + "|" + c)``.
3. Every command is a *step*: one past the step of the state it is applied to, the setup being step
   1. The state a command makes stands at its step; an undo's state stands at the step of the state
   it brings back (an undo written before undos took back one step, at its own version). Without
   undos a command's step is the version it makes. Step ``k`` rolls from the derived seed
   ``D = SHA-256(S + "/" + k)[:32]`` while ``M`` is empty, else ``D = SHA-256(S + "/" + M + "/" + k)[:32]``.
   So a step taken back and made again rolls the same dice: undoing is never a re-roll.
4. A stream is ``random.Random(int.from_bytes(SHA-256(D)[:8], "big"))`` (Python's Mersenne Twister).
   A die of ``low..high`` is ``randint(low, high)``. ``size`` mass dice of ``low..high`` (``n = high - low + 1``
   numbers; ``b = 32`` bits a word if ``n <= 2**32``, else ``b = 64``) take ``getrandbits(b * size)``,
   word ``i`` being bits ``b*i`` to ``b*i+b-1``, each mapped to ``low + (word * n >> b)``. A sub-stream
   labelled ``L`` (the computer's own choices) starts afresh from ``SHA-256(D + "/" + L)[:32]``.
5. When the battle ends the board reveals ``S``. An undo that takes the end back commits to a new
   seed for every step past the last one rolled so far (``from_step`` in its ``dice.committed``
   event; an undo written before undos took back one step: from its own version). Step ``k`` rolls
   from the seed whose ``from_step`` is the last at or below ``k``: a step made again after the end
   was taken back rolls its revealed dice again, a step never rolled before the new seed's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .core import PUBLIC, Viewer, event, event_for, reaches_only_the_gm, told
from .dice import SeededDice, command_seed, commitment
from .errors import InvalidDeclaration

#: the name of the derivation above, written into exports
ALGORITHM = "battleboard-dice-1"
#: a client seed: what a phone may send (letters, digits, - and _, 8 to 128 of them)
CLIENT_SEED_RE = re.compile(r"^[A-Za-z0-9_-]{8,128}$")

#: commands the authority makes itself (not a rule system's declarations)
ENTROPY = "entropy"


def command_dice(seed: str, mix: str, step: int, declaration: Mapping[str, Any] | None = None, *,
                 record: bool = False) -> SeededDice:
    """The dice of the command that is step ``step`` (see the derivation above; without undos, the
    version it makes). ``declaration``: the command, for sources that depend on it; the seeded ones
    do not."""
    return SeededDice(command_seed(seed, mix, step), record=record)


def seed_at(seeds: Mapping[int, str], step: int) -> str:
    """The seed step ``step`` rolls from, among seeds by the first step each rolls.

    >>> seed_at({1: "first", 9: "second"}, 5), seed_at({1: "first", 9: "second"}, 9)
    ('first', 'second')
    """
    return seeds[max(v for v in seeds if v <= step)]


def seed_epochs(events: Mapping[int, Sequence[Mapping[str, Any]]], current_seed: str) -> dict[int, str]:
    """The seeds of a stored battle by the version at which each was committed: the first at version
    1; an undo that took back the battle's end committed a new one (its ``dice.committed`` event).
    Earlier seeds were revealed by their ends; the last is the battle's own."""
    committed = [(v, e.get("data", {}).get("commitment")) for v in sorted(events) for e in events[v] if e.get("type") == "dice.committed"]
    revealed = {e.get("data", {}).get("commitment"): e.get("data", {}).get("seed")
                for v in events for e in events[v] if e.get("type") == "dice.revealed"}
    epochs = {1: current_seed}
    for version, digest in committed:
        if digest == commitment(current_seed):
            epochs[version] = current_seed
        elif isinstance(revealed.get(digest), str):
            epochs[version] = revealed[digest]
    return epochs


def epoch_steps(events: Mapping[int, Sequence[Mapping[str, Any]]]) -> dict[int, int]:
    """The first step each seed of a stored battle rolls, by the version at which it was committed
    (its ``dice.committed`` event's ``from_step``; the setup's, and one from before undos took back
    one step, from the version itself)."""
    steps = {}
    for version in sorted(events):
        for ev in events[version]:
            if ev.get("type") == "dice.committed":
                from_step = (ev.get("data") or {}).get("from_step")
                steps[version] = from_step if isinstance(from_step, int) else version
    return steps


def seeds_by_step(events: Mapping[int, Sequence[Mapping[str, Any]]], current_seed: str) -> dict[int, str]:
    """A stored battle's seeds by the first step each rolls (:func:`seed_at` picks a step's)."""
    steps = epoch_steps(events)
    return {steps.get(version, version): seed for version, seed in sorted(seed_epochs(events, current_seed).items())}


def committed_event(seed: str, from_step: int | None = None) -> dict[str, Any]:
    """The commitment to a seed: at the start, or (``from_step``) to a new one for every step from
    ``from_step`` on, when an undo took back the end that revealed the last."""
    digest = commitment(seed)
    if from_step is None:
        return event("dice.committed", f"The dice are sealed: the board committed to its seed (SHA-256 {digest[:12]}…).",
                     commitment=digest)
    return event("dice.committed", f"The dice are sealed again: the board committed to a new seed (SHA-256 {digest[:12]}…) "
                 "for every step not rolled yet.", commitment=digest, from_step=from_step)


def revealed_event(seed: str) -> dict[str, Any]:
    return event("dice.revealed", "The battle is over: the board reveals its dice seed, so anyone can check every roll.",
                 seed=seed, commitment=commitment(seed))


def clean_client_seed(raw: Any) -> str:
    if not isinstance(raw, str) or not CLIENT_SEED_RE.match(raw):
        raise InvalidDeclaration("a client seed is 8 to 128 letters, digits, - or _")
    return raw


def entropy_declaration(seat: str, client_seed: str) -> dict[str, Any]:
    return {"type": ENTROPY, "seat": seat, "client_seed": client_seed}


def entropy_event(seat: str, client_seed: str) -> dict[str, Any]:
    return event("dice.entropy", "A player's phone added its own random seed to the dice.", seat=seat,
                 client_seed=client_seed)


def ended_by_gm(state: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The GM's "end the battle": the state ended with no winner, and its event (the new state shares
    all but its status and outcome with ``state``: :func:`rules.engine.step` gives it its own copy)."""
    new_state = {**state, "status": "ended",
                 "outcome": {"reason": "ended by the GM", "winner": None, "text": "The GM ended the battle."}}
    return new_state, [event("battle.ended", "The GM ended the battle.", reason="ended by the GM")]


def with_reveal(before_status: str, after_status: str, events: list[dict[str, Any]], seed: str) -> list[dict[str, Any]]:
    """The events of a command, with the reveal appended when it ended the battle."""
    if after_status == "ended" and before_status != "ended":
        return [*events, revealed_event(seed)]
    return events


def dice_info(seed: str, mix: str, status: str) -> dict[str, Any]:
    """What every screen shows of a battle's dice: the commitment, the mix, and the seed once ended."""
    return {"commitment": commitment(seed), "mix": mix, "seed": seed if status == "ended" else None,
            "algorithm": ALGORITHM}


# --- undo: one step back, named in words each viewer could see -------------------------------------
#: the events the board adds around a rule system's (they never name a step)
AUTHORITY_EVENTS = frozenset({"dice.committed", "dice.revealed", "dice.entropy"})
#: the GM's words and a spectator's, for naming a step
_GM, _SPECTATOR = Viewer.gm(), Viewer.spectator()
#: a step's name is cut to this many characters
NAME_LIMIT = 100
#: the end of a line's first sentence ("Turn 1: dice 3 4 1 5. Jharek (attack) ...")
_FIRST_SENTENCE = re.compile(r"^(.+?)[.!?]\s+(?=[A-Z“\"(])")


def _shown_lines(events: Sequence[Mapping[str, Any]], viewer: Viewer, state: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """Each line of a step's events in the words ``viewer`` gets (:func:`rules.core.event_for`), and
    whether it shows dice; without the board's own dice lines."""
    lines = []
    for ev in events:
        if ev.get("type") in AUTHORITY_EVENTS:
            continue
        shown = event_for(ev, viewer, state)
        if not shown:
            continue
        text = str(shown.get("text") or "").strip()
        if text:
            lines.append((text, any(roll.get("faces") for roll in shown.get("rolls") or [] if isinstance(roll, Mapping))))
    return lines


def step_lines(events: Sequence[Mapping[str, Any]], viewer: Viewer, state: Mapping[str, Any]) -> list[str]:
    """The lines of a step's events in the words ``viewer`` gets, without the board's own dice lines."""
    return [text for text, _dice in _shown_lines(events, viewer, state)]


def step_name(events: Sequence[Mapping[str, Any]], viewer: Viewer, state: Mapping[str, Any]) -> str | None:
    """A step named in the words ``viewer`` got of it: the first sentence of the first line that
    shows dice (what the step rolled is what undoing it takes back), else of its first line, without
    the full stop; None if that viewer got no words of it.

    >>> swing = event("action.resolved", "Fighter strikes at Gnoll.")
    >>> hit = event("attack.hit", "Fighter hits Gnoll: 16 against 12 needed, 6 damage.", visibility="gm",
    ...             others=told("Fighter hits Gnoll: rolled 16, 6 damage.", rolls=[{"dice": "1d20", "faces": [16]}]),
    ...             rolls=[{"dice": "1d20", "faces": [16]}])
    >>> step_name([swing, hit], Viewer.gm(), {}), step_name([swing, hit], Viewer.spectator(), {})
    ('Fighter hits Gnoll: 16 against 12 needed, 6 damage', 'Fighter hits Gnoll: rolled 16, 6 damage')
    >>> step_name([swing], Viewer.spectator(), {})
    'Fighter strikes at Gnoll'
    >>> turn = event("turn.resolved", "Turn 1: dice 5 1 4 4. Jharek (attack) offence 9.", rolls=[{"dice": "4d6", "faces": [5, 1, 4, 4]}])
    >>> step_name([turn], Viewer.spectator(), {})
    'Turn 1: dice 5 1 4 4'
    >>> step_name([event("hp.set", "The DM sets the troll's hit points to 30.", visibility="gm")], Viewer.spectator(), {}) is None
    True
    """
    return _name_of(_shown_lines(events, viewer, state))


def step_told(events: Sequence[Mapping[str, Any]], viewer: Viewer, state: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """A step's name (:func:`step_name`) and its lines (:func:`step_lines`) in the words ``viewer``
    got of it, read once."""
    lines = _shown_lines(events, viewer, state)
    return _name_of(lines), [text for text, _dice in lines]


def _name_of(lines: list[tuple[str, bool]]) -> str | None:
    """A step's name read off its shown lines (see :func:`step_name`)."""
    if not lines:
        return None
    text = next((line for line, dice in lines if dice), lines[0][0])
    first = _FIRST_SENTENCE.match(text)
    name = (first.group(1) if first else text.rstrip(".")).strip() or text
    return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 1].rstrip() + "…"


def secret_step(actor: str, events: Sequence[Mapping[str, Any]], state: Mapping[str, Any]) -> bool:
    """Whether a step was a GM's secret: the GM's, and none of its events reached anyone but the GM
    (the players and spectators were told nothing of it)."""
    return actor == "gm" and bool(events) and all(reaches_only_the_gm(ev, state) for ev in events)


def undone_event(step: int, events: Sequence[Mapping[str, Any]], actor: str, state: Mapping[str, Any]) -> dict[str, Any]:
    """The event of an undo that took back the step made at version ``step`` (its ``events``, sent
    by ``actor``; ``state``: the state it made). The GM reads the step's own words; everyone else the
    words they got of it, and nothing at all of a GM's secret step (the undo is then one too).

    >>> made = [event("attack.hit", "Fighter hits Gnoll for 6.", visibility="gm", others="Fighter hits Gnoll.")]
    >>> ev = undone_event(7, made, "gm", {})
    >>> ev["text"], ev["others"]["text"], ev["data"], ev["others"]["data"]
    ('The GM took back “Fighter hits Gnoll for 6”.', 'The GM took back “Fighter hits Gnoll”.', {'step': 7}, {'step': 7})
    >>> quiet = undone_event(8, [event("hp.set", "The DM sets Troll's hit points to 30.", visibility="gm")], "gm", {})
    >>> quiet["visibility"], "others" in quiet
    ('gm', False)
    """
    gm_name = step_name(events, _GM, state)
    text = f"The GM took back “{gm_name}”." if gm_name else "The GM took back the last step."
    if secret_step(actor, list(events), state):
        return event("battle.undone", text, visibility="gm", step=step)
    public_name = step_name(events, _SPECTATOR, state)
    public_text = f"The GM took back “{public_name}”." if public_name else "The GM took back the last step."
    if public_text == text:
        return event("battle.undone", text, visibility=PUBLIC, step=step)
    return event("battle.undone", text, visibility="gm", others=told(public_text, step=step), step=step)


def undone_versions(events: Mapping[int, Sequence[Mapping[str, Any]]]) -> set[int]:
    """The versions an undo took back, read off the undos' events (``{version: [event, ...]}``, each
    as whoever reads them got it): see :func:`undone_by`.

    >>> undone_versions({5: [{"type": "battle.undone", "data": {"step": 4}}], 9: [{"type": "battle.undone", "data": {"step": 3}}]})
    {3, 4}
    """
    return set(undone_by(events))


def undone_by(events: Mapping[int, Sequence[Mapping[str, Any]]]) -> dict[int, int]:
    """Each version an undo took back, and the version of that undo. An undo names the step it took
    back (``step``); one written before undos took back one step went back to the state of version
    ``back_to``, taking back every version in between but the client seeds (they stay mixed into the
    dice).

    >>> undone_by({3: [{"type": "dice.entropy"}], 5: [{"type": "battle.undone", "data": {"back_to": 1}}]})
    {2: 5, 4: 5}
    """
    entropy = {v for v, evs in events.items() if any(e.get("type") == "dice.entropy" for e in evs)}
    undone: dict[int, int] = {}
    for version in sorted(events):
        for ev in events[version]:
            if ev.get("type") != "battle.undone":
                continue
            data = ev.get("data") or {}
            if isinstance(data.get("step"), int):
                undone.setdefault(data["step"], version)
            elif isinstance(data.get("back_to"), int):
                for taken in range(data["back_to"] + 1, version):
                    if taken not in entropy:
                        undone.setdefault(taken, version)
    return undone
