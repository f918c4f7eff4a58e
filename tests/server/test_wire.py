"""The board's JSON writer (orjson with a standard-library fallback) and its Socket.IO packet class."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from socketio import packet

from tests.conftest import Table
from webapp import wire
from webapp.app import socketio

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),  # beyond 64 bits too: a client may send them
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.one_of(st.text(max_size=8), st.integers(-5, 5)), inner, max_size=5),
    max_leaves=30,
)


@given(json_values)
def test_dumps_writes_what_the_standard_library_reads_back_the_same(value: Any) -> None:
    assert json.loads(wire.dumps(value)) == json.loads(json.dumps(value))


def test_dumps_falls_back_for_integers_beyond_64_bits() -> None:
    assert wire.dumps({"n": 2**70}) == '{"n":1180591620717411303424}'
    assert wire.loads(wire.dumps({"n": [1, 2]})) == {"n": [1, 2]}


def test_board_packets_encode_as_the_default_packets_do() -> None:
    data = ["update", {"battle_id": 3, "view": {"name": "<b>Jharek</b>", "hp": [1, 2.5, None]}, "ok": True}]
    board = wire.BoardPacket(packet.EVENT, data=data).encode()
    default = packet.Packet(packet.EVENT, data=data).encode()
    assert board == default
    assert wire.BoardPacket(packet.EVENT, data=[*data, b"bytes"]).packet_type == packet.EVENT  # no binary search


def test_the_database_and_the_queue_read_what_orjson_refuses() -> None:
    assert wire.loads(b'{"n":1180591620717411303424}') == {"n": 2**70}
    assert wire.loads('{"a":[1,2]}') == {"a": [1, 2]}


class FakeServer(SimpleNamespace):
    """What the queue manager uses of python-socketio's server: the packet class, Engine.IO's
    ``send_packet`` (recorded) and ``sleep``."""

    def __init__(self, sent: list[tuple[str, Any]] | None = None) -> None:
        record = sent if sent is not None else []
        super().__init__(packet_class=wire.BoardPacket, slept=[],
                         eio=SimpleNamespace(generate_id=lambda: "sid-1", send_packet=lambda eio_sid, pkt: record.append(("packet", pkt.data))))

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_the_listener_fans_out_the_batches_and_hands_over_everything_else(monkeypatch: Any) -> None:
    """Redis hands each message back to its publisher: a process's own batch reached its rooms when it
    was published (dropped undecoded); another process's batch is fanned out to this process's rooms
    by the listener itself; every other message goes to python-socketio's listener, decoded."""
    heard: list[tuple[str, Any]] = []
    manager = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-own-batches")
    other = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-own-batches")
    emits = [("update", {"v": 1}, "t1:spectators")]
    published: list[bytes] = []
    for m, server in ((manager, FakeServer(heard)), (other, FakeServer())):
        monkeypatch.setattr(m, "_publish", lambda data, m=m: published.append(m.json.dumps(data).encode()))
        m.set_server(server)
        assert m.json is wire.QueueJson  # not the packets' JSON module python-socketio would set
    sid = manager.connect("eio-1", "/")
    manager.basic_enter_room(sid, "/", "t1:spectators")
    manager.emit_many(emits)
    assert len(heard) == 1  # its own rooms at once
    other.emit_many(emits)
    assert published[0].startswith(b'{"method":"board-batch","host_id":"' + manager.host_id.encode())
    assert manager._take(published[0]) is None and len(heard) == 1  # its own: dropped
    assert manager._take(published[1]) is None and len(heard) == 2  # the other's: fanned out here
    assert '"v":1' in heard[1][1]
    plain = b'{"method":"enter_room","sid":"x","room":"r","namespace":"/","host_id":"' + manager.host_id.encode() + b'"}'
    assert manager._take(plain) == wire.loads(plain)  # for python-socketio's listener
    assert manager._take(b"not json") is None


def test_a_peer_battle_is_kept_before_its_batch_reaches_the_rooms_and_never_in_a_packet() -> None:
    """Another process's batch carries the battle as its command left it: this process keeps it
    (its next command on that battle needs no read), then sends the packets, which hold only the
    projections. A process's own batch is not handed back to it."""
    order: list[tuple[str, Any]] = []
    manager = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-peer-battle")
    peer = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-peer-battle")
    manager.set_server(FakeServer(order))
    peer.set_server(FakeServer())
    manager.on_peer_battle = lambda battle: order.append(("battle", battle))
    sid = manager.connect("eio-1", "/")
    manager.basic_enter_room(sid, "/", "t1:spectators")
    battle = {"id": 7, "table_id": 1, "system_id": "phantoms-bane", "version": 4, "state": {"secret": "attack"}, "seed": "s33d", "status": "active"}
    sent: list[bytes] = []
    peer._publish = lambda data: sent.append(wire.dumps_bytes(data))  # type: ignore[method-assign]
    peer.emit_many([("update", {"v": 4}, "t1:spectators")], battle=battle)
    manager._take(sent[0])  # as the listener reads it
    assert [kind for kind, _ in order] == ["battle", "packet"]
    assert order[0][1] == battle
    packet_text = order[1][1]
    assert '"v":4' in packet_text and "s33d" not in packet_text and "secret" not in packet_text
    # this process's own batch reaches its rooms at once and is not taken as a peer's battle
    order.clear()
    manager._publish = lambda data: None  # type: ignore[method-assign]
    manager.emit_many([("update", {"v": 5}, "t1:spectators")], battle={**battle, "version": 5})
    assert [kind for kind, _ in order] == ["packet"]
    # a failing keeper does not stop the batch
    manager.on_peer_battle = lambda battle: 1 / 0
    order.clear()
    manager._take(sent[0])
    assert [kind for kind, _ in order] == ["packet"]


