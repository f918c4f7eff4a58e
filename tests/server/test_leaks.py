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
import re
from typing import Any

import pytest
from sqlmodel import select

from rules import Viewer, available_systems, derive_seed, get_system
from rules.dice import command_seed
from tests.conftest import make_app
from tests.server.test_sockets import without_menus
from webapp.app import socketio
from webapp.models import BattleEvent, GameTable
from webapp.store import told_version

SYSTEM_IDS = [system.id for system in available_systems()]
#: keys of a legal entry that only describe it, never part of the declaration
PRESENTATION = {"label", "help", "testid", "selected", "fields", "destinations", "reachable", "params", "name"}
GM_NOTES = "GM-NOTES: the innkeeper is the necromancer <b>zq-notes-7731</b>"
SEED = "leak-test-seed-6d1f0c"
MAX_ATTEMPTS = 150


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


#: what each system's words call a value its views hide from a viewer: the view's key, and the
#: patterns of its words with the value in place of {v} (its size, unsigned, in place of {a}) (a value counts as hidden from a viewer
#: when the GM's view has it and the viewer's view has it nowhere)
LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "eclipse-phase": {
        "melee": (r"\bMelee {v}\b",), "guns": (r"\bGuns {v}\b",), "athletics": (r"\bAthletics {v}\b",),
        "fray": (r"\bFray {v}\b",), "som": (r"\bSOM {v}\b",), "som_check": (r"\bSOM check {v}\b", r"\({v} [−-]\d+ for"),
        "kinetic_armour": (r"\bkinetic armour {v}\b",), "energy_armour": (r"\benergy armour {v}\b",),
        "durability": (r"\bDurability {v}\b",), "target": (r"\btarget number {v}\b", r"\bagainst {v}\b", r"\bvs {v}\b"),
        "damage": (r"\bto {v} damage\b",), "skill_value": (r"\b(?:Melee|Guns|Fray|Athletics) {v}\b",),
    },
    "adnd": {
        "ac": (r"\bAC {v}\b",), "thac0": (r"\bTHAC0 {v}\b",), "hp": (r"\({v} to -?\d+\)", r"\b{v}/\d+ hp\b"),
        "hp_max": (r"/{v} hp\b",), "morale_score": (r"\({v}%\)",),
        "reaction_mod": (r"\breaction adjustment [+−-]{a}\b", r"\breaction [+−-]{a} \+ \d", r"\bdie \d+[+−-]{a} = "),
    },
    "phantoms-bane": {"temperament": (r"\b{v}\b",)},
    "olympia": {},
    "battles-and-balances": {},
    # the sixth system, from tests/systems/one_die/: the first roll of a round, until the second is in
    "one-die": {"roll": (r"\brolls {v} in secret\b",)},
}


def _leaves(view: Any, keys: dict[str, tuple[str, ...]], found: set[tuple[str, Any]]) -> set[tuple[str, Any]]:
    """The (key, value) pairs of a view whose key the system's words label (legal menus left out)."""
    if isinstance(view, dict):
        for key, value in view.items():
            if key == "legal":
                continue
            if key in keys and isinstance(value, int | str) and not isinstance(value, bool):
                found.add((key, value))
            else:
                _leaves(value, keys, found)
    elif isinstance(view, list):
        for item in view:
            _leaves(item, keys, found)
    return found


