"""The table's own dice, for rolls between battles (no battle yet, or the last one ended).

A battle's dice are committed once for the whole battle (:mod:`rules.fair`). Between battles there is
no log to hold a seed, so each roll is committed to on its own, before it is asked for:

1. a page asks ``roll_commit``: the board makes a fresh seed ``S`` (32 hex characters), keeps it in
   the process that page is connected to (Socket.IO's sticky sessions keep a page on one process) and
   answers ``{commit_id, commitment: SHA-256(S)}``;
2. the page's ``roll {notation, ..., commit_id}`` rolls with ``S`` exactly as a battle's step rolls
   (``random.Random(int.from_bytes(SHA-256(S)[:8], "big"))``, ``randint(1, sides)`` per die, the dice
   terms left to right), reveals ``S`` with the roll and forgets it; the answer carries the next
   ``{commit_id, commitment}``. So the page that rolled holds the commitment from before it asked,
   and anyone can check ``SHA-256(S)`` and every face from ``S`` (:func:`check`).

Such a roll goes to every page of the table as ``table_roll {text, rolls, by, label, notation, total,
commitment, seed, at}`` (through the message queue); nothing is stored. A GM's secret roll reaches only
the GM's pages; every other page gets ``{text: "The GM rolled in secret.", secret: true}``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from limits import parse

from rules import IllegalDeclaration, InvalidDeclaration, NotPermitted, RulesError, Viewer, roller
from rules.dice import SeededDice, commitment

from .broadcast import audience, room_of
from .sockets import Connection, Hub, handler

#: at most this many rolls a minute per seat (the GM is one seat)
ROLLS_PER_MINUTE = 20
#: at most this many seeds waiting for their roll in one process (the oldest go first)
WAITING = 10_000
_seeds: OrderedDict[str, tuple[int, str, str]] = OrderedDict()
_guard = threading.Lock()


_WORDS = {"rolls": "rolls", "points": "points", "roll_commits": "requests for dice"}


class RateLimited(RulesError):
    code = "rate_limited"


def limited(hub: Hub, kind: str, per_minute: int, conn: Connection) -> None:
    """Count one use of ``kind`` for the sender's seat; refuse past ``per_minute`` (Redis-counted with
    the other limits when the board runs on several processes)."""
    from .security import limits

    counter = limits(hub.app)
    counter.items.setdefault(kind, parse(f"{per_minute}/minute"))
    seat = "gm" if conn.viewer.is_gm else conn.viewer.seat or "?"
    if not counter.hit(kind, f"{conn.table_id}:{seat}"):
        raise RateLimited(f"too many {_WORDS.get(kind, kind)} at once: wait a moment and try again")


def new_commitment(conn: Connection) -> dict[str, str]:
    """A fresh seed for the sender's next roll between battles: its id and commitment."""
    seed = secrets.token_hex(16)
    commit_id = secrets.token_urlsafe(12)
    with _guard:
        _seeds[commit_id] = (conn.table_id, _seat(conn.viewer), seed)
        while len(_seeds) > WAITING:
            _seeds.popitem(last=False)
    return {"commit_id": commit_id, "commitment": commitment(seed)}


def _seat(viewer: Viewer) -> str:
    return "gm" if viewer.is_gm else str(viewer.seat)


def check(seed: str, notation: str, faces: list[list[int]]) -> bool:
    """Whether the faces of a roll between battles are those its revealed seed gives.

    >>> made = roller.roll(roller.parse("2d6+1"), SeededDice("ab" * 16), "x")
    >>> check("ab" * 16, "2d6+1", [r["faces"] for r in made.rolls])
    True
    """
    again = roller.roll(roller.parse(notation), SeededDice(seed), "check")
    return [r["faces"] for r in again.rolls] == faces


def table_roll(hub: Hub, conn: Connection, payload: Mapping[str, Any], by: str) -> dict[str, Any]:
    """A roll between battles, with the seed committed to by ``commit_id`` (see the module)."""
    commit_id = payload.get("commit_id")
    if not isinstance(commit_id, str):
        raise IllegalDeclaration("no battle is running: ask for the table's dice first (roll_commit)")
    with _guard:
        kept = _seeds.get(commit_id)
        if kept is None or kept[:2] != (conn.table_id, _seat(conn.viewer)):
            raise IllegalDeclaration("that commitment is unknown or used: ask for the table's dice again")
        ev = roller.roll_event({**payload, "by": by}, conn.viewer, SeededDice(kept[2]))
        del _seeds[commit_id]
    seed = kept[2]
    data = ev["data"]
    whole = {"text": ev["text"], "rolls": ev["rolls"], "by": data["by"], "label": data["label"],
             "notation": data["notation"], "total": data["total"], "secret": data["secret"],
             "commitment": commitment(seed), "seed": seed, "at": time.time()}
    rooms = [room_of(conn.table_id, viewer) for viewer in audience(hub.seats_now(conn.table_id))]
    if data["secret"]:
        gm_room = room_of(conn.table_id, Viewer.gm())
        hub.socketio.emit("table_roll", whole, to=gm_room)
        others = [room for room in rooms if room != gm_room]
        hub.socketio.emit("table_roll", {"text": roller.SECRET_WORDS, "secret": True, "by": data["by"], "at": whole["at"]},
                          to=others)  # type: ignore[arg-type]  # Flask-SocketIO takes a list of rooms
    else:
        hub.socketio.emit("table_roll", whole, to=rooms)  # type: ignore[arg-type]
    return {"total": data["total"], "text": ev["text"], "seed": seed, "next": new_commitment(conn)}


@handler("roll_commit")
def on_roll_commit(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """The commitment of the sender's next roll between battles (``{commit_id, commitment}``)."""
    if conn.viewer.role == "spectator":
        raise NotPermitted("spectators watch; they cannot roll")
    if payload:
        raise InvalidDeclaration("roll_commit takes no fields")
    limited(hub, "roll_commits", 3 * ROLLS_PER_MINUTE, conn)
    return new_commitment(conn)
