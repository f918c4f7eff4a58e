"""Bootstrap a checkout with the standard library alone: ``python3 -m webapp serve`` / ``python3 -m webapp test``.

``serve``  creates ``.venv`` if needed, installs Battleboard into it and starts the board on SQLite
           with a demo table of every rule system, printing each one's display, GM, player and
           spectator addresses.
``test``   installs everything the tests need (the test extra, Chromium, the browser libraries and
           axe-core for the accessibility tests, fetched from the npm registry by Python itself),
           then runs ruff and lint-imports, and the whole test suite on every core (pytest-xdist) with mypy beside it.
           Extra arguments go to pytest (``-n 0``, or ``BATTLEBOARD_TEST_WORKERS=0``: in one process).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("BATTLEBOARD_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
CHROMIUM = "/usr/bin/chromium"


def say(text: str) -> None:
    print(f"[battleboard] {text}", flush=True)


def run(*cmd: str | Path, check: bool = True, env: dict[str, str] | None = None) -> int:
    done = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env)
    if check and done.returncode != 0:
        say(f"failed ({done.returncode}): {' '.join(str(c) for c in cmd)}")
        raise SystemExit(done.returncode)
    return done.returncode


def ensure_venv(extra: str = "") -> None:
    if not (BIN / "python").exists():
        say(f"creating the virtual environment {VENV}")
        run(sys.executable, "-m", "venv", VENV)
        run(BIN / "python", "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    stamp = VENV / f".battleboard-installed{extra}"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    target = f".[{extra}]" if extra else "."
    say(f"installing {target} into {VENV}")
    run(BIN / "python", "-m", "pip", "install", "--quiet", "-e", target)
    stamp.write_text(wanted)


def ensure_chromium() -> None:
    """Debian's Chromium as root (Playwright cannot download here); elsewhere Playwright's own."""
    if os.environ.get("BATTLEBOARD_CHROMIUM") or Path(CHROMIUM).exists():
        return
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if is_root and shutil.which("apt-get"):
        say("installing Chromium from Debian's packages")
        run("apt-get", "update", "-qq")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run("apt-get", "install", "-y", "-qq", "chromium", env=env)
        return
    say("installing Playwright's Chromium")
    run(BIN / "python", "-m", "playwright", "install", "chromium")


def cmd_serve(args: list[str]) -> int:
    ensure_venv()
    os.chdir(ROOT)
    os.execv(str(BIN / "battleboard"), [str(BIN / "battleboard"), "serve", *args])
    return 0


def cmd_test(args: list[str]) -> int:
    ensure_venv("test")
    ensure_chromium()
    run(BIN / "battleboard", "fetch-assets", "--tests")  # the browser libraries, and axe-core for the accessibility tests
    say("ruff check")
    run(BIN / "ruff", "check", "rules", "webapp", "tests")
    run(BIN / "lint-imports", "--no-cache")  # the import contracts in pyproject.toml: layers, pure rules, no cycles
    # mypy (--strict over rules and webapp, [tool.mypy] in pyproject.toml) checks beside the tests,
    # which wait on their browsers and servers much of the time; its verdict is printed after theirs
    say("mypy, beside pytest")
    with tempfile.TemporaryFile() as said:
        mypy = subprocess.Popen([str(BIN / "mypy")], cwd=ROOT, stdout=said, stderr=subprocess.STDOUT)
        say("pytest")
        tests = run(BIN / "python", "-m", "pytest", *parallel(args), *(args or ["-q"]), check=False)
        typed = mypy.wait()
        said.seek(0)
        say("mypy")
        sys.stdout.write(said.read().decode(errors="replace"))
        sys.stdout.flush()
    if typed != 0:
        say(f"failed ({typed}): mypy")
    return tests or typed


def parallel(args: list[str]) -> list[str]:
    """pytest-xdist's options unless the arguments choose their own: one worker per core (``-n auto``),
    the groups of tests/conftest.py kept together. ``BATTLEBOARD_TEST_WORKERS`` sets the number of
    workers (``0``: everything in this one process, as ``-n 0`` does).

    >>> os.environ.pop("BATTLEBOARD_TEST_WORKERS", None) and None
    >>> parallel(["-q"]), parallel(["-n", "0", "-q"]), parallel(["-q", "--dist=load", "-n3"])
    (['-n', 'auto', '--dist', 'loadgroup'], [], [])
    >>> os.environ["BATTLEBOARD_TEST_WORKERS"] = "0"
    >>> parallel(["-q"])
    []
    >>> os.environ["BATTLEBOARD_TEST_WORKERS"] = "3"
    >>> parallel(["-q"])
    ['-n', '3', '--dist', 'loadgroup']
    >>> del os.environ["BATTLEBOARD_TEST_WORKERS"]
    """
    workers = os.environ.get("BATTLEBOARD_TEST_WORKERS", "").strip() or "auto"
    chosen = any(a in ("-n", "--numprocesses") or a.startswith(("-n", "--numprocesses=", "--dist")) for a in args)
    if workers in ("0", "1") or chosen or "no:xdist" in args:
        return []
    return ["-n", workers, "--dist", "loadgroup"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "test"):
        print(__doc__)
        return 2
    return {"serve": cmd_serve, "test": cmd_test}[argv[0]](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
