"""JSON as the board writes it: to the sockets and into the database.

Every accepted command is written to the database and sent to each projection room, so encoding
JSON is a large part of its cost. orjson writes the same JSON several times faster than the standard
library; the standard library stays as the fallback for what orjson refuses (integers beyond 64
bits, which a client can send inside a declaration) and as the reader of everything a client sends
(its error messages are the familiar ones, and the socket layer checks for NaN itself).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from socketio import packet

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(obj: Any, **_: Any) -> str:
    """Compact JSON text of ``obj`` (``json.dumps``'s keyword arguments are accepted and ignored).

    >>> dumps({"a": [1, 2.5, None], 3: "x"})
    '{"a":[1,2.5,null],"3":"x"}'
    >>> dumps({"big": 10**30})
    '{"big":1000000000000000000000000000000}'
    """
    try:
        return orjson.dumps(obj, option=_OPTIONS).decode()
    except TypeError:  # an integer beyond 64 bits, or a type orjson does not know
        return json.dumps(obj, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    """Read JSON the board wrote itself (the database)."""
    return orjson.loads(text)


class PacketJson:
    """The ``json`` of Socket.IO packets: orjson out, the standard library in."""

    dumps = staticmethod(dumps)
    loads = staticmethod(json.loads)


class BoardPacket(packet.Packet):
    """Socket.IO packets of the board: JSON only.

    The board never sends binary attachments, so the search of every outgoing payload for bytes
    (python-socketio's default, a walk over the whole payload per emit) is skipped."""

    uses_binary_events = False
    json = PacketJson
