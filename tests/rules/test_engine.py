"""rules/engine.py: every kind of command through :func:`rules.engine.step` gives what the service gave.

Until the engine, each of the service's commands built its own step out of rules pieces. Each test
here runs one command through ``engine.step`` with scripted dice and compares it with that recipe on
the same state and faces (``service_*`` below: the system's ``authorize`` and ``apply`` with the
declaration as recorded, the physical dice's ``apply_declaration`` and ``resume``,
``fair.ended_by_gm``, ``fair.with_reveal``), and checks the refusals the service made.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from rules import engine, get_system
from rules import physical as physical_dice
from rules.contract import RuleSystem
from rules.core import Viewer, event
from rules.dice import DiceSource, ScriptedDice
from rules.engine import Command
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.fair import ended_by_gm, revealed_event, with_reveal
from tests.rules.test_adnd import party_battle
from tests.rules.test_battles_balances import attack as bb_attack
from tests.rules.test_battles_balances import duel as bb_duel
from tests.rules.test_phantoms_bane import duel as pb_duel
from tests.rules.test_phantoms_bane import fighter as pb_fighter

GM, SPECTATOR = Viewer.gm(), Viewer.spectator()
SEED = "0123456789abcdef0123456789abcdef"
NOW = 1700000000.25


# --- the service's recipes before the engine (webapp/service.py's step closures) ------------------
def service_declare(system: RuleSystem, state: dict[str, Any], declaration: dict[str, Any], viewer: Viewer,
                    dice: DiceSource, board: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """``declare``: the ended check, authorize, apply (through the physical dice when the battle has
    them), is_checkpoint; then the reveal."""
    if state["status"] == "ended" and declaration["type"] not in system.declarations_after_end:
        raise IllegalDeclaration("this battle has ended")
    work = copy.deepcopy(state)
    system.authorize(work, declaration, viewer)
    if physical_dice.active(work):
        new_state, events = physical_dice.apply_declaration(system, work, declaration, viewer, dice, board=board)
    else:
        new_state, events = system.apply(work, declaration, viewer, dice)
    return new_state, with_reveal(state["status"], new_state["status"], list(events), SEED), bool(system.is_checkpoint(new_state))


def same(made: engine.Step, expected: tuple[dict[str, Any], list[dict[str, Any]], bool]) -> None:
    assert (made.state, made.events, made.checkpoint) == expected


def shared_containers(a: Any, b: Any) -> set[int]:
    """The ids of the dicts and lists two values share."""
    def ids(value: Any, into: set[int]) -> set[int]:
        if isinstance(value, dict | list):
            into.add(id(value))
            for item in value.values() if isinstance(value, dict) else value:
                ids(item, into)
        return into
    return ids(a, set()) & ids(b, set())


def pb_state(**physical: Any) -> dict[str, Any]:
    state = pb_duel(pb_fighter("Jharek", "A", "j", controller="seat", seat="s1"), pb_fighter("Monster", "B", "m"))
    if physical:
        state["physical"] = {"mode": "board", "combatants": [], "pending": None, **physical}
    return state


def choose(cid: str, option: str = "attack") -> dict[str, Any]:
    return {"combatant": cid, "option": option}


# --- declarations -------------------------------------------------------------------------------
def test_a_declaration_is_authorize_and_apply_on_a_copy_and_the_log_keeps_it_with_its_time() -> None:
    pb = get_system("phantoms-bane")
    state = pb_state()
    kept = copy.deepcopy(state)
    first = engine.step(pb, state, Command("choose", choose("j"), Viewer.player("s1"), NOW), ScriptedDice([]), seed=SEED)
    assert first.record == {"type": "choose", "combatant": "j", "option": "attack", "at": NOW}
    same(first, service_declare(pb, state, first.record, Viewer.player("s1"), ScriptedDice([]), {}))
    faces = [3, 5, 2, 4]
    second = engine.step(pb, first.state, Command("choose", choose("m", "defend"), GM, NOW + 1), ScriptedDice(faces), seed=SEED)
    same(second, service_declare(pb, first.state, second.record, GM, ScriptedDice(faces), {}))
    assert "turn.resolved" in [e["type"] for e in second.events] and second.checkpoint
    # the state given is never changed, and the new one shares nothing with it
    assert state == kept and not shared_containers(state, first.state) and not shared_containers(first.state, second.state)


def test_who_may_declare_is_the_systems_authorize() -> None:
    pb = get_system("phantoms-bane")
    with pytest.raises(NotPermitted, match="only for the combatants of your own seat"):
        engine.step(pb, pb_state(), Command("choose", choose("m"), Viewer.player("s1"), NOW), ScriptedDice([]), seed=SEED)
    with pytest.raises(NotPermitted, match="spectators watch"):
        engine.step(pb, pb_state(), Command("choose", choose("j"), SPECTATOR, NOW), ScriptedDice([]), seed=SEED)
    with pytest.raises(NotPermitted, match="only the GM"):
        engine.step(pb, pb_state(), Command("set_escape", {"combatant": "j", "blocked": True}, Viewer.player("s1"), NOW),
                    ScriptedDice([]), seed=SEED)


def test_the_declaration_that_ends_the_battle_reveals_the_seed_and_after_it_only_the_systems_late_ones_pass() -> None:
    bb = get_system("battles-and-balances")
    state = bb_duel(trooper={"stamina": 1})
    faces = [8, 8, 8, 8, 1, 1, 6]
    ended = engine.step(bb, state, Command.recorded({**bb_attack("vasyl", "trooper"), "at": NOW}, GM), ScriptedDice(faces), seed=SEED)
    same(ended, service_declare(bb, state, {**bb_attack("vasyl", "trooper"), "at": NOW}, GM, ScriptedDice(faces), {}))
    assert ended.state["status"] == "ended" and ended.events[-1] == revealed_event(SEED)
    contest = {"a_combatant": "vasyl", "a_attribute": "muscle", "b_combatant": "trooper", "b_attribute": "muscle"}
    late = engine.step(bb, ended.state, Command("contest", contest, GM, NOW), ScriptedDice([1] * 27), seed=SEED)
    same(late, service_declare(bb, ended.state, {"type": "contest", **contest, "at": NOW}, GM, ScriptedDice([1] * 27), {}))
    assert "dice.revealed" not in [e["type"] for e in late.events]  # revealed once, when it ended
    with pytest.raises(IllegalDeclaration, match="this battle has ended"):
        engine.step(bb, ended.state, Command("move", {"combatant": "vasyl", "x": 1, "y": 1}, GM, NOW), ScriptedDice([]), seed=SEED)


class Clockless(RuleSystem):
    """A system that says what declaration it was given."""

    id = name = "clockless"

    def apply(self, state: dict[str, Any], declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> Any:
        return {**state, "seen": dict(declaration)}, [event("declaration.seen", "Seen.")]


class Clocked(Clockless):
    id = name = "clocked"
    needs_now = True


def test_the_time_a_declaration_arrived_goes_only_to_the_systems_that_ask_for_it() -> None:
    state = {"status": "active", "combatants": {}}
    for system, seen in ((Clockless(), {"type": "ping", "n": 1}), (Clocked(), {"type": "ping", "n": 1, "at": NOW})):
        made = engine.step(system, state, Command.recorded({"type": "ping", "n": 1, "at": NOW}, GM), ScriptedDice([]), seed=SEED)
        assert made.state["seen"] == seen and made.record == {"type": "ping", "n": 1, "at": NOW}


def test_adnd_declaration_clock_reads_the_commands_time() -> None:
    adnd = get_system("adnd")
    state = party_battle()
    steps = [(GM, "declare", {"combatant": "orc", "kind": "melee", "target": "aldo"}, 99.0, []),
             (GM, "roll_order", {}, 100.0, [1]), (GM, "pause_clock", {}, 103.0, []), (GM, "resume_clock", {}, 110.0, []),
             (Viewer.player("s1"), "declare", {"combatant": "aldo", "kind": "melee", "target": "orc"}, 115.9, [])]
    for viewer, kind, payload, now, faces in steps:
        made = engine.step(adnd, state, Command(kind, payload, viewer, now), ScriptedDice(faces), seed=SEED)
        same(made, service_declare(adnd, state, {"type": kind, **payload, "at": now}, viewer, ScriptedDice(faces), {}))
        state = made.state
    # 3 s before the pause and 5.9 s after: one full 6 seconds, so one segment late
    assert state["declarations"]["aldo"]["delay"] == 1 and state["last_at"] == 115.9


# --- the board's own commands ----------------------------------------------------------------------
def test_assign_is_the_systems_assign_with_the_commands_dice_and_the_gms_alone() -> None:
    pb = get_system("phantoms-bane")
    state = pb_state()
    # the computer chooses at once for the combatant it now plays, with the command's dice
    made = engine.step(pb, state, Command("assign", {"combatant": "j", "controller": "computer", "seat": None}, GM), ScriptedDice([50]),
                       seed=SEED)
    new_state, events = engine.assign(pb, copy.deepcopy(state), "j", "computer", None, ScriptedDice([50]))
    same(made, (new_state, with_reveal("active", new_state["status"], list(events), SEED), pb.is_checkpoint(new_state)))
    assert made.record == {"type": "assign", "combatant": "j", "controller": "computer", "seat": None}
    with pytest.raises(NotPermitted, match="only the GM"):
        engine.step(pb, state, Command("assign", {"combatant": "j", "controller": "gm", "seat": None}, Viewer.player("s1")),
                    ScriptedDice([]), seed=SEED)
    with pytest.raises(InvalidDeclaration, match="no combatant"):
        engine.step(pb, state, Command("assign", {"combatant": "x", "controller": "gm", "seat": None}, GM), ScriptedDice([]), seed=SEED)


def test_the_gms_end_ends_once_reveals_the_seed_and_is_a_checkpoint() -> None:
    pb = get_system("phantoms-bane")
    state = pb_state()
    made = engine.step(pb, state, Command("end", {}, GM), ScriptedDice([]), seed=SEED)
    new_state, events = ended_by_gm(state)
    same(made, (new_state, [*events, revealed_event(SEED)], True))
    assert made.record == {"type": "end"} and state["status"] == "active"
    with pytest.raises(IllegalDeclaration, match="already ended"):
        engine.step(pb, made.state, Command("end", {}, GM), ScriptedDice([]), seed=SEED)
    with pytest.raises(NotPermitted, match="only the GM may end"):
        engine.step(pb, state, Command("end", {}, Viewer.player("s1")), ScriptedDice([]), seed=SEED)


def test_the_gms_switch_to_real_dice_is_the_physical_switch() -> None:
    pb = get_system("phantoms-bane")
    state = pb_state()
    made = engine.step(pb, state, Command("dice_physical", {"combatant": "m", "physical": True}, GM), ScriptedDice([]), seed=SEED)
    new_state, events = physical_dice.switch(state, "m", True)
    same(made, (new_state, events, pb.is_checkpoint(new_state)))
    assert made.record == {"type": "dice_physical", "combatant": "m", "physical": True}
    with pytest.raises(NotPermitted, match="only the GM"):
        engine.step(pb, state, Command("dice_physical", {"combatant": "m", "physical": True}, Viewer.player("s1")), ScriptedDice([]),
                    seed=SEED)


# --- real dice: a declaration waits, typed faces resume it -----------------------------------------
BOARD = {"version": 7, "mix": "m1x"}
BOARD_FACES = [3, 3]


def board_dice(kept: Mapping[str, Any]) -> ScriptedDice:
    assert dict(kept) == BOARD  # the dice of the command that first asked
    return ScriptedDice(BOARD_FACES)


def waiting_for_jharek() -> tuple[RuleSystem, dict[str, Any]]:
    """Both choices in, with Jharek's dice typed on his phone: the battle waits for his offence die."""
    pb = get_system("phantoms-bane")
    state = pb_state(mode="players")
    for viewer, cid in ((Viewer.player("s1"), "j"), (GM, "m")):
        command = Command("choose", choose(cid), viewer, NOW)
        made = engine.step(pb, state, command, ScriptedDice(BOARD_FACES), seed=SEED, board=BOARD, board_dice=board_dice)
        same(made, service_declare(pb, state, command.record(), viewer, ScriptedDice(BOARD_FACES), BOARD))
        state = made.state
    return pb, state


