"""The README stays a user's page (short, starting with how to start), and no link of it or of docs/ is broken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
MAX_README_LINES = 300

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens.

    >>> slug("Security: what the board promises")
    'security-what-the-board-promises'
    >>> slug("Load: tables of a GM, 6 players and 10 spectators")
    'load-tables-of-a-gm-6-players-and-10-spectators'
    """
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path.read_text())) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def test_readme_is_at_most_300_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines: move detail into docs/ (at most {MAX_README_LINES})"


def test_the_readme_says_what_the_board_is_and_how_to_start_on_its_first_screen() -> None:
    first_screen = "\n".join(README.read_text().splitlines()[:30])
    assert "battle board" in first_screen.lower()
    assert "python3 -m webapp serve" in first_screen
    assert "python3 -m webapp test" in first_screen


def test_the_readme_links_every_page_of_docs() -> None:
    linked = {(README.parent / target.split("#")[0]).resolve() for target in relative_links(README)}
    assert [doc.name for doc in DOCS if doc.resolve() not in linked] == []


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_points_to_an_existing_file_and_heading(page: Path) -> None:
    targets = relative_links(page)
    broken = []
    for target in targets:
        file_part, _, anchor = target.partition("#")
        goal = (page.parent / file_part).resolve() if file_part else page
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading #{anchor} in {goal.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)} links to what does not exist: {broken}"


def test_every_docs_file_named_in_the_code_exists() -> None:
    named = set()
    for folder in ("rules", "webapp", "templates", "static", "tests", ".ci"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".html", ".js", ".css", ".md", ""} and "vendor" not in path.parts:
                named |= {(name, path.relative_to(REPO).as_posix()) for name in re.findall(r"\bdocs/[\w./-]*\w", path.read_text(errors="ignore"))}
    assert named, "no file names docs/: the search is broken"
    assert sorted((name, where) for name, where in named if not (REPO / name).exists()) == []
