"""AD&D 1e combat run by the Demon Idol round procedure (``SYSTEM``), in this package's modules:

- system.py: the rule system, its declarations and how each is resolved;
- data.py: the tables, the forms' fields, the presets and the help, with the functions that read them;
- combatants.py: who each combatant is, who may act, whose numbers whom may see;
- declarations.py: phase 6, the declarations and the players' clock;
- segments.py: the order of resolution, action letters, segments and the out-of-sequence cases;
- charges.py: charges on the grid;
- resolution.py: resolution, bleeding and the recap; morale.py: what a failed morale check does;
- computer.py: the computer player; view.py: what each viewer sees; odds.py: the odds.
"""

from .system import AdndDemonIdol

#: what rules/registry.py loads
SYSTEM = AdndDemonIdol

__all__ = ["SYSTEM", "AdndDemonIdol"]