def test_a_declaration_waits_for_real_dice_keeping_itself_as_the_log_records_it() -> None:
    _, state = waiting_for_jharek()
    due = physical_dice.pending(state)
    assert due["need"]["purpose"] == "Jharek offence die" and due["board"] == BOARD
    assert due["declaration"] == {"type": "choose", "combatant": "m", "option": "attack", "at": NOW}


def test_typed_faces_resume_the_waiting_declaration_as_the_service_did() -> None:
    pb, state = waiting_for_jharek()
    for faces in ([4], [5]):
        made = engine.step(pb, state, Command("dice_enter", {"faces": faces}, Viewer.player("s1")), ScriptedDice([]), seed=SEED,
                           board=BOARD, board_dice=board_dice)
        entry = physical_dice.check_entry(state, Viewer.player("s1"), faces)
        new_state, events = physical_dice.resume(pb, state, entry, ScriptedDice(BOARD_FACES))
        same(made, (new_state, events, pb.is_checkpoint(new_state)))
        assert made.record == {"type": "dice_enter", "entry": {"faces": faces, "by": "seat:s1"}}
        state = made.state
    assert physical_dice.pending(state) is None and "turn.resolved" in [e["type"] for e in made.events]


def test_the_gms_board_roll_for_an_absent_player_and_a_recorded_entry() -> None:
    pb, state = waiting_for_jharek()
    with pytest.raises(NotPermitted, match="only the GM may roll with the board"):
        engine.step(pb, state, Command("dice_enter", {"board": True}, Viewer.player("s1")), ScriptedDice([6]), seed=SEED,
                    board_dice=board_dice)
    made = engine.step(pb, state, Command("dice_enter", {"board": True}, GM), ScriptedDice([6]), seed=SEED, board_dice=board_dice)
    assert made.record == {"type": "dice_enter", "entry": {"faces": [6], "by": "board"}}
    # the verifier gives the entry as the log recorded it: the same step again
    again = engine.step(pb, state, Command.recorded(made.record, GM), ScriptedDice([]), seed=SEED, board_dice=board_dice)
    assert (again.state, again.events, again.record) == (made.state, made.events, made.record)


