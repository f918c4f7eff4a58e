"""Phantom's Bane: a one-on-one duel fought in combat turns.

Each turn both combatants secretly pick one of four options -- press, attack, defend or run
away. When both have picked, the turn is resolved: a run-away attempt first, then the four
combat dice (offence and defence for side A, then for side B), damage, penetrations and counters
with their half-dice, wear on armour and weapons, and finally weakening.

The state is a plain JSON dict. The lineup is exactly two combatants, one on side ``"A"`` and
one on side ``"B"``. Dice are drawn in the order of ruling 5: run-away rolls (runner first),
then offence A, defence A, offence B, defence B, then half-dice (penetrations before counters,
side A before side B). A computer-controlled combatant picks its option at the start of each
turn from what its own side can see, drawing one 1-100 number from ``dice.derive("computer")``
(with scripted dice that number is simply the next face, taken when the turn starts).

The first turn of the rule text's example (Jharek against the Wild Monster, both attacking):

>>> from rules.core import Viewer
>>> from rules.dice import ScriptedDice
>>> pb = PhantomsBane()
>>> presets = {p["name"]: p for p in pb.presets()}
>>> lineup = [{**presets["Jharek"], "id": "j", "side": "A"},
...           {**presets["Wild Monster"], "id": "m", "side": "B"}]
>>> state, _ = pb.setup(lineup, {}, ScriptedDice([]))
>>> state, _ = pb.apply(state, {"type": "choose", "combatant": "j", "option": "attack"},
...                     Viewer.gm(), ScriptedDice([]))
>>> state, events = pb.apply(state, {"type": "choose", "combatant": "m", "option": "attack"},
...                          Viewer.gm(), ScriptedDice([1, 3, 5, 6, 1]))
>>> j = state["combatants"]["j"]
>>> (j["health"], j["health_max"], j["weapon"]["bonus"], state["turn"])
(5, 7, 2, 2)
>>> [e["type"] for e in events if e["type"] in ("damage.dealt", "counter.scored", "weapon.worn")]
['damage.dealt', 'counter.scored', 'weapon.worn']
"""

from __future__ import annotations

from .computer import computer_scores, escape_chance, expected_hit
from .data import OPTIONS
from .ratings import capped, half
from .system import PhantomsBane

#: what rules/registry.py loads
SYSTEM = PhantomsBane

__all__ = ["OPTIONS", "SYSTEM", "PhantomsBane", "capped", "computer_scores", "escape_chance", "expected_hit", "half"]
