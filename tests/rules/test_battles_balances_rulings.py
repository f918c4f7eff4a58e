"""Battles&Balances ruling B&B-2: deep debt takes several refresh turns; Stamina 0 is refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.core import Viewer
from rules.dice import ScriptedDice
from rules.errors import InvalidDeclaration
from rules.systems.battles_balances import BattlesAndBalances, timeline
from tests.rules.harness import Rules, types
from tests.rules.test_battles_balances import fighter

BB = BattlesAndBalances()
RULES = Rules(BB)
GM = Viewer.gm()
NO_DICE = ScriptedDice([])


# --- deep debt ------------------------------------------------------------------------------------


def test_a_debt_of_many_allowances_is_refreshed_turn_after_turn() -> None:
    # Lone has 1 AP a refresh and spends 999 on one action: a debt of 998 allowances. The other side
    # has Speed 0 and never acts. The clock gives Lone 999 refresh turns, then his turn again.
    state, _ = RULES.start([fighter("lone", "A", 0, 0, ap_override=1), fighter("post", "B", 5, 5, speed=0)])
    assert state["actor"] == "lone"
    new, events = RULES.play(state, {"type": "custom_action", "combatant": "lone", "cost": 999, "label": "a long ritual"})
    assert new["actor"] == "lone" and "turn.stalled" not in types(events)
    assert new["combatants"]["lone"]["ap"] == 1
    refreshed = [e for e in events if e["type"] == "ap.refreshed"]
    assert sum(e["data"].get("turns", 1) for e in refreshed) == 999
    assert new["turn"] == state["turn"] + 999 + 1
    assert types(events)[-1] == "turn.started"


def test_the_gm_can_set_a_debt_deeper_than_any_allowance() -> None:
    state, _ = RULES.start([fighter("a", "A", 0, 0), fighter("b", "B", 5, 5)])
    state, _ = RULES.play(state, {"type": "adjust", "combatant": "b", "field": "ap", "value": -9999})
    new, events = RULES.play(state, {"type": "adjust", "combatant": "a", "field": "ap", "value": -9999})
    # both owe 9999 with 16 a refresh: 625 refreshes each, b (next after a) first; then b acts
    assert new["actor"] == "b" and new["combatants"]["a"]["ap"] == -9999 + 625 * 16
    assert new["combatants"]["b"]["ap"] == -9999 + 625 * 16
    assert "turn.stalled" not in types(events)
    assert len(events) < 20  # the whole passes in which everybody only refreshes are counted at once


def naive_clock(state, steps: int = 100_000):
    """Independent reference: walk the order one turn at a time, refreshing whoever has 0 AP or less,
    until somebody holds 1 AP on his turn."""
    ap = {cid: c["ap"] for cid, c in state["combatants"].items()}
    order, idx, turn = state["order"], state["turn_index"], state["turn"]
    for _ in range(steps):
        idx = (idx + 1) % len(order)
        c = state["combatants"][order[idx]]
        if c["defeated"] or (ap[c["id"]] < 1 and c["ap_max"] <= 0):
            continue
        turn += 1
        if ap[c["id"]] >= 1:
            return order[idx], ap, turn
        ap[c["id"]] += c["ap_max"]
    return None, ap, turn


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    speeds=st.lists(st.integers(0, 4), min_size=2, max_size=4),
    debts=st.lists(st.integers(-400, 0), min_size=4, max_size=4),
)
def test_the_clock_agrees_with_turn_by_turn_refreshes(speeds, debts) -> None:
    if not any(speeds):
        speeds[0] = 1
    lineup = [fighter(f"c{i}", "AB"[i % 2], i, 0, speed=s) for i, s in enumerate(speeds)]
    state, _ = RULES.start(lineup)
    for i in range(len(speeds)):
        state["combatants"][f"c{i}"]["ap"] = debts[i]
    state["actor"] = None
    state["turn_index"] = len(speeds) - 1
    expected_actor, expected_ap, expected_turn = naive_clock(state)
    new, events = RULES.play(state, {"type": "adjust", "combatant": "c0", "field": "ammo", "value": 0})
    assert new["actor"] == expected_actor
    assert {cid: c["ap"] for cid, c in new["combatants"].items()} == expected_ap
    assert new["turn"] == expected_turn
    assert "turn.stalled" not in types(events)


def test_speed_zero_alone_still_stalls() -> None:
    stuck, events = RULES.start([fighter("a", "A", 0, 0, speed=0), fighter("b", "B", 5, 5, speed=0)])
    assert stuck["actor"] is None and types(events)[-1] == "turn.stalled" and timeline(stuck) == []


# --- Stamina 0 ------------------------------------------------------------------------------------


def test_the_lineup_refuses_stamina_zero_with_a_clear_message() -> None:
    lineup = [fighter("frail", "A", 0, 0, stamina=0), fighter("b", "B", 5, 5)]
    with pytest.raises(InvalidDeclaration, match="Frail: Stamina 0 means Health 0"):
        BB.validate_draft(lineup)
    with pytest.raises(InvalidDeclaration, match="Stamina 1 or more"):
        RULES.start(lineup)
    state, _ = RULES.start([fighter("frail", "A", 0, 0, stamina=1), fighter("b", "B", 5, 5)])
    assert state["combatants"]["frail"]["health"] == 8 and not state["combatants"]["frail"]["defeated"]


def test_health_zero_is_defeated() -> None:
    # a Health 0 character (here put straight into the state) is out of play: wounds 0 reach Health 0
    state, _ = RULES.start([fighter("a", "A", 0, 0), fighter("b", "B", 5, 5), fighter("c", "B", 6, 6)])
    state["combatants"]["b"]["health"] = 0
    new, events = RULES.play(state, {"type": "adjust", "combatant": "b", "field": "wounds", "value": 0})
    assert new["combatants"]["b"]["defeated"]
    assert "combatant.defeated" in types(events)
