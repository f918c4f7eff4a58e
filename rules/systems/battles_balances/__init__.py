"""Battles&Balances: dice pools, borrowed action points, reach and range, contests and checks.

Every attribute is a number of dice of the character's size: an average human with Muscle 3 rolls
3d8 for Muscle. A melee attack is Agility plus the weapon's attack score against the defender's
Speed plus shield; half the size difference goes to the smaller side and a tie misses. Damage is
the weapon die plus the damage modifier plus the margin; armour takes off its protection only if
the damage reaches it. Wounds that reach health put a character out of play.

There are no common rounds. Characters take turns in lineup order; each action costs action points
(AP). With at least one AP left a character may act and borrow (go negative); at zero or less its
turn is spent recovering its full allowance. So each character refreshes at its own moment.

Contests (opposed rolls) and static checks are GM tools that work in any battle status.

The package:

- system.py: the rule system, its setup and declarations;
- data.py: the character sheet, the options, the derived numbers, the presets and the help;
- board.py: the grid (distance, reach, range, the price of a move); combat.py: the dice pools, blows,
  damage, checks and contests; turns.py: the action-point clock, the timeline and the end;
- view.py: what each viewer sees and may declare; computer.py: the computer's player; odds.py: the odds.

>>> bb = SYSTEM()
>>> derived(bb.validate_combatant(PRINCE, 0))
{'health': 16, 'damage_modifier': 4, 'ap_max': 16, 'attack_cost': 5}
>>> size_bonus(8, 12), threshold_reached(47), round(chance_at_least(3, 8, 20), 4)
(2, 'challenging', 0.0684)
"""

from __future__ import annotations

from .combat import chance_at_least, pool_distribution, pool_roll, size_bonus, threshold_reached
from .data import PRESETS, PRINCE, SHOCK_TROOPER, derived
from .system import BattlesAndBalances
from .turns import timeline

#: what rules/registry.py loads
SYSTEM = BattlesAndBalances

__all__ = [
    "PRESETS",
    "PRINCE",
    "SHOCK_TROOPER",
    "SYSTEM",
    "BattlesAndBalances",
    "chance_at_least",
    "derived",
    "pool_distribution",
    "pool_roll",
    "size_bonus",
    "threshold_reached",
    "timeline",
]