class FlakyRedis:
    """A Redis client whose connection fails ``down`` times, then delivers ``messages`` and fails again."""

    def __init__(self, down: int, messages: list[bytes]) -> None:
        self.down, self.messages, self.subscribed = down, list(messages), 0

    def client(self, **_: Any) -> Any:
        return self

    def pubsub(self, **_: Any) -> Any:
        return self

    def subscribe(self, channel: str) -> None:
        if self.down > 0:
            self.down -= 1
            raise ConnectionError("Connection refused")
        self.subscribed += 1

    def get_message(self, timeout: float) -> Any:
        if not self.messages:
            raise ConnectionError("Connection reset by peer")
        return {"type": "message", "channel": b"test-flaky", "data": self.messages.pop(0)}

    def close(self) -> None:
        pass


def test_the_listener_tries_again_at_once_and_tells_the_pages_when_redis_is_back(monkeypatch: Any) -> None:
    """Redis away: the listener tries again every RETRY_SECONDS (python-socketio's own backs off up to
    a minute) and, once it is back, calls on_reconnect before handing over what it reads."""
    manager = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-flaky")
    server = FakeServer()
    manager.set_server(server)
    plain = b'{"method":"enter_room","sid":"x","room":"r","namespace":"/","host_id":"elsewhere"}'
    redis = FlakyRedis(down=3, messages=[plain])
    monkeypatch.setattr(manager, "_client", redis.client)
    told: list[str] = []
    manager.on_reconnect = lambda: told.append("back")
    first = manager._listen()
    assert next(first) == wire.loads(plain)
    assert told == ["back"] and server.slept == [manager.RETRY_SECONDS] * 3
    assert manager.RETRY_SECONDS <= 0.5


def test_a_publish_while_redis_is_down_gives_up_at_once(monkeypatch: Any) -> None:
    manager = wire.BoardRedisManager("redis://127.0.0.1:1/0", "test-down")  # nothing listens there
    manager.set_server(FakeServer())
    start = time.monotonic()
    for _ in range(20):
        manager._publish({"method": "emit"})
    assert time.monotonic() - start < 2.0  # refused at once, then not even tried for a moment


def test_the_queue_relies_only_on_python_socketios_extension_points() -> None:
    """Of python-socketio's private names, the Redis fan-out overrides and calls only a pub/sub
    manager's documented extension points, ``_publish`` and ``_listen``; it sends through the public
    API (``get_participants``, Engine.IO's ``send_packet``), never the server's private senders."""
    import inspect
    import re

    import socketio as python_socketio

    theirs = {name for cls in python_socketio.RedisManager.__mro__ for name in vars(cls)}
    theirs |= set(vars(python_socketio.RedisManager("redis://127.0.0.1:1/0", write_only=True)))
    theirs |= {name for cls in python_socketio.Server.__mro__ for name in vars(cls)}
    source = inspect.getsource(wire.BoardRedisManager)
    used = set(re.findall(r"\bself\.(?:server\.(?:eio\.)?)?(_[A-Za-z]\w*)", source)) | set(vars(wire.BoardRedisManager))
    private = {name for name in used & theirs if name.startswith("_") and not name.startswith("__")}
    assert private == {"_publish", "_listen"}
    assert "self.server._" not in source and "self.server.eio._" not in source


def test_the_app_sends_board_packets(duel: Table) -> None:
    assert socketio.server.packet_class is wire.BoardPacket


def test_a_number_a_browser_cannot_hold_is_refused_with_a_clear_error(duel: Table) -> None:
    client = duel.alice()
    before = duel.version
    for huge in (2**53, -(2**53), 10**30):
        ack = client.emit(
            "declare",
            {
                "battle_id": duel.battle_id,
                "expected_v": before,
                "declaration": {"type": "choose", "combatant": "jharek", "option": "attack", "note": [{"n": huge}]},
            },
            callback=True,
        )
        assert ack["ok"] is False and ack["code"] == "invalid", ack
        assert "whole numbers must lie between" in ack["error"]
    assert duel.version == before
    ack = client.emit(
        "declare",
        {"battle_id": duel.battle_id, "expected_v": before,
         "declaration": {"type": "choose", "combatant": "jharek", "option": "attack", "note": 2**53 - 1}},
        callback=True,
    )
    assert ack["ok"], ack


def test_a_payload_nested_too_deeply_is_refused(duel: Table) -> None:
    nested: list[Any] = []
    for _ in range(40):
        nested = [nested]
    ack = duel.alice().emit("declare", {"battle_id": duel.battle_id, "declaration": {"type": "choose", "x": nested}}, callback=True)
    assert ack["ok"] is False and "nested too deeply" in ack["error"]
