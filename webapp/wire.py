"""JSON as the board writes it: to the sockets and into the database.

Every accepted command is written to the database and sent to each projection room, so encoding
JSON is a large part of its cost. orjson writes the same JSON several times faster than the standard
library; the standard library stays as the fallback for what orjson refuses (integers beyond 64
bits, which a client can send inside a declaration) and as the reader of everything a client sends
(its error messages are the familiar ones, and the socket layer checks for NaN itself).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
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


#: the method of a message that carries all of a command's projections (see BoardRedisManager)
BATCH = "board-batch"


class BoardRedisManager(socketio.RedisManager):
    """Flask-SocketIO's Redis message queue, plus one message for all the projections of a command,
    and a queue outage that leaves no page behind.

    A command's update goes to several rooms with different payloads (the GM, each seat, the
    spectators). Sent one by one, that is one Redis message per room, each published, then read and
    decoded by every process; :meth:`emit_many` publishes them as one message, which every process
    (this one at once, the others as they read it) fans out to its own rooms in order.

    Only python-socketio's documented extension points of a pub/sub manager are overridden:
    :meth:`_publish` and :meth:`_listen`. The listener reads the channel on its own connection and
    fans the batches out itself; when Redis goes away it tries again every :attr:`RETRY_SECONDS`
    (python-socketio's own listener backs off up to a minute), and once it is back it calls
    :attr:`on_reconnect`: updates of the other processes were lost meanwhile, so this process's
    pages are told at once where things stand (:meth:`webapp.sockets.Hub.queue_back`). While Redis
    is down, a publish gives up at once (a command is not held up) and the other processes' pages
    catch up the same way when it is back."""

    #: seconds between attempts to reach Redis again while it is down
    RETRY_SECONDS = 0.25

    def __init__(self, url: str, channel: str) -> None:
        super().__init__(url, channel=channel, write_only=False, json=QueueJson)
        # how this process's own batches begin on the wire (its first keys: see emit_many)
        self._own_batch = b'{"method":"' + BATCH.encode() + b'","host_id":"' + self.host_id.encode() + b'"'
        #: called with the ``battle`` another process sent along with its batch, before its rooms here
        #: get the batch (the battle as that process's command left it; see BattleService.learn_battle)
        self.on_peer_battle: Callable[[dict[str, Any]], Any] | None = None
        #: called (in the listener) when the connection to Redis is back after it was lost
        self.on_reconnect: Callable[[], Any] | None = None
        self._publisher: Any = None
        self._publish_down_at: float | None = None
        self._publish_tried = 0.0

    def set_server(self, server: Any) -> None:
        super().set_server(server)
        self.json = QueueJson  # python-socketio swaps in the packets' JSON module here

    def _client(self, **options: Any) -> Any:
        """A Redis client of the queue's address that fails fast: no retries of its own (the
        listener retries, a publish gives up) and a short connection timeout."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        return redis.Redis.from_url(self.redis_url, **{"socket_connect_timeout": 1.0, "retry": Retry(NoBackoff(), 0), **options,
                                                       **self.redis_options})

    # --- publishing ----------------------------------------------------------------------------
    def _publish(self, data: Any) -> None:
        now = time.monotonic()
        if self._publish_down_at is not None and now - self._publish_tried < self.RETRY_SECONDS:
            return  # Redis is down: the pages of the other processes catch up once it is back
        self._publish_tried = now
        try:
            if self._publisher is None:
                self._publisher = self._client(socket_timeout=2.0)
            self._publisher.publish(self.channel, self.json.dumps(data))
        except Exception as exc:  # noqa: BLE001 (any failure of the queue: the command stands)
            if self._publish_down_at is None:
                log.warning("cannot publish to the message queue (%s): the other processes' pages catch up when it is back", exc)
                self._publish_down_at = now
            return
        if self._publish_down_at is not None:
            log.warning("publishing to the message queue again after %.1f s", now - self._publish_down_at)
            self._publish_down_at = None

    def emit_many(self, emits: list[tuple[str, Any, str | list[str]]], namespace: str = "/", battle: dict[str, Any] | None = None) -> None:
        # each payload is encoded once, here, as its Socket.IO packet: no process decodes and
        # re-encodes it on the way to its sockets
        batch = [
            {"room": room, "packet": self.server.packet_class(packet.EVENT, namespace=namespace, data=[event, data]).encode()}
            for event, data, room in emits
        ]
        self._deliver(namespace, batch)  # this process's rooms now
        # the method and this process's id first: see _own_batch; ``battle`` is for the other
        # processes only (never part of a packet, so it reaches no client)
        self._publish({"method": BATCH, "host_id": self.host_id, "namespace": namespace, "batch": batch, "battle": battle})

    def _deliver(self, namespace: str, batch: list[dict[str, Any]]) -> None:
        """Send a batch's ready packets to this process's sockets in its rooms."""
        if namespace not in self.rooms:
            return
        for item in batch:
            ready = eio_packet.Packet(eio_packet.MESSAGE, item["packet"])
            for _sid, eio_sid in self.get_participants(namespace, item["room"]):
                self.server.eio.send_packet(eio_sid, ready)

    # --- listening -----------------------------------------------------------------------------
    def _listen(self) -> Any:
        """The channel's messages for python-socketio's listener (decoded), bar the batches, which
        are fanned out here; reconnects every RETRY_SECONDS while Redis is down, and tells
        :attr:`on_reconnect` when it is back."""
        channel = self.channel.encode()
        lost_at: float | None = None
        while True:
            pubsub = None
            try:
                # health checks: a connection that died silently is noticed within seconds
                pubsub = self._client(socket_keepalive=True, health_check_interval=5).pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                if lost_at is not None:
                    log.warning("the message queue is back after %.1f s", time.monotonic() - lost_at)
                    lost_at = None
                    self._reconnected()
                while True:
                    message = pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "message" or message.get("channel") != channel:
                        continue
                    data = self._take(message.get("data"))
                    if data is not None:
                        yield data
            except Exception as exc:  # noqa: BLE001 (Redis away: try again shortly)
                if lost_at is None:
                    log.warning("the message queue is unreachable (%s): updates between the processes wait for it; "
                                "every page catches up when it is back", exc)
                    lost_at = time.monotonic()
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        pubsub.close()
                self.server.sleep(self.RETRY_SECONDS)

    def _reconnected(self) -> None:
        if self.on_reconnect is not None:
            try:
                self.on_reconnect()
            except Exception:  # the heartbeat still comes
                log.exception("could not tell the pages to catch up")

    def _take(self, raw: Any) -> dict[str, Any] | None:
        """One message of the channel: a batch is fanned out here (None); anything else is decoded
        for python-socketio's listener."""
        if isinstance(raw, bytes) and raw.startswith(self._own_batch):
            return None  # this process's own batch: its rooms here got it when it was published
        try:
            data = self.json.loads(raw)
        except (ValueError, TypeError):
            return None
        if not isinstance(data, dict):
            return None
        if data.get("method") != BATCH:
            return data
        if data.get("host_id") != self.host_id and isinstance(data.get("batch"), list):
            battle = data.get("battle")
            if battle is not None and self.on_peer_battle is not None:
                try:
                    self.on_peer_battle(battle)  # before the clients here see the update and answer it
                except Exception:  # a cache only: the batch must still go out
                    log.exception("could not keep the battle another process sent")
            self._deliver(data.get("namespace") or "/", data["batch"])
        return None
