"""The Socket.IO JavaScript client, fetched once from the npm registry and served by the app; and
axe-core, the accessibility checker the browser tests run in each page (never served by the app).

The board must work on a LAN without internet, so the client is never loaded from a CDN; and no
third-party file is committed. ``npm pack`` fetches the pinned version; its SHA-512 integrity is
checked against the pinned value before the file is used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

SOCKETIO_CLIENT_VERSION = "4.8.1"
#: sha512 of the npm tarball of socket.io-client@4.8.1 (npm's "integrity")
SOCKETIO_CLIENT_INTEGRITY = "sha512-hJVXfu3E28NmzGk8o1sHhN3om52tRvwYeidbj7xKy2eIIse5IoKX3USlS6Tqt3BHAtflLIkCQBkzVrEEfWUyYQ=="
FILE_NAME = "socket.io.min.js"


class VendorError(RuntimeError):
    pass


def candidate_paths(static_dir: Path, instance_dir: Path) -> list[Path]:
    return [static_dir / "vendor" / FILE_NAME, instance_dir / "vendor" / FILE_NAME]


def find_client(static_dir: Path, instance_dir: Path) -> Path | None:
    for path in candidate_paths(static_dir, instance_dir):
        if path.is_file() and path.stat().st_size > 1000:
            return path
    return None


def fetch_npm_file(package: str, version: str, integrity: str, member: str) -> bytes:
    """One file (``member``, e.g. ``dist/socket.io.min.js``) of a pinned npm package, fetched with
    ``npm pack`` and checked against npm's integrity and the pinned SHA-512."""
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(f"npm is needed once to fetch {package} (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", f"{package}@{version}", "--json", "--silent"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise VendorError(f"npm pack failed: {done.stderr.strip()[-400:]}")
        info = json.loads(done.stdout[done.stdout.index("[") :])[0]
        tarball = Path(tmp) / info["filename"]
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != info.get("integrity"):
            raise VendorError(f"the {package} tarball does not match npm's integrity")
        if integrity and digest != integrity:
            raise VendorError(f"the {package} tarball does not match the pinned checksum")
        with tarfile.open(tarball) as archive:
            try:
                extracted = archive.extractfile(f"package/{member}")
            except KeyError:
                extracted = None
            if extracted is None:
                raise VendorError(f"the {package} package has no {member}")
            return extracted.read()


def fetch_client(target: Path) -> Path:
    """Fetch the pinned client with npm into ``target`` (a file path); return it."""
    data = fetch_npm_file("socket.io-client", SOCKETIO_CLIENT_VERSION, SOCKETIO_CLIENT_INTEGRITY, f"dist/{FILE_NAME}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def ensure_client(static_dir: Path, instance_dir: Path) -> Path:
    """The client file, fetched into static/vendor (or the instance folder if static is read-only)."""
    found = find_client(static_dir, instance_dir)
    if found:
        return found
    last: Exception | None = None
    for path in candidate_paths(static_dir, instance_dir):
        try:
            return fetch_client(path)
        except PermissionError as exc:
            last = exc
            continue
    raise VendorError(f"could not store the Socket.IO client: {last}")


#: axe-core, for the accessibility tests only (tests/browser/test_accessibility.py)
AXE_CORE_VERSION = "4.10.3"
#: sha512 of the npm tarball of axe-core@4.10.3 (npm's "integrity")
AXE_CORE_INTEGRITY = "sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg=="
AXE_FILE_NAME = f"axe-{AXE_CORE_VERSION}.min.js"


def ensure_axe(instance_dir: Path) -> Path:
    """axe-core's ``axe.min.js``, fetched once into the instance folder's ``test-vendor`` (never
    into ``static/``: the board does not serve it)."""
    target = instance_dir / "test-vendor" / AXE_FILE_NAME
    if target.is_file() and target.stat().st_size > 100_000:
        return target
    data = fetch_npm_file("axe-core", AXE_CORE_VERSION, AXE_CORE_INTEGRITY, "axe.min.js")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target
