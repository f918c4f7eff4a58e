"""No file outside a system's own places names a system id: everything else reads the system's traits.

A system's own places are its package (rules/systems/<package>/, or rules/<package>.py and
rules/odds/<package>.py until it moves there), its JS modules (static/js/systems/, and its table
display static/js/display/<id>.js) and its CSS (static/css/<id>.css). The one list of systems is
rules/registry.py. Anywhere else a system is known only by what it says of itself: its traits
(rules/contract.py's ``Traits``, sent to the pages in the table payload) and its hooks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rules.registry import SYSTEM_PACKAGES

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("rules", "webapp", "templates", "static")
SUFFIXES = {".py", ".html", ".js", ".mjs", ".css", ".json", ".md", ".txt", ".svg", ".jinja", ".j2"}
#: each system's id and its package name
NAMES = sorted({*SYSTEM_PACKAGES, *SYSTEM_PACKAGES.values()}, key=len, reverse=True)
NAMED = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(re.escape(name) for name in NAMES) + r")(?![A-Za-z0-9])")


def _own_place(relative: Path) -> bool:
    """Whether a file is the one list of systems or belongs to one system."""
    parts = relative.parts
    stem = relative.name.split(".")[0]
    if relative.as_posix() == "rules/registry.py":
        return True
    if parts[:2] == ("rules", "systems") and len(parts) > 3:  # rules/systems/<package>/...
        return True
    if parts[:3] == ("static", "js", "systems"):
        return True
    if stem in NAMES and relative.parent.as_posix() in ("rules", "rules/odds", "static/js/display", "static/css"):
        return True  # rules/<package>.py and rules/odds/<package>.py (until they move), the system's display and CSS
    return False


def _shared_files() -> list[Path]:
    found = []
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*")):
            relative = path.relative_to(REPO)
            if path.is_file() and path.suffix in SUFFIXES and "vendor" not in relative.parts and \
                    "__pycache__" not in relative.parts and not _own_place(relative):
                found.append(relative)
    return found


def test_the_scan_sees_the_shared_places() -> None:
    scanned = {p.as_posix() for p in _shared_files()}
    for shared in ("rules/report.py", "rules/carry_over.py", "rules/contract.py", "webapp/cli.py",
                   "templates/board.html", "static/js/odds.js"):
        assert shared in scanned
    assert "rules/registry.py" not in scanned


@pytest.mark.parametrize("relative", _shared_files(), ids=lambda p: p.as_posix())
def test_no_shared_file_names_a_system(relative: Path) -> None:
    text = (REPO / relative).read_text(encoding="utf-8", errors="replace")
    lines = [f"{number}: {line.strip()[:120]}" for number, line in enumerate(text.splitlines(), start=1) if NAMED.search(line)]
    assert not lines, f"{relative} names a system (read its traits instead):\n" + "\n".join(lines)


def test_each_systems_traits_hold_together() -> None:
    """What the shared places read of each system: demos with their own slugs and presets, charts the
    report hook fills, traits the pages can read as JSON."""
    import json

    from rules import SeededDice, available_systems

    slugs = []
    for system in available_systems():
        traits = system.traits
        json.dumps(traits.to_dict())
        assert traits.to_dict(odds=False)["odds_questions"] == []
        if traits.demo is not None:
            slugs.append(traits.demo.slug)
            presets = {p["name"] for p in system.presets()}
            assert {name for name, _, _ in traits.demo.lineup} <= presets, system.id
        assert traits.charts, f"{system.id}: a report draws at least one chart"
        assert bool(traits.carried_fields) <= traits.carries_over, system.id
        if system.id in SYSTEM_PACKAGES and traits.demo is not None:
            from webapp.cli import demo_lineup

            lineup = system.validate_lineup(demo_lineup(system.id))
            state, _ = system.setup(lineup, system.validate_options({}), SeededDice("traits"))
            keys = {chart.key for chart in traits.charts}
            assert set(system.report_strength(state, None)) <= keys, system.id
    assert len(slugs) == len(set(slugs)), "two demos share a slug"
