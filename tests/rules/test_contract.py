"""rules/contract.py: each system registers its declarations with @declaration, and the sets the web
layer and the engine read off them (who may send what, what counts after the end, what the sides
make at the same time) are the ones the systems listed by hand before."""

from __future__ import annotations

from typing import Any

import pytest

from rules import available_systems, get_system
from rules.contract import RuleSystem, declaration
from rules.core import Viewer
from rules.dice import ScriptedDice
from rules.errors import InvalidDeclaration
from rules.registry import SYSTEM_PACKAGES

#: the declarations of each system, and those of them only the GM may send, as listed by hand before
#: the registrations (the dispatchers' kinds and ``gm_declarations``)
DECLARED = {
    "phantoms-bane": ({"choose", "force_resolve", "set_escape"}, {"force_resolve", "set_escape"}),
    "eclipse-phase": ({"accept", "adjust", "advance", "aim", "attack", "cancel_attack", "clear_modifiers", "condition",
                       "defend", "end_turn", "full_defence", "modifier", "move", "pick_up", "reveal", "roll_initiative",
                       "set_blocked", "spend", "stand"},
                      {"adjust", "advance", "clear_modifiers", "condition", "modifier", "reveal", "roll_initiative", "set_blocked"}),
    "olympia": ({"set_behind", "set_break_point", "set_structure", "add_special", "remove_special", "begin", "step"},
                {"add_special", "begin", "remove_special", "set_structure", "step"}),
    "adnd": ({"bleed", "cancel", "check_distance", "check_morale", "check_reaction", "check_surprise", "declare",
              "end_encounter", "finish", "first_aid", "move", "next_round", "pause_clock", "resolve_all", "resolve_next",
              "resume_clock", "roll_initiative", "roll_order", "set_blocked", "set_hp", "set_scale", "trigger"},
             {"bleed", "check_distance", "check_morale", "check_reaction", "check_surprise", "end_encounter", "finish",
              "first_aid", "move", "next_round", "pause_clock", "resolve_all", "resolve_next", "resume_clock",
              "roll_initiative", "roll_order", "set_blocked", "set_hp", "set_scale"}),
    "battles-and-balances": ({"adjust", "attack", "bless", "check", "computer_turn", "contest", "cure", "custom_action",
                              "disarm", "draw", "heal", "move", "pass", "place", "repair", "set_blocked", "shoot"},
                             {"adjust", "bless", "check", "computer_turn", "contest", "cure", "custom_action", "disarm",
                              "heal", "place", "repair", "set_blocked"}),
}


@pytest.mark.parametrize("system_id", sorted(DECLARED))
def test_each_system_registers_the_declarations_it_dispatched_before(system_id: str) -> None:
    system = get_system(system_id)
    kinds, gm_only = DECLARED[system_id]
    assert set(system.declarations) == kinds and system.gm_declarations == gm_only
    for kind in kinds:
        assert callable(system.handler(kind)), kind
    assert system.handler("dance") is None and system.handler(None) is None and system.handler(["move"]) is None


def test_what_counts_after_the_end_and_what_the_sides_choose_at_once() -> None:
    by_id = {system.id: system for system in available_systems() if system.id in SYSTEM_PACKAGES}
    assert set(by_id) == set(DECLARED) == set(SYSTEM_PACKAGES)  # (a system of BATTLEBOARD_SYSTEMS besides)
    assert by_id["battles-and-balances"].declarations_after_end == {"check", "contest", "heal", "cure", "bless", "repair",
                                                                    "adjust", "place"}
    assert by_id["phantoms-bane"].simultaneous_declarations == {"choose"}
    for system_id in ("phantoms-bane", "eclipse-phase", "olympia", "adnd"):
        assert by_id[system_id].declarations_after_end == frozenset()
    for system_id in ("eclipse-phase", "olympia", "adnd", "battles-and-balances"):
        assert by_id[system_id].simultaneous_declarations == frozenset()


def test_an_unknown_declaration_is_refused_in_each_systems_own_words() -> None:
    pb = get_system("phantoms-bane")
    state: Any = {"status": "active"}
    with pytest.raises(InvalidDeclaration, match=r"unknown declaration type 'dance' \(expected choose, force_resolve or set_escape\)"):
        pb.apply(state, {"type": "dance"}, Viewer.gm(), ScriptedDice([]))


def test_registrations_are_inherited_and_never_mixed_with_lists() -> None:
    class Base(RuleSystem):
        @declaration("strike")
        def _strike(self, *args: Any) -> None: ...

    class Heir(Base):
        @declaration("parley", by="gm", after_end=True)
        def _parley(self, *args: Any) -> None: ...

    assert list(Heir.declarations) == ["strike", "parley"] and list(Base.declarations) == ["strike"]
    assert Heir.gm_declarations == {"parley"} and Heir.declarations_after_end == {"parley"}
    with pytest.raises(TypeError, match="gm_declarations come from @declaration"):
        class Both(RuleSystem):  # noqa: F841
            gm_declarations = frozenset({"strike"})

            @declaration("strike")
            def _strike(self, *args: Any) -> None: ...
    with pytest.raises(ValueError, match="by must be"):
        declaration("strike", by="anyone")  # type: ignore[arg-type]
