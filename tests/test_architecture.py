"""The lines not to cross: rules/ stays pure, the wheel carries the pages, pages load nothing from elsewhere."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {"flask", "flask_socketio", "socketio", "engineio", "sqlmodel", "sqlalchemy", "webapp", "requests", "redis", "psycopg"}


def test_importing_rules_loads_no_web_or_database_module() -> None:
    code = (
        "import sys, rules\n"
        "from rules import available_systems\n"
        "[s.id for s in available_systems()]\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout.split())
    assert not loaded & FORBIDDEN, f"rules/ pulled in {loaded & FORBIDDEN}"


@pytest.mark.parametrize("path", sorted((REPO / "rules").rglob("*.py")), ids=lambda p: p.name)
def test_no_module_under_rules_imports_io_or_web_code(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN | {"socket", "subprocess", "urllib", "http", "sqlite3"}, f"{path.name} imports {name}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("open", "print", "input"), f"{path.name} calls {node.func.id}() — rules/ does no I/O"


def test_templates_load_nothing_from_another_host() -> None:
    for page in list((REPO / "templates").glob("*.html")) + [p for p in (REPO / "static").rglob("*.js") if "vendor" not in p.parts]:
        text = page.read_text().replace("http://www.w3.org/2000/svg", "")
        assert "http://" not in text and "https://" not in text, page
        assert "onclick=" not in text and "<script>" not in text, f"{page.name}: inline scripts break the CSP"


def test_the_wheel_carries_templates_and_static(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("battleboard-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("webapp/templates/board.html", "webapp/static/js/page.js", "webapp/static/css/board.css", "rules/core.py", "webapp/app.py"):
        assert needed in names, f"the wheel lacks {needed}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def rules_imports() -> dict[str, set[str]]:
    """Each module under rules/ and the modules under rules/ it imports: at the top, inside a
    function (a late import is still a tie) or for type checking alike."""
    paths = {_module_name(path): path for path in (REPO / "rules").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    above = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*above, *([node.module] if node.module else [])])
                # ``from . import terrain`` names a module; ``from .core import event`` names its module
                found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base for alias in node.names)
        graph[module] = {name for name in found if name in paths and name != module}
    return graph


def test_no_import_cycle_under_rules() -> None:
    graph = rules_imports()
    assert {"rules.engine", "rules.contract", "rules.core"} <= set(graph) and "rules.physical" in graph["rules.contract"]
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            cycle = path[path.index(module):] + [module]
            raise AssertionError("import cycle under rules/: " + " -> ".join(cycle))
        if module in done:
            return
        for imported in sorted(graph[module]):
            walk(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