class Secrets:
    """What one viewer may not see, gathered at every version of a battle: the labelled values its
    view hides and the words that would tell them."""

    def __init__(self, system: Any, viewer: Viewer) -> None:
        self.system, self.viewer = system, viewer
        # (a system not listed, one of BATTLEBOARD_SYSTEMS, is checked on its events' words alone)
        self.keys = LABELS.get(system.id, {})
        self.hidden: set[tuple[str, Any]] = set()
        self.seen: set[tuple[str, Any]] = set()
        self.patterns: set[str] = set()

    def observe(self, state: dict[str, Any], gm_view: dict[str, Any], view: dict[str, Any]) -> None:
        """One version: the state, and the GM's and this viewer's views of it."""
        mine = _leaves(view, self.keys, set())
        self.seen |= mine
        self.hidden |= _leaves(gm_view, self.keys, set()) - mine
        self.patterns |= extra_patterns(self.system.id, state, self.viewer)

    def regexes(self) -> list[re.Pattern[str]]:
        out = [re.compile(p) for p in self.patterns]
        for key, value in self.hidden - self.seen:
            out += [re.compile(template.replace("{v}", re.escape(str(value))).replace("{a}", re.escape(str(abs(value)) if isinstance(value, int) else str(value))))
                    for template in self.keys[key]]
        return out


def extra_patterns(system_id: str, state: dict[str, Any], viewer: Viewer) -> set[str]:
    """Words that tell a hidden value without its label: which pool a combatant whose numbers the
    viewer does not see spent (Eclipse Phase), the number an attack needed when a stat of either
    side is hidden (AD&D)."""
    if system_id == "eclipse-phase":
        return {rf"\b{re.escape(c['name'])} spends (?:Vigor|Flex|Moxie|Insight)\b" for cid, c in state["combatants"].items()
                if not (viewer.is_gm or viewer.controls(state, cid))}
    if system_id == "adnd":
        return {rf"\b{re.escape(c['name'])}\b[^.]*\d+ against \d+ needed" for c in state["combatants"].values() if c["controller"] != "seat"}
    return set()


def strings_in(value: Any, skip: tuple[str, ...] = ()) -> list[str]:
    """Every text in a JSON-shaped value (bar what is under the keys ``skip``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() if key not in skip for s in strings_in(item, skip)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in strings_in(item, skip)]
    return []


def sensible(system_id: str, item: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A declaration the rules will take from a menu entry the generic builder gets wrong."""
    if system_id == "eclipse-phase" and item.get("type") == "attack":
        options = [(t["id"], w["index"]) for w in item["weapons"] for t in item["targets"] if t["id"] in w["preview"]]
        if not options:
            return None
        target, weapon = rng.choice(options)
        return {"type": "attack", "combatant": item["combatant"], "target": target, "weapon": weapon,
                "pool": rng.choice(item["pools"])[0]}
    if system_id == "adnd" and item.get("type") == "check_morale" and rng.random() < 0.8:
        return {"type": "check_morale", "skip": True}  # (a failed check often ends the fight at once, in flight)
    if system_id == "adnd" and item.get("type") == "declare" and rng.random() < 0.8:
        blows = [a for a in item["actions"] if a["kind"] in ("melee", "missile", "charge") and a["targets"]]
        if blows:
            action = rng.choice(blows)
            return {"type": "declare", "combatant": item["combatant"], "kind": action["kind"], "target": rng.choice(action["targets"])["id"]}
    return None


#: menu entries a battle gets to its end with
FIGHTING = {"roll", "attack", "defend", "accept", "spend", "choose", "step", "begin", "resolve_next", "resolve_all", "declare",
            "roll_order", "roll_initiative", "check_reaction", "check_surprise", "check_distance",
            "end_turn", "advance", "bleed", "next_round"}


