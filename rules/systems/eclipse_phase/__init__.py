"""Eclipse Phase 2e combat on a square grid: initiative order, opposed d100 tests, wounds.

Every attack is an opposed percentile test. The attacker declares the attack on its turn (target,
weapon, firing mode, situational modifiers, an optional pool point spent before the roll); the
server shows the target number; the defender (or the GM for it) chooses a defence; both d100 are
rolled; each side may then spend one pool point after the roll (flip the digits, raise a success by
one superior level, soften a critical failure) or accept; then damage, armour, wounds and the SOM
check follow. The binding rulings (RULINGS.md, Eclipse Phase section) are implemented exactly.

Dice order (for scripted dice and replays): at the start of each action turn one d6 per able
combatant in lineup order, then tie-break d6s (the first action turn's as the battle is set up,
unless a combatant rolls real dice: then the battle starts with initiative due and the GM's
``roll_initiative`` rolls it, asking each physical roller for their d6); for an attack the attacker's d100, then the
defender's d100 (none if it cannot defend); after both sides accept, the blind-attack d100 if that
option was taken, then the weapon's damage dice, the extra dice (charge, then burst, full automatic
or aggressive), the superior-success d6s, and last the SOM check's d100 if a wound was dealt. A disarming
called shot that comes off rolls no damage and nothing after it.

The package: data.py (tables, forms, presets, help), rulings.py (the pure rules of the tests),
board.py (the grid), then the system's class in layers: turns.py (the action turn), called_shots.py,
combat.py (the attack), computer.py (the computer player), view.py (what each viewer sees) and
system.py (forms, setup, apply, the GM's tools); odds.py answers the odds of an attack being built.
"""

from .system import EclipsePhase

#: what rules/registry.py loads
SYSTEM = EclipsePhase

__all__ = ["SYSTEM", "EclipsePhase"]