def test_typed_faces_where_no_roll_is_due_are_refused() -> None:
    pb = get_system("phantoms-bane")
    with pytest.raises(IllegalDeclaration, match="no roll is due"):
        engine.step(pb, pb_state(mode="players"), Command("dice_enter", {"faces": [3]}, GM), ScriptedDice([]), seed=SEED,
                    board_dice=board_dice)
    _, state = waiting_for_jharek()
    with pytest.raises(NotPermitted, match="Jharek's, not yours"):
        engine.step(pb, state, Command("dice_enter", {"faces": [3]}, Viewer.player("s2")), ScriptedDice([]), seed=SEED,
                    board_dice=board_dice)
    with pytest.raises(IllegalDeclaration, match="waits for dice"):
        engine.step(pb, state, Command("choose", choose("m"), GM, NOW), ScriptedDice([]), seed=SEED, board_dice=board_dice)


# --- the authority's own commands end the same way -------------------------------------------------
def test_settle_reveals_the_seed_only_when_a_command_ends_the_battle() -> None:
    running, ended = {"status": "active"}, {"status": "ended"}
    assert engine.settle(running, ended, [], True, seed=SEED, record={"type": "x"}).events == [revealed_event(SEED)]
    assert engine.settle(ended, ended, [], True, seed=SEED, record={"type": "x"}).events == []
    assert engine.settle(ended, running, [], False, seed=SEED, record={"type": "undo"}).events == []


