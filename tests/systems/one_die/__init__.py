"""The one-die duel: a sixth rule system kept in one folder, to show what adding a system takes.

Two duellists, one on each side. Each round both roll one six-sided die, each when it is their turn
to declare (``{"type": "roll", "combatant": id}``), in either order; the first roll of a round stays
secret from the other side until the second is in. The higher face scores a hit; a tie scores none.
The first to three hits (the option ``hits_to_win``) wins. The computer rolls for a duellist it plays
through the contract's hook (``computer_choice``), and the GM may roll for whoever has not yet
(``force``). Dice are drawn one d6 per roll, in the order the rolls are declared.

>>> from rules.core import Viewer
>>> from rules.dice import ScriptedDice
>>> duel = OneDie()
>>> lineup = [{"name": "Ann the Bold", "id": "a", "side": "A"}, {"name": "Bert the Brave", "id": "b", "side": "B"}]
>>> state, _ = duel.setup(duel.validate_lineup(lineup), duel.validate_options({}), ScriptedDice([]))
>>> state, _ = duel.apply(state, {"type": "roll", "combatant": "a"}, Viewer.gm(), ScriptedDice([5]))
>>> state, events = duel.apply(state, {"type": "roll", "combatant": "b"}, Viewer.gm(), ScriptedDice([2]))
>>> events[-1]["text"], state["combatants"]["a"]["hits"], state["round"]
('Round 1: Ann the Bold rolls 5 against 2 and hits Bert the Brave (1 of 3).', 1, 2)
"""

from __future__ import annotations

from .system import OneDie

#: what rules/registry.py loads (named in BATTLEBOARD_SYSTEMS as ``tests.systems.one_die``)
SYSTEM = OneDie

__all__ = ["SYSTEM", "OneDie"]
