"""Olympia mass battles: two armies of nobles and their men, fought phase by phase until one side breaks.

Each lineup entry is a *noble* with his men (troop counts per kind). The noble's ``behind`` value puts
him and all his men in the front row (0) or in a back row (1-9). A battle starts in a deployment
stage (``status == "setup"``) where the GM or a noble's player moves units between rows and each
side's leader sets its break point; the GM then declares ``begin`` and steps the fight with
``{"type": "step", "by": "phase" | "round" | "battle"}``.

Men are kept as counts per group (one group per kind and noble), and each phase draws all of its
random numbers in a few vectorised calls of ``dice.integers``. Nothing is approximated: every
attacker picks his own target uniformly among the valid target slots, hits are never redirected,
and the fallen leave only when the phase is over.

Order in which a phase uses the dice (what a test must script, side A's attacks before side B's;
in the special phase, first one key per special attack when there are several, the smallest
key going first, then each special attack's picks and rolls in that order). Units are taken
by row, then in lineup order; within a unit the noble comes first, then his troops in table order.

1. if the attacks of a side are capped: one key per eligible attacker (``0 .. 2**62-1``); the
   attackers with the smallest keys strike;
2. one target pick per attack (``0 .. T-1`` over the enemy's target slots: its men and nobles in
   unit order, a group split by the shelter with the sheltered men first, the structure last);
3. one hit roll per attack: a roll of ``1 .. d`` hits on ``a`` or less, where ``a : d`` is
   attack : (attack + defence) in lowest terms. The rolls come in batches of equal odds, the
   batches in the order of their first attack, each batch in attack order (attackers in unit
   order, each unit's noble first, then his troops in table order). A certain hit (defence 0) is
   not rolled;
4. after both sides: one wound roll (1-100) per noble who was hit, then the damage rolls (5-10)
   of the siege engines that struck a structure;
5. when the phase ends the battle with a winner and the prisoners option is on: one d100 per
   surviving noble of the loser, in lineup order (taken on the chance or less).

The combat value of a man is the higher of his attack and effective missile rating plus his
defence; a side breaks when its total falls to its threshold:

>>> combat_value(80, 0, 80) + 2 * combat_value(5, 0, 20)
210
>>> break_threshold(210, 50)
105
>>> Olympia().troop_value("knight")
180
"""

from __future__ import annotations

from .army import break_threshold, combat_value
from .system import Olympia

#: what rules/registry.py loads
SYSTEM = Olympia

__all__ = ["SYSTEM", "Olympia", "break_threshold", "combat_value"]
