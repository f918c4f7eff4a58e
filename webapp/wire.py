"""JSON as the board writes it: to the sockets and into the database.

Every accepted command is written to the database and sent to each projection room, so encoding
JSON is a large part of its cost. orjson writes the same JSON several times faster than the standard
library; the standard library stays as the fallback for what orjson refuses (integers beyond 64
bits, which a client can send inside a declaration) and as the reader of everything a client sends
(its error messages are the familiar ones, and the socket layer checks for NaN itself).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import orjson
import socketio
from engineio import packet as eio_packet
from socketio import packet

_OPTIONS = orjson.OPT_NON_STR_KEYS
log = logging.getLogger("battleboard")


def dumps(obj: Any, **_: Any) -> str:
    """Compact JSON text of ``obj`` (``json.dumps``'s keyword arguments are accepted and ignored).

    >>> dumps({"a": [1, 2.5, None], 3: "x"})
    '{"a":[1,2.5,null],"3":"x"}'
    >>> dumps({"big": 10**30})
    '{"big":1000000000000000000000000000000}'
    """
    return dumps_bytes(obj).decode()


def dumps_bytes(obj: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes, what a database driver sends (no decoding and encoding again).

    >>> dumps_bytes({"a": [1, None]})
    b'{"a":[1,null]}'
    """
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except TypeError:  # an integer beyond 64 bits, or a type orjson does not know
        return json.dumps(obj, separators=(",", ":")).encode()


def loads(text: str | bytes) -> Any:
    """Read JSON the board wrote itself (the database, the queue between its processes): orjson, or
    the standard library for what :func:`dumps` wrote through it (integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


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


class QueueJson:
    """The ``json`` of messages between the board's own server processes (orjson both ways)."""

    dumps = staticmethod(dumps)
    loads = staticmethod(loads)


class BoardRedisManager(socketio.RedisManager):
    """Flask-SocketIO's Redis message queue, plus one message for all the projections of a command.

    A command's update goes to several rooms with different payloads (the GM, each seat, the
    spectators). Sent one by one, that is one Redis message per room, each published, then read and
    decoded by every process; :meth:`emit_many` publishes them as one message, which every process
    (this one at once, the others through Redis) fans out to its own rooms in order."""

    def __init__(self, url: str, channel: str) -> None:
        super().__init__(url, channel=channel, write_only=False, json=QueueJson)
        # how this process's own batches begin on the wire (``host_id`` is their first key)
        self._own_batch = b'{"host_id":"' + self.host_id.encode() + b'"'
        #: called with the ``battle`` another process sent along with its batch, before its rooms here
        #: get the batch (the battle as that process's command left it; see BattleService.learn_battle)
        self.on_peer_battle: Callable[[dict[str, Any]], Any] | None = None

    def set_server(self, server: Any) -> None:
        super().set_server(server)
        self.json = QueueJson  # python-socketio swaps in the packets' JSON module here

    def _listen(self) -> Any:
        # the queue hands every message back to its sender too: a process's own batches reached its
        # rooms when they were published, so they are dropped here without being decoded
        for message in super()._listen():
            if isinstance(message, bytes) and message.startswith(self._own_batch):
                continue
            yield message

    def emit_many(self, emits: list[tuple[str, Any, str | list[str]]], namespace: str = "/", battle: dict[str, Any] | None = None) -> None:
        # each payload is encoded once, here, as its Socket.IO packet: no process decodes and
        # re-encodes it on the way to its sockets
        batch = [
            {"room": room, "packet": self.server.packet_class(packet.EVENT, namespace=namespace, data=[event, data]).encode()}
            for event, data, room in emits
        ]
        message = {
            "host_id": self.host_id,  # first: see _listen
            "method": "emit",
            "event": None,
            "data": None,
            "batch": batch,
            "binary": False,
            "namespace": namespace,
            "room": None,
            "skip_sid": None,
            "callback": None,
            # for the other processes only: never part of a packet, so it reaches no client
            "battle": battle,
        }
        self._handle_emit(message)  # this process's rooms now
        self._publish(message)  # the other processes' rooms

    def _handle_emit(self, message: dict[str, Any]) -> None:
        batch = message.get("batch")
        if batch is None:
            super()._handle_emit(message)
            return
        battle = message.get("battle")
        if battle is not None and self.on_peer_battle is not None and message.get("host_id") != self.host_id:
            try:
                self.on_peer_battle(battle)  # before the clients here see the update and answer it
            except Exception:  # a cache only: the batch must still go out
                log.exception("could not keep the battle another process sent")
        namespace = message.get("namespace") or "/"
        if namespace not in self.rooms:
            return
        for item in batch:
            ready = eio_packet.Packet(eio_packet.MESSAGE, item["packet"])
            for _sid, eio_sid in self.get_participants(namespace, item["room"]):
                self.server._send_eio_packet(eio_sid, ready)