def test_no_rule_system_names_a_declaration_like_a_board_command() -> None:
    from rules import available_systems

    for system in available_systems():
        assert system.declarations and not set(system.declarations) & engine.RESERVED, system.id


# --- the computer's declarations (RuleSystem.computer_choice) -------------------------------------
class Ticks(RuleSystem):
    """Each declaration rolls a d6; the computer declares "bot" until ``until`` rolls are made."""

    id = name = "ticks"

    def __init__(self, until: int) -> None:
        self.until = until

    def setup(self, lineup: Any, options: Any, dice: DiceSource) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        bot = {"name": "Bot", "controller": "computer", "seat": None}
        return {"status": "active", "ticks": [], "combatants": {"bot": bot}}, [event("battle.started", "Go.")]

    def apply(self, state: Any, declaration: Any, viewer: Viewer, dice: DiceSource) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        roll = dice.roll(1, 6, declaration["type"])
        new = {**state, "ticks": [*state["ticks"], [declaration["type"], viewer.role, roll.total]]}
        return new, [event("die.rolled", f"{declaration['type']}: {roll.total}.", rolls=[roll])]

    def computer_choice(self, state: Any, declaration: Any, events: Any) -> dict[str, Any] | None:
        assert events and events[-1]["type"] in ("battle.started", "die.rolled")  # what was just applied made them
        return {"type": "bot"} if len(state["ticks"]) < self.until else None


def test_the_computer_declares_after_the_command_with_its_dice_as_the_gm() -> None:
    state = {"status": "active", "ticks": [], "combatants": {"me": {"name": "Me", "controller": "seat", "seat": "s1"}}}
    made = engine.step(Ticks(3), state, Command("roll", {"combatant": "me"}, Viewer.player("s1")), ScriptedDice([4, 5, 6]),
                       seed=SEED)
    assert made.state["ticks"] == [["roll", "player", 4], ["bot", "gm", 5], ["bot", "gm", 6]]
    assert [e["text"] for e in made.events] == ["roll: 4.", "bot: 5.", "bot: 6."]
    assert RuleSystem().computer_choice({}, None, []) is None  # a system without a computer player


def test_the_computer_plays_after_the_setup_and_stops_at_the_limit_for_the_gm() -> None:
    state, events = engine.start(Ticks(2), [], {}, ScriptedDice([1, 2]))
    assert state["ticks"] == [["bot", "gm", 1], ["bot", "gm", 2]] and len(events) == 3
    made = engine.step(Ticks(10_000), state, Command("roll", {}, GM), ScriptedDice([3] * (engine.COMPUTER_LIMIT + 1)), seed=SEED)
    assert len(made.state["ticks"]) == 2 + 1 + engine.COMPUTER_LIMIT
    assert (made.events[-1]["type"], made.events[-1]["text"], made.events[-1]["visibility"]) == (
        "turn.stalled", engine.COMPUTER_STOPPED, "gm")
