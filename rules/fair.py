"""Provable dice: the commitment, the players' client seeds, the reveal, and the commands the
authority adds around a rule system (pure: no I/O, shared by the server and the verifier).

The derivation, exactly (all text is UTF-8, all hashes are SHA-256 in lowercase hex):

1. The server's seed ``S`` is 32 hex characters (16 random bytes). At the start of a battle the board
   publishes ``commitment = SHA-256(S)``.
2. The mix ``M`` starts as the empty string. Each client seed ``c`` a seat ``p`` sends becomes a
   command of the log (its own version) and sets ``M = SHA-256(M + "|" + p + "|" + c)``.
3. The command that makes version ``v`` (the battle's setup is version 1) rolls from the derived seed
   ``D = SHA-256(S + "/" + v)[:32]`` while ``M`` is empty, else ``D = SHA-256(S + "/" + M + "/" + v)[:32]``.
4. A stream is ``random.Random(int.from_bytes(SHA-256(D)[:8], "big"))`` (Python's Mersenne Twister).
   A die of ``low..high`` is ``randint(low, high)``. ``size`` mass dice of ``low..high`` (``n = high - low + 1``
   numbers; ``b = 32`` bits a word if ``n <= 2**32``, else ``b = 64``) take ``getrandbits(b * size)``,
   word ``i`` being bits ``b*i`` to ``b*i+b-1``, each mapped to ``low + (word * n >> b)``. A sub-stream
   labelled ``L`` (the computer's own choices) starts afresh from ``SHA-256(D + "/" + L)[:32]``.
5. When the battle ends the board reveals ``S``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from .core import event
from .dice import SeededDice, command_seed, commitment
from .errors import InvalidDeclaration

#: the name of the derivation above, written into exports
ALGORITHM = "battleboard-dice-1"
#: a client seed: what a phone may send (letters, digits, - and _, 8 to 128 of them)
CLIENT_SEED_RE = re.compile(r"^[A-Za-z0-9_-]{8,128}$")

#: commands the authority makes itself (not a rule system's declarations)
ENTROPY = "entropy"


def command_dice(seed: str, mix: str, version: int, declaration: Mapping[str, Any] | None = None, *,
                 record: bool = False) -> SeededDice:
    """The dice of the command that makes ``version`` (``declaration``: the command, for sources
    that depend on it; the seeded ones do not)."""
    return SeededDice(command_seed(seed, mix, version), record=record)


def committed_event(seed: str) -> dict[str, Any]:
    digest = commitment(seed)
    return event("dice.committed", f"The dice are sealed: the board committed to its seed (SHA-256 {digest[:12]}…).",
                 commitment=digest)


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
    """The GM's "end the battle": the state ended with no winner, and its event."""
    new_state = copy.deepcopy(dict(state))
    new_state["status"] = "ended"
    new_state["outcome"] = {"reason": "ended by the GM", "winner": None, "text": "The GM ended the battle."}
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
