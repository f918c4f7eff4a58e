"""The contract test: no spectator or other-seat payload ever carries a hidden value.

For every rule system that is built, a battle from its presets is played through Socket.IO test
clients — a GM, two seats and a spectator — with declarations drawn from each viewer's own
``view["legal"]``. Everything the seats and the spectator receive (updates, table payloads, acks,
errors) is recorded and checked against the event log: no event whose visibility excludes the
receiver (unless the same text is also visible to it), no GM notes, no dice seed (the battle's or a
derived one), no join code, no key of the GM or of another seat.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from sqlmodel import select

from rules import Viewer, available_systems, derive_seed, get_system
from rules.core import may_see
from rules.dice import command_seed
from tests.conftest import make_app
from tests.server.test_sockets import without_menus
from webapp.app import socketio
from webapp.models import BattleEvent, GameTable

SYSTEM_IDS = [system.id for system in available_systems()]
#: keys of a legal entry that only describe it, never part of the declaration
PRESENTATION = {"label", "help", "testid", "selected", "fields", "destinations", "reachable", "params", "name"}
GM_NOTES = "GM-NOTES: the innkeeper is the necromancer <b>zq-notes-7731</b>"
SEED = "leak-test-seed-6d1f0c"
MAX_ATTEMPTS = 160
MAX_ACCEPTED = 70


def _pick(value: Any) -> Any:
    if isinstance(value, dict):
        for key in ("value", "id", "name"):
            if key in value:
                return value[key]
        return None
    if isinstance(value, list | tuple):
        return value[0] if value else None
    return value


def play_seated_battle(service: Any, system_id: str, name: str, seed: str, most: int) -> tuple[Any, int, int]:
    """A table of ``system_id`` with two seats, its battle started with ``seed`` and played by up to
    ``most`` random declarations the rules offer the GM; its table, battle id and how many were accepted."""
    from rules import RulesError, get_system

    system = get_system(system_id)
    table = service.create_table(name, system_id)
    _, one = service.join(table.join_code, "One")
    _, two = service.join(table.join_code, "Two")
    service.set_lineup(table.id, lineup_for(system, [one.public_id, two.public_id]))
    battle_id = service.start_battle(table.id, seed=seed).battle_id
    rng = random.Random(system_id)
    accepted = 0
    for attempt in range(80):
        battle = service.battle(battle_id)
        if battle.status == "ended" or accepted >= most:
            break
        legal = system.view_for(battle.state, Viewer.gm()).get("legal") or []
        if not legal:
            break
        try:
            service.declare(battle_id, Viewer.gm(), declaration_from(rng.choice(legal), rng), msg_id=f"r{attempt}")
            accepted += 1
        except RulesError:
            pass
    return table, battle_id, accepted


def declaration_from(item: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A declaration built the way a board module builds one from a legal entry and its form."""
    decl = {k: v for k, v in item.items() if k not in PRESENTATION and not isinstance(v, list | dict)}
    for field in item.get("fields") or []:
        choices = field.get("choices") or []
        if choices:
            decl[field["name"]] = _pick(rng.choice(choices))
        elif field.get("default") is not None:
            decl[field["name"]] = field["default"]
    if item.get("destinations"):
        cell = rng.choice(item["destinations"])
        decl["x"], decl["y"] = cell["x"], cell["y"]
    if item.get("reachable"):
        decl["x"], decl["y"] = rng.choice(item["reachable"])[:2]
    _choose_alternatives(item, decl, rng)
    return decl


def _choose_alternatives(item: dict[str, Any], decl: dict[str, Any], rng: random.Random) -> None:
    """A list under a plural key offers alternatives: pick one for the singular key (or merge its fields)."""
    for key, value in item.items():
        if not (key.endswith("s") and isinstance(value, list) and value and key[:-1] not in decl and key not in PRESENTATION):
            continue
        chosen = rng.choice(value)
        picked = _pick(chosen)
        if isinstance(picked, str | int) and not isinstance(picked, bool):
            decl[key[:-1]] = picked
        elif isinstance(chosen, dict):  # an alternative described by its own fields (e.g. a kind of action)
            decl.update({k: v for k, v in chosen.items() if k not in PRESENTATION and not isinstance(v, list | dict) and k not in decl})
            _choose_alternatives(chosen, decl, rng)