def private_note(index: int) -> str:
    return f"private-note-{index}-q7x"


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_no_hidden_value_or_private_note_reaches_a_player_or_spectator(tmp_path: Any, system_id: str) -> None:
    """The contract of every system, over every surface a player or a spectator gets: a seeded battle
    with hidden NPCs and private notes, played to its end from each viewer's own menus. No value a
    viewer's view hides (in the words the system labels it with) and no private note reaches it:
    not in its socket frames (views, events, acks), nor in the shared replay, export and report; no
    event it may not see; no GM notes, dice seed (before the end), join code or key. A GM's secret
    change sends it nothing, so its updates follow on from each other with no gap to sync over."""
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    try:
        table = service.create_table("Leak test", system_id)
        _, seat_one = service.join(table.join_code, "Seat One")
        _, seat_two = service.join(table.join_code, "Seat Two")
        lineup = lineup_for(system, [seat_one.public_id, seat_two.public_id])
        notes = [GM_NOTES]
        if any(f.name == "notes" for f in system.combatant_fields()):  # a GM's note on each combatant
            for i, entry in enumerate(lineup):
                entry["notes"] = private_note(100 + i)
                notes.append(entry["notes"])
        service.set_lineup(table.id, lineup)
        service.set_notes(table.id, GM_NOTES)
        battle_id = service.start_battle(table.id, seed=SEED).battle_id

        gm = Recorder(app, table.slug, table.gm_token)
        one = Recorder(app, table.slug, seat_one.token)
        two = Recorder(app, table.slug, seat_two.token)
        spectator = Recorder(app, table.slug, None)
        everyone = [gm, one, two, spectator]
        for client in everyone:
            client.sync()
        others = {
            "seat one": (one, Viewer.player(seat_one.public_id), [seat_two.token]),
            "seat two": (two, Viewer.player(seat_two.public_id), [seat_one.token]),
            "spectator": (spectator, Viewer.spectator(), [seat_one.token, seat_two.token]),
        }
        secrets = {label: Secrets(system, viewer) for label, (_c, viewer, _t) in others.items()}

        def observe(state: dict[str, Any]) -> dict[str, Any]:
            """Each viewer's view of a version, its secrets gathered."""
            gm_view = system.view_for(state, Viewer.gm())
            views = {label: system.view_for(state, viewer) for label, (_c, viewer, _t) in others.items()}
            for label, found in secrets.items():
                found.observe(state, gm_view, views[label])
            return views

        battle = service.battle(battle_id)
        views_before = observe(battle.state)

        rng = random.Random(system_id)
        accepted = attempts = 0
        while attempts < MAX_ATTEMPTS and battle.status != "ended":
            attempts += 1
            menus = [(c, item) for c in (gm, one, two) if c.battle for item in c.battle["view"].get("legal") or []]
            if not menus:
                break
            fighting = [m for m in menus if m[1].get("type") in FIGHTING]
            actor, item = rng.choice(fighting if fighting and rng.random() < 0.85 else menus)
            assert actor.battle is not None
            declaration = sensible(system_id, item, rng) or declaration_from(item, rng)
            npc = battle.state["combatants"].get(declaration.get("combatant") or "", {}).get("controller") not in (None, "seat")
            if "note" in {f.get("name") for f in item.get("fields") or []} and npc:
                declaration["note"] = private_note(attempts)  # the DM's private note on an NPC's action
                notes.append(declaration["note"])
            ack = actor.call("declare", {"battle_id": battle_id, "expected_v": actor.battle["v"], "declaration": declaration,
                                         "msg_id": f"m{attempts}"})
            assert ack.get("code") != "server_error", (item, ack)
            after = service.battle(battle_id)
            if ack["ok"]:
                accepted += 1
                views = observe(after.state)
                if told_version(after) == told_version(battle):  # a GM's secret: nothing the others see changed
                    for label, view in views.items():
                        assert view == views_before[label], f"{system_id}: a secret changed {label}'s view"
                views_before = views
            else:  # a refused declaration changes nothing
                assert after.version == battle.version
            battle = after
            for client in everyone:
                client.drain()
        if battle.status != "ended":  # the rest of a long battle: the GM ends it
            assert gm.call("battle_end", {"battle_id": battle_id})["ok"]
            battle = service.battle(battle_id)
        for client in everyone:
            client.drain()
        print(system_id, "accepted", accepted, "of", attempts, "ended by", "the rules" if attempts < MAX_ATTEMPTS else "the GM")
        assert accepted >= 5, f"{system_id}: too few declarations drawn from view['legal'] were accepted"

        # every page followed the battle update by update, with no gap to sync over, to where a sync says it is
        for label, (client, _viewer, _t) in {**others, "gm": (gm, Viewer.gm(), [])}.items():
            updates = [m["args"][0] for m in client.transcript if "ack" not in m and m["name"] == "update"]
            held = next(m["reply"]["battle"]["v"] for m in client.transcript if "ack" in m and m["ack"] == "sync")
            for update in updates:
                if update["v"] > held:
                    assert update["prev_v"] == held, f"{system_id}: {label} got v{update['v']} after v{held} (prev_v {update['prev_v']})"
                    held = update["v"]
            fresh = client.call("sync", {"battle_id": battle_id, "since_v": 0})["battle"]
            assert held == fresh["v"] and client.battle is not None and client.battle["view"] == fresh["view"], label
        assert gm.call("battle_share", {"battle_id": battle_id, "shareable": True})["ok"]
        stranger = app.test_client()
        base = f"/t/{table.slug}/battles/{battle_id}"
        shared = {name: stranger.get(f"{base}/{name}") for name in ("replay.json", "export.json", "report")}
        assert all(r.status_code == 200 for r in shared.values()), {k: r.status_code for k, r in shared.items()}

        with service.session() as s:
            log = s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id)).all()
            join_code = s.exec(select(GameTable.join_code).where(GameTable.id == table.id)).one()
        by_position = {(row.version, row.index): row for row in log}
        secrets_everywhere = [*notes, "zq-notes-7731", join_code, table.gm_token, table.library]
        # the dice seed and every seed derived from it: secret while the battle runs (the end reveals the seed)
        seed_secrets = [battle.seed] + [derive_seed(battle.seed, v) for v in range(0, battle.version + 2)] + [
            command_seed(battle.seed, battle.mix, v) for v in range(0, battle.version + 2)
        ]
        surfaces = {"replay": shared["replay.json"].get_json(), "export": shared["export.json"].get_json(),
                    "report": shared["report"].get_data(as_text=True)}
        for label, (client, _viewer, other_tokens) in others.items():
            blob = "\n".join(strings_in(client.transcript))
            for secret in secrets_everywhere + other_tokens:
                assert secret not in blob, f"{system_id}: {label} received a secret ({secret[:24]}…)"
            running = "\n".join(strings_in(before_the_end(client.transcript)))
            for secret in seed_secrets:
                assert secret not in running, f"{system_id}: {label} received the dice seed before the end ({secret[:12]}…)"
            for ev in client.received_events():
                assert (ev["v"], ev["i"]) in by_position, f"{system_id}: {label} got an event that is not in the log: {ev}"
            words = "\n".join(strings_in(client.transcript, skip=("help",)))  # views, events, acks, errors (the rules' help is general)
            found = secrets[label]
            assert found.regexes() or system_id in ("olympia", "battles-and-balances"), f"{system_id}: {label} was hidden nothing"
            for pattern in found.regexes():
                hit = pattern.search(words)
                assert hit is None, f"{system_id}: {label} received a hidden value: …{words[max(0, hit.start() - 80):hit.end() + 20]}…"
        public = secrets["spectator"].regexes()
        for name, surface in surfaces.items():
            text = surface if isinstance(surface, str) else "\n".join(strings_in(surface))
            for secret in secrets_everywhere:
                assert secret not in text, f"{system_id}: the shared {name} holds a secret ({secret[:24]}…)"
            for pattern in public:
                hit = pattern.search(text)
                assert hit is None, f"{system_id}: the shared {name} holds a hidden value: …{text[max(0, hit.start() - 80):hit.end() + 20]}…"
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


