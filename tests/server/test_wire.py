"""The board's JSON writer (orjson with a standard-library fallback) and its Socket.IO packet class."""

from __future__ import annotations

import json
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


def test_the_queue_drops_a_process_own_batches_undecoded(monkeypatch: Any) -> None:
    """Redis hands each message back to its publisher; a batch already reached that process's rooms."""
    manager = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-own-batches")
    other = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-own-batches")
    emits = [("update", {"v": 1}, "t1:spectators")]
    published: list[bytes] = []
    for m in (manager, other):
        monkeypatch.setattr(m, "_publish", lambda data, m=m: published.append(m.json.dumps(data).encode()))
        monkeypatch.setattr(m, "_handle_emit", lambda message: None)
        m.set_server(SimpleNamespace(packet_class=wire.BoardPacket))
        assert m.json is wire.QueueJson  # not the packets' JSON module python-socketio would set
    manager.emit_many(emits)
    other.emit_many(emits)
    plain = b'{"method":"enter_room","sid":"x","room":"r","namespace":"/","host_id":"' + manager.host_id.encode() + b'"}'
    monkeypatch.setattr(wire.socketio.RedisManager, "_listen", lambda self: iter([*published, plain]))
    heard = list(manager._listen())
    assert heard == [published[1], plain]  # the other process's batch and every non-batch message
    assert wire.loads(heard[0])["batch"][0]["room"] == "t1:spectators"


def test_a_peer_battle_is_kept_before_its_batch_reaches_the_rooms_and_never_in_a_packet() -> None:
    """Another process's batch carries the battle as its command left it: this process keeps it
    (its next command on that battle needs no read), then sends the packets, which hold only the
    projections. A process's own batch is not handed back to it."""
    order: list[tuple[str, Any]] = []
    manager = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-peer-battle")
    peer = wire.BoardRedisManager("redis://127.0.0.1:6379/0", "test-peer-battle")
    manager.set_server(SimpleNamespace(packet_class=wire.BoardPacket, eio=SimpleNamespace(generate_id=lambda: "sid-1"),
                                       _send_eio_packet=lambda eio_sid, pkt: order.append(("packet", pkt.data))))
    peer.set_server(SimpleNamespace(packet_class=wire.BoardPacket, _send_eio_packet=lambda eio_sid, pkt: None))
    manager.on_peer_battle = lambda battle: order.append(("battle", battle))
    sid = manager.connect("eio-1", "/")
    manager.basic_enter_room(sid, "/", "t1:spectators")
    battle = {"id": 7, "table_id": 1, "system_id": "phantoms-bane", "version": 4, "state": {"secret": "attack"}, "seed": "s33d", "status": "active"}
    sent: list[dict[str, Any]] = []
    peer._publish = lambda data: sent.append(wire.loads(wire.dumps(data)))  # type: ignore[method-assign]
    peer.emit_many([("update", {"v": 4}, "t1:spectators")], battle=battle)
    manager._handle_emit(sent[0])  # as the listener hands it over
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
    manager._handle_emit(sent[0])
    assert [kind for kind, _ in order] == ["packet"]


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