def lineup_for(system: Any, seats: list[str]) -> list[dict[str, Any]]:
    presets = system.presets()
    size = 4 if system.max_combatants >= 4 else 2
    controllers = [("seat", seats[0]), ("seat", seats[1]), ("gm", None), ("computer", None)]
    lineup = []
    for i in range(size):
        entry = dict(presets[i % len(presets)])
        controller, seat = controllers[i]
        entry.update(id=f"c{i + 1}", side=system.sides[i % 2], controller=controller, seat=seat)
        lineup.append(entry)
    return lineup


class Recorder:
    """A test client that keeps everything it receives, acks included, and its latest view."""

    def __init__(self, app: Any, slug: str, token: str | None) -> None:
        self.client = socketio.test_client(app, auth={"table": slug, "token": token}, flask_test_client=app.test_client())
        assert self.client.is_connected()
        self.transcript: list[Any] = []
        self.battle: dict[str, Any] | None = None

    def drain(self) -> None:
        for message in self.client.get_received():
            self.transcript.append(message)
            if message["name"] == "update":
                payload = message["args"][0]
                if self.battle is None or payload["v"] >= self.battle["v"]:
                    self.battle = payload

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        ack = self.client.emit(event, payload, callback=True)
        self.transcript.append({"ack": event, "reply": ack})
        self.drain()
        return ack

    def sync(self) -> dict[str, Any]:
        ack = self.call("sync", {})
        if ack.get("battle") and (self.battle is None or ack["battle"]["v"] >= self.battle["v"]):
            self.battle = ack["battle"]
        return ack

    def received_events(self) -> list[dict[str, Any]]:
        found = []
        for message in self.transcript:
            if "ack" in message:
                battle = (message["reply"] or {}).get("battle") or {}
                found += battle.get("events") or []
            elif message["name"] == "update":
                found += message["args"][0].get("events") or []
        return found