def updates_of(client: Any) -> list[dict[str, Any]]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "update"]


def test_a_gms_secret_sends_the_others_nothing_and_their_pages_still_follow(app: Any) -> None:
    """Phantom's Bane's "block escape" is the GM's alone: the players and the spectators get no
    update at all (not even a new version); their version stays where it was, so the next update
    follows on from it, their sync answers it, and a declaration made on it is current."""
    from tests.conftest import Table

    duel = Table(app)  # Alice plays Jharek, Bob the monster
    gm, alice, spectator = duel.gm(), duel.alice(), duel.spectator()
    battle_id, v = duel.battle_id, duel.version
    for client in (gm, alice, spectator):
        client.emit("sync", {}, callback=True)
        client.get_received()
    ack = gm.emit("declare", {"battle_id": battle_id, "expected_v": v, "msg_id": "block-1",
                              "declaration": {"type": "set_escape", "possible": False}}, callback=True)
    assert ack["ok"] and ack["v"] == v + 1, ack
    [told] = updates_of(gm)
    assert told["prev_v"] == v and [e["type"] for e in told["events"]] == ["escape.ruled"]
    assert alice.get_received() == [] and spectator.get_received() == []  # nothing at all
    for client in (alice, spectator):
        synced = client.emit("sync", {"battle_id": battle_id, "since_v": v}, callback=True)["battle"]
        assert synced["v"] == v and synced["events"] == [] and "escape_possible" not in json.dumps(synced)
    # a declaration made on the version the player holds is current for them
    ack = alice.emit("declare", {"battle_id": battle_id, "expected_v": v, "msg_id": "choose-1",
                                 "declaration": {"type": "choose", "combatant": "jharek", "option": "run_away"}}, callback=True)
    assert ack["ok"] and ack["v"] == v + 2, ack
    for client in (alice, spectator):
        [update] = updates_of(client)
        assert (update["v"], update["prev_v"]) == (v + 2, v)  # applied at once: no gap to sync over
    [update] = updates_of(gm)
    assert (update["v"], update["prev_v"]) == (v + 2, v + 1)
    # a stale declaration names the version the player knows of, never the GM's
    gm.emit("declare", {"battle_id": battle_id, "expected_v": v + 2, "msg_id": "block-2",
                        "declaration": {"type": "set_escape", "possible": True}}, callback=True)
    stale = alice.emit("declare", {"battle_id": battle_id, "expected_v": v, "msg_id": "choose-2",
                                   "declaration": {"type": "choose", "combatant": "jharek", "option": "press"}}, callback=True)
    assert stale["code"] == "stale" and stale["v"] == v + 2 and f"now at {v + 2}" in stale["error"], stale


