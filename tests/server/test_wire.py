"""The board's JSON writer (orjson with a standard-library fallback) and its Socket.IO packet class."""

from __future__ import annotations

import json
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