def needle(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_no_hidden_value_reaches_a_spectator_or_another_seat(tmp_path: Any, system_id: str) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    try:
        table = service.create_table("Leak test", system_id)
        _, seat_one = service.join(table.join_code, "Seat One")
        _, seat_two = service.join(table.join_code, "Seat Two")
        service.set_lineup(table.id, lineup_for(system, [seat_one.public_id, seat_two.public_id]))
        service.set_notes(table.id, GM_NOTES)
        battle_id = service.start_battle(table.id, seed=SEED).battle_id

        gm = Recorder(app, table.slug, table.gm_token)
        one = Recorder(app, table.slug, seat_one.token)
        two = Recorder(app, table.slug, seat_two.token)
        spectator = Recorder(app, table.slug, None)
        everyone = [gm, one, two, spectator]
        for client in everyone:
            client.sync()

        rng = random.Random(system_id)
        accepted = attempts = 0
        while attempts < MAX_ATTEMPTS and accepted < MAX_ACCEPTED:
            attempts += 1
            if service.battle(battle_id).status == "ended":
                break
            menus = [(c, item) for c in (gm, one, two) if c.battle for item in c.battle["view"].get("legal") or []]
            if not menus:
                break
            actor, item = rng.choice(menus)
            assert actor.battle is not None
            version = service.battle(battle_id).version
            ack = actor.call(
                "declare",
                {"battle_id": battle_id, "expected_v": version, "declaration": declaration_from(item, rng), "msg_id": f"m{attempts}"},
            )
            assert ack.get("code") != "server_error", (item, ack)
            if ack["ok"]:
                accepted += 1
            else:  # a refused declaration changes nothing
                assert service.battle(battle_id).version == version
            for client in everyone:
                client.drain()
                if client.battle is None or client.battle["v"] < service.battle(battle_id).version - 1:
                    client.sync()
        # the GM sees the players' side too: also exercise a sync from an old version
        for client in everyone:
            client.call("sync", {"battle_id": battle_id, "since_v": 1})
        print(system_id, "accepted", accepted, "of", attempts)
        assert accepted >= 1, f"{system_id}: no declaration drawn from view['legal'] was accepted"

        battle = service.battle(battle_id)
        state = battle.state
        with service.session() as s:
            log = s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id)).all()
            join_code = s.exec(select(GameTable.join_code).where(GameTable.id == table.id)).one()
        by_position = {(row.version, row.index): row for row in log}
        secrets_everywhere = [GM_NOTES, "zq-notes-7731", join_code, table.gm_token, table.library]
        # the dice seed and every seed derived from it: secret while the battle runs (the end reveals the seed)
        seed_secrets = [battle.seed] + [derive_seed(battle.seed, v) for v in range(0, battle.version + 2)] + [
            command_seed(battle.seed, battle.mix, v) for v in range(0, battle.version + 2)
        ]
        viewers = {
            "seat one": (one, Viewer.player(seat_one.public_id), [seat_two.token]),
            "seat two": (two, Viewer.player(seat_two.public_id), [seat_one.token]),
            "spectator": (spectator, Viewer.spectator(), [seat_one.token, seat_two.token]),
        }
        for label, (client, viewer, other_tokens) in viewers.items():
            blob = json.dumps(client.transcript, ensure_ascii=False, default=str)
            for secret in secrets_everywhere + other_tokens:
                assert needle(secret) not in blob, f"{system_id}: {label} received a secret ({secret[:12]}…)"
            running = json.dumps(before_the_end(client.transcript), ensure_ascii=False, default=str)
            for secret in seed_secrets:
                assert needle(secret) not in running, f"{system_id}: {label} received the dice seed before the end ({secret[:12]}…)"
            for ev in client.received_events():
                row = by_position.get((ev["v"], ev["i"]))
                assert row is not None, f"{system_id}: {label} got an event that is not in the log: {ev}"
                assert may_see(row.visibility, viewer, state), f"{system_id}: {label} got a {row.visibility} event: {ev}"
            visible = {str(r.payload.get("text", "")) for r in log if may_see(r.visibility, viewer, state)}
            hidden = {
                str(r.payload.get("text", ""))
                for r in log
                if not may_see(r.visibility, viewer, state)
            } - visible
            print(system_id, label, "hidden texts", len(hidden), "events received", len(client.received_events()))
            for text in hidden:
                if len(text) >= 8:
                    assert needle(text) not in blob, f"{system_id}: {label} received hidden text: {text!r}"
    finally:
        service.engine.dispose()


def before_the_end(transcript: list[Any]) -> list[Any]:
    """A client's messages up to the one that told it the battle ended (which reveals the dice seed)."""
    for index, message in enumerate(transcript):
        text = json.dumps(message, default=str)
        if '"dice.revealed"' in text or '"status": "ended"' in text:
            return transcript[:index]
    return transcript


def test_seats_that_control_nothing_get_their_own_correct_view(tmp_path: Any) -> None:
    """Idle seats share one projection on the wire; each still sees exactly what a sync shows it."""
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    try:
        table = service.create_table("Idle seats", "phantoms-bane")
        seats = [service.join(table.join_code, f"P{i}")[1] for i in range(5)]
        service.set_lineup(table.id, lineup_for(get_system("phantoms-bane"), [seats[0].public_id, seats[1].public_id]))
        battle_id = service.start_battle(table.id, seed=SEED).battle_id
        clients = [Recorder(app, table.slug, seat.token) for seat in seats]
        spectator = Recorder(app, table.slug, None)
        for client in [*clients, spectator]:
            client.sync()
        version = service.battle(battle_id).version
        ack = clients[0].call("declare", {"battle_id": battle_id, "expected_v": version,
                                          "declaration": {"type": "choose", "combatant": "c1", "option": "defend"}})
        assert ack["ok"], ack
        for client in [*clients, spectator]:
            client.drain()
            update = client.battle
            assert update is not None and update["v"] == version + 1
            fresh = client.call("sync", {"battle_id": battle_id, "since_v": version})["battle"]
            assert update["view"] == fresh["view"]
        for client in [*clients[1:], spectator]:  # the secret choice stays with seat one
            updates = [m for m in client.transcript if "ack" not in m and m["name"] == "update"]
            assert "defend" not in without_menus(updates), "a secret choice reached another seat"
    finally:
        service.engine.dispose()