def test_a_duplicate_message_sends_its_update_again(app: Any) -> None:
    """The process that applied a command may have died before broadcasting it: the reply to the
    resent message sends the update again, and a page that lacked it applies it."""
    from tests.conftest import Table

    duel = Table(app)
    service = duel.service
    alice, spectator = duel.alice(), duel.spectator()
    battle_id, v = duel.battle_id, duel.version
    for client in (alice, spectator):
        client.emit("sync", {}, callback=True)
    broadcaster, service.broadcaster = service.broadcaster, None  # the process dies before broadcasting
    service.declare(battle_id, Viewer.player(duel.seat_a.public_id), {"type": "choose", "combatant": "jharek", "option": "defend"},
                    expected_v=v, msg_id="lost-1", actor=f"seat:{duel.seat_a.public_id}")
    service.broadcaster = broadcaster
    spectator.get_received()
    assert updates_of(spectator) == []
    ack = alice.emit("declare", {"battle_id": battle_id, "expected_v": v, "msg_id": "lost-1",
                                 "declaration": {"type": "choose", "combatant": "jharek", "option": "defend"}}, callback=True)
    assert ack == {"ok": True, "v": v + 1, "duplicate": True}
    [update] = updates_of(spectator)
    assert (update["v"], update["prev_v"]) == (v + 1, v) and [e["type"] for e in update["events"]] == ["choice.made"]


# --- hidden combatants (rules/hiding.py): every surface, in the three grid systems -----------------
GRID_SYSTEMS = [system.id for system in available_systems() if system.traits.grid]
LURKER, LURKER_NAME = "lurker7", "Skulking Horror"


