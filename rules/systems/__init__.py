"""The rule systems, one package each: ``rules/systems/<package>/``.

A system's package exports ``SYSTEM``, its :class:`rules.contract.RuleSystem` subclass, and holds
everything of that system: its rules, tables, presets and help, its view, its computer player and
its odds (``odds.py``, with a function ``odds(system, state, viewer, declaration)``). Nothing outside
the package names the system; rules/registry.py lists the packages once, in the order the GM's
form offers them.
"""
