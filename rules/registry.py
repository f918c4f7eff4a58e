"""The registry of rule systems: ``get_system("phantoms-bane")``.

Systems are imported lazily, so ``import rules`` stays light.

>>> get_system("phantoms-bane").name
"Phantom's Bane"
>>> get_system("chess")
Traceback (most recent call last):
...
rules.errors.InvalidDeclaration: unknown rule system 'chess'
"""

from __future__ import annotations

import importlib

from .contract import RuleSystem
from .errors import InvalidDeclaration

#: system id -> (module, class name)
SYSTEM_MODULES: dict[str, tuple[str, str]] = {
    "phantoms-bane": ("rules.phantoms_bane", "PhantomsBane"),
    "eclipse-phase": ("rules.eclipse_phase", "EclipsePhase"),
    "olympia": ("rules.olympia", "Olympia"),
    "adnd": ("rules.adnd", "AdndDemonIdol"),
    "battles-and-balances": ("rules.battles_balances", "BattlesAndBalances"),
}

_cache: dict[str, RuleSystem] = {}


def get_system(system_id: str) -> RuleSystem:
    """The rule system with this id (raises :class:`InvalidDeclaration` if there is none)."""
    if system_id in _cache:
        return _cache[system_id]
    if system_id not in SYSTEM_MODULES:
        raise InvalidDeclaration(f"unknown rule system {system_id!r}")
    module_name, class_name = SYSTEM_MODULES[system_id]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise InvalidDeclaration(f"the rule system {system_id!r} is not built yet") from exc
        raise
    system = getattr(module, class_name)()
    _cache[system_id] = system
    return system


def available_systems() -> list[RuleSystem]:
    """Every rule system that is built, in registry order."""
    found = []
    for system_id in SYSTEM_MODULES:
        try:
            found.append(get_system(system_id))
        except InvalidDeclaration:
            continue
    return found