def _lurker_traces(value: Any) -> list[str]:
    text = "\n".join(strings_in(value)) if not isinstance(value, str) else value
    return [word for word in (LURKER, LURKER_NAME) if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text)]


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_a_hidden_combatant_reaches_no_player_or_spectator_until_the_gm_reveals_it(tmp_path: Any, system_id: str) -> None:
    """A lurker the GM hid in the lineup (played by the computer, with a token look of its own) and a
    battle played from every viewer's menus: no frame a seat or the spectator gets (views, events,
    table payloads, acks), no odds they ask, holds its id or name; a player's declaration or odds
    naming it are refused. Then the GM reveals it: every page shows it, and the shared replay shows
    it from that version on only; the public export and report show it only from then on too."""
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    try:
        table = service.create_table("Hidden test", system_id)
        _, seat_one = service.join(table.join_code, "Seat One")
        _, seat_two = service.join(table.join_code, "Seat Two")
        lineup = lineup_for(system, [seat_one.public_id, seat_two.public_id])
        lineup[3].update(id=LURKER, name=LURKER_NAME, hidden=True)
        service.set_lineup(table.id, lineup)
        service.write_board(table.id, {"map": None, "tokens": {LURKER: {"colour": "#aa0000", "portrait": None},
                                                                 "c1": {"colour": "#00aa00", "portrait": None}}, "blocked": []})
        battle_id = service.start_battle(table.id, seed=SEED).battle_id
        gm = Recorder(app, table.slug, table.gm_token)
        one = Recorder(app, table.slug, seat_one.token)
        two = Recorder(app, table.slug, seat_two.token)
        spectator = Recorder(app, table.slug, None)
        everyone = [gm, one, two, spectator]
        for client in everyone:
            client.sync()
        assert one.transcript[-1]["reply"]["table"]["board"]["tokens"] == {"c1": {"colour": "#00aa00", "portrait": None}}
        assert LURKER in gm.transcript[-1]["reply"]["table"]["board"]["tokens"]
        rng = random.Random(system_id)
        attempts = 0
        while attempts < 60 and service.battle(battle_id).status != "ended":
            attempts += 1
            menus = [(c, item) for c in (gm, one, two) if c.battle for item in c.battle["view"].get("legal") or []]
            if not menus:
                break
            actor, item = rng.choice(menus)
            assert actor.battle is not None
            declaration = sensible(system_id, item, rng) or declaration_from(item, rng)
            ack = actor.call("declare", {"battle_id": battle_id, "expected_v": actor.battle["v"], "declaration": declaration,
                                         "msg_id": f"m{attempts}"})
            assert ack.get("code") != "server_error", (item, ack)
            for client in everyone:
                client.drain()
        # the players' own odds, and an attempt on the lurker: refused, and its name in no answer
        for client, seat in ((one, "c1"), (two, "c2")):
            asked = client.call("odds", {"battle_id": battle_id, "declaration": {"type": "attack", "combatant": seat, "target": LURKER}})
            assert not asked["ok"]
            client.call("odds", {"battle_id": battle_id, "declaration": {"combatant": seat}})
            if service.battle(battle_id).status != "ended":
                refused = client.call("declare", {"battle_id": battle_id, "expected_v": client.battle["v"] if client.battle else 0,
                                                  "declaration": {"type": "attack", "combatant": seat, "target": LURKER}, "msg_id": f"t{seat}"})
                assert not refused["ok"]
        gm_words = "\n".join(strings_in(gm.transcript))
        assert LURKER_NAME in gm_words
        for label, client in (("seat one", one), ("seat two", two), ("spectator", spectator)):
            assert _lurker_traces(client.transcript) == [], f"{system_id}: {label} got a trace of the hidden combatant"
        # the GM reveals it: every page shows it
        if service.battle(battle_id).status == "ended":
            pytest.skip("the battle ended before the reveal")  # (never with this seed)
        hidden_until = service.battle(battle_id).version
        assert gm.call("reveal_combatant", {"battle_id": battle_id, "combatant": LURKER})["ok"]
        assert not one.call("reveal_combatant", {"battle_id": battle_id, "combatant": LURKER})["ok"]
        for client in everyone:
            client.drain()
            assert client.battle is not None and LURKER in [f["id"] for f in client.battle["view"]["fighters"]]
        assert one.sync()["table"]["board"]["tokens"][LURKER]["colour"] == "#aa0000"
        assert any(e["type"] == "combatant.revealed" for e in spectator.received_events())
        assert gm.call("battle_end", {"battle_id": battle_id})["ok"]
        assert gm.call("battle_share", {"battle_id": battle_id, "shareable": True})["ok"]
        stranger = app.test_client()
        base = f"/t/{table.slug}/battles/{battle_id}"
        replay = stranger.get(f"{base}/replay.json").get_json()
        before = [s for s in replay["steps"] if s["v"] <= hidden_until]
        after = [s for s in replay["steps"] if s["v"] > hidden_until]
        assert before and after
        assert _lurker_traces(before) == [], f"{system_id}: the public replay shows the lurker before its reveal"
        assert LURKER in [f["id"] for f in after[0]["view"]["fighters"]]
        assert any(e["type"] == "combatant.revealed" for e in after[0]["events"])
        export = stranger.get(f"{base}/export.json").get_json()
        assert _lurker_traces(export["initial_state"]) == [] and _lurker_traces([e for e in export["events"] if e["v"] <= hidden_until]) == []
        assert _lurker_traces([d for d in export["dice"]["draws"] if d.get("version", d.get("v", 0)) <= hidden_until]) == []
        assert LURKER in json.dumps(export["final_state"])
    finally:
        service.engine.dispose()


