"""The registry of rule systems: ``get_system("phantoms-bane")``.

The one list of systems: each is a package under rules/systems/ that exports ``SYSTEM``. A system
kept elsewhere (a test's, a table's own) is added by naming its package in the environment
variable ``BATTLEBOARD_SYSTEMS`` (comma-separated), with no edit here. Systems are imported lazily,
so ``import rules`` stays light.

>>> get_system("phantoms-bane").name
"Phantom's Bane"
>>> get_system("chess")
Traceback (most recent call last):
...
rules.errors.InvalidDeclaration: unknown rule system 'chess'
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from .contract import RuleSystem
from .errors import InvalidDeclaration

#: system id -> its package under rules/systems/, in the order the GM's form offers them
SYSTEM_PACKAGES: dict[str, str] = {
    "phantoms-bane": "phantoms_bane",
    "eclipse-phase": "eclipse_phase",
    "olympia": "olympia",
    "adnd": "adnd",
    "battles-and-balances": "battles_balances",
}
#: the environment variable naming further system packages (importable modules exporting ``SYSTEM``)
EXTRA_SYSTEMS_VARIABLE = "BATTLEBOARD_SYSTEMS"

_cache: dict[str, RuleSystem] = {}
#: system id -> the module (package) it was loaded from
_modules: dict[str, str] = {}
_extras_loaded: set[str] = set()


def _load(module_name: str) -> RuleSystem:
    module = importlib.import_module(module_name)
    system: RuleSystem = module.SYSTEM()
    _cache.setdefault(system.id, system)
    _modules.setdefault(system.id, module_name)
    return _cache[system.id]


def _load_extras() -> None:
    """The systems named in ``BATTLEBOARD_SYSTEMS``, each registered under its own id."""
    for module_name in filter(None, (name.strip() for name in os.environ.get(EXTRA_SYSTEMS_VARIABLE, "").split(","))):
        if module_name not in _extras_loaded:
            _load(module_name)
            _extras_loaded.add(module_name)


def system_module(system_id: str) -> str:
    """The package that holds a system, for its other parts (``<package>.odds``)."""
    if system_id in SYSTEM_PACKAGES:
        return f"rules.systems.{SYSTEM_PACKAGES[system_id]}"
    _load_extras()
    if system_id in _modules:
        return _modules[system_id]
    raise InvalidDeclaration(f"unknown rule system {system_id!r}")


def system_part(system_id: str, part: str) -> ModuleType | None:
    """A system's optional part, the module ``<package>.<part>`` (its ``odds``, its ``chances``), or
    None if the system has none or there is no such system."""
    try:
        package = system_module(system_id)
    except InvalidDeclaration:
        return None
    try:
        return importlib.import_module(f"{package}.{part}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{part}":
            raise
    return None


def get_system(system_id: str) -> RuleSystem:
    """The rule system with this id (raises :class:`InvalidDeclaration` if there is none)."""
    if system_id in _cache:
        return _cache[system_id]
    if system_id in SYSTEM_PACKAGES:
        return _load(system_module(system_id))
    _load_extras()
    if system_id in _cache:
        return _cache[system_id]
    raise InvalidDeclaration(f"unknown rule system {system_id!r}")


def available_systems() -> list[RuleSystem]:
    """Every rule system that is built, in registry order."""
    found = []
    _load_extras()
    for system_id in [*SYSTEM_PACKAGES, *(i for i in _cache if i not in SYSTEM_PACKAGES)]:
        try:
            found.append(get_system(system_id))
        except InvalidDeclaration:
            continue
    return found