@pytest.mark.parametrize("system_id", GRID_SYSTEMS)
def test_a_combatant_never_revealed_stays_out_of_the_public_report_and_export(tmp_path: Any, system_id: str) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    system = get_system(system_id)
    try:
        table = service.create_table("Hidden report", system_id)
        _, seat_one = service.join(table.join_code, "Seat One")
        _, seat_two = service.join(table.join_code, "Seat Two")
        lineup = lineup_for(system, [seat_one.public_id, seat_two.public_id])
        lineup[3].update(id=LURKER, name=LURKER_NAME, hidden=True)
        service.set_lineup(table.id, lineup)
        table_id, battle_id, _ = play_started(service, table.id, system_id)
        gm = Recorder(app, table.slug, table.gm_token)
        gm.sync()
        assert gm.call("battle_end", {"battle_id": battle_id})["ok"]
        assert gm.call("battle_share", {"battle_id": battle_id, "shareable": True})["ok"]
        base = f"/t/{table.slug}/battles/{battle_id}"
        stranger = app.test_client()
        for name in ("replay.json", "export.json", "report"):
            got = stranger.get(f"{base}/{name}")
            assert got.status_code == 200
            body = got.get_json() if name.endswith(".json") else got.get_data(as_text=True)
            assert _lurker_traces(body) == [], f"{system_id}: the public {name} shows a combatant that never stepped out"
    finally:
        service.engine.dispose()


def play_started(service: Any, table_id: int, system_id: str) -> tuple[int, int, int]:
    """The table's battle started and played a few of the GM's random declarations."""
    system = get_system(system_id)
    battle_id = service.start_battle(table_id, seed=SEED).battle_id
    rng = random.Random(system_id)
    accepted = 0
    for attempt in range(40):
        battle = service.battle(battle_id)
        legal = service_legal(system, battle.state)
        if battle.status == "ended" or not legal:
            break
        try:
            service.declare(battle_id, Viewer.gm(), declaration_from(rng.choice(legal), rng), msg_id=f"h{attempt}")
            accepted += 1
        except Exception:  # noqa: BLE001  (a random pick the rules refuse)
            pass
    return table_id, battle_id, accepted


def service_legal(system: Any, state: dict[str, Any]) -> list[dict[str, Any]]:
    from rules import engine

    return list(engine.project(system, state, Viewer.gm()).get("legal") or [])
