"""Browser-side libraries, fetched once from the npm registry and never committed:

- the Socket.IO JavaScript client, served by the app (every page);
- NoSleep.js, served by the app: keeps a phone's screen awake where the Screen Wake Lock API is
  missing (a board reached over plain http on the LAN, see ``static/js/wake-lock.js``);
- axe-core, the accessibility checker the browser tests run in each page (never served by the app).

The board must work on a LAN without internet, so nothing is loaded from a CDN. Each file comes out
of its package's pinned tarball, downloaded over HTTPS with Python's own ``urllib`` (no npm, no
Node: Python is all a newcomer needs) and checked against the pinned SHA-512 (the registry's
``dist.integrity`` for that version) before anything is read from it or stored. A tarball that does
not match is refused and nothing is written. ``BATTLEBOARD_NPM_REGISTRY`` points at a mirror (the
checksums stay the pinned ones).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import ssl
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"
#: a tarball larger than this is refused before it is checked (the largest pinned one is about 1.3 MB)
MAX_TARBALL_BYTES = 20 * 1024 * 1024
DOWNLOAD_TIMEOUT = 60.0


class VendorError(RuntimeError):
    pass


@dataclass(frozen=True)
class NpmFile:
    """One file of a pinned npm package."""

    package: str
    version: str
    #: sha512 of the package's tarball, as the registry's ``dist.integrity`` gives it
    integrity: str
    #: its path inside the package (the tarball holds it under ``package/``)
    member: str
    #: the name it is stored (and, for the board's own files, served) under
    file_name: str
    #: a stored file smaller than this is taken as broken and fetched again
    min_size: int = 1000


SOCKETIO_CLIENT = NpmFile(
    "socket.io-client", "4.8.1",
    "sha512-hJVXfu3E28NmzGk8o1sHhN3om52tRvwYeidbj7xKy2eIIse5IoKX3USlS6Tqt3BHAtflLIkCQBkzVrEEfWUyYQ==",
    "dist/socket.io.min.js", "socket.io.min.js",
)
NOSLEEP = NpmFile(
    "nosleep.js", "0.12.0",
    "sha512-9d1HbpKLh3sdWlhXMhU6MMH+wQzKkrgfRkYV0EBdvt99YJfj0ilCJrWRDYG2130Tm4GXbEoTCx5b34JSaP+HhA==",
    "dist/NoSleep.min.js", "NoSleep.min.js",
)
#: axe-core, for the accessibility tests only (tests/browser/test_accessibility.py)
AXE_CORE = NpmFile(
    "axe-core", "4.10.3",
    "sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg==",
    "axe.min.js", "axe-4.10.3.min.js", min_size=100_000,
)
#: the files the board serves at ``/vendor/<file_name>``
SERVED = {f.file_name: f for f in (SOCKETIO_CLIENT, NOSLEEP)}

# the names other modules knew these by
SOCKETIO_CLIENT_VERSION = SOCKETIO_CLIENT.version
SOCKETIO_CLIENT_INTEGRITY = SOCKETIO_CLIENT.integrity
FILE_NAME = SOCKETIO_CLIENT.file_name
AXE_CORE_VERSION = AXE_CORE.version
AXE_CORE_INTEGRITY = AXE_CORE.integrity
AXE_FILE_NAME = AXE_CORE.file_name


def integrity_of(data: bytes) -> str:
    """The npm-style integrity string of some bytes: ``sha512-`` and the base64 digest."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarball_url(package: str, version: str, registry: str | None = None) -> str:
    """The registry's address of a package version's tarball (its ``dist.tarball``).

    >>> tarball_url("socket.io-client", "4.8.1")
    'https://registry.npmjs.org/socket.io-client/-/socket.io-client-4.8.1.tgz'
    """
    base = (registry or os.environ.get("BATTLEBOARD_NPM_REGISTRY") or REGISTRY).rstrip("/")
    return f"{base}/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"


def _tls_contexts() -> list[ssl.SSLContext]:
    """The system's certificates (``SSL_CERT_FILE`` too); then certifi's, where it is installed, for a
    Python that came without any (python.org's on macOS before "Install Certificates")."""
    contexts = [ssl.create_default_context()]
    try:
        import certifi  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return contexts
    return [*contexts, ssl.create_default_context(cafile=certifi.where())]


def _open(request: urllib.request.Request, limit: int) -> bytes:
    contexts = _tls_contexts()
    for number, context in enumerate(contexts, start=1):
        try:
            with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT, context=context) as response:
                return bytes(response.read(limit + 1))
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ssl.SSLCertVerificationError) or number == len(contexts):
                raise
    raise AssertionError("unreachable")


def download(url: str, limit: int = MAX_TARBALL_BYTES) -> bytes:
    """The bytes at ``url`` (HTTPS, certificates checked), at most ``limit`` of them."""
    request = urllib.request.Request(url, headers={"User-Agent": "battleboard (python urllib)", "Accept": "application/octet-stream"})
    try:
        data = _open(request, limit)
    except urllib.error.HTTPError as exc:
        raise VendorError(f"{url}: the registry answered {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise VendorError(f"{url}: the HTTPS certificate could not be checked ({reason.verify_message}); "
                              "install your system's CA certificates") from exc
        raise VendorError(f"could not reach {url} ({reason}): this machine needs internet once to fetch it") from exc
    if len(data) > limit:
        raise VendorError(f"{url}: larger than {limit // (1024 * 1024)} MB, refused")
    return data


def fetch_npm_file(wanted: NpmFile) -> bytes:
    """One file of a pinned npm package: its tarball downloaded from the registry, checked against
    the pinned SHA-512, then the file read out of it (nothing is extracted to disk)."""
    url = tarball_url(wanted.package, wanted.version)
    tarball = download(url)
    if integrity_of(tarball) != wanted.integrity:
        raise VendorError(
            f"the {wanted.package}@{wanted.version} tarball from {url} does not match its pinned SHA-512: refused, nothing stored")
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            member = archive.getmember(f"package/{wanted.member}")
            extracted = archive.extractfile(member) if member.isfile() else None
            if extracted is None:
                raise KeyError(wanted.member)
            return extracted.read()
    except KeyError as exc:
        raise VendorError(f"the {wanted.package} package has no {wanted.member}") from exc
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise VendorError(f"the {wanted.package} tarball cannot be read: {exc}") from exc


def _store(target: Path, data: bytes) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)  # whole or not at all: a page never gets half a file
    return target


def candidate_paths(static_dir: Path, instance_dir: Path, file_name: str = FILE_NAME) -> list[Path]:
    return [static_dir / "vendor" / file_name, instance_dir / "vendor" / file_name]


def find_file(wanted: NpmFile, static_dir: Path, instance_dir: Path) -> Path | None:
    for path in candidate_paths(static_dir, instance_dir, wanted.file_name):
        if path.is_file() and path.stat().st_size >= wanted.min_size:
            return path
    return None


def ensure_file(wanted: NpmFile, static_dir: Path, instance_dir: Path) -> Path:
    """A served file, fetched into static/vendor (or the instance folder if static is read-only)."""
    found = find_file(wanted, static_dir, instance_dir)
    if found:
        return found
    data = fetch_npm_file(wanted)
    last: Exception | None = None
    for path in candidate_paths(static_dir, instance_dir, wanted.file_name):
        try:
            return _store(path, data)
        except PermissionError as exc:
            last = exc
    raise VendorError(f"could not store {wanted.file_name}: {last}")


def find_client(static_dir: Path, instance_dir: Path) -> Path | None:
    return find_file(SOCKETIO_CLIENT, static_dir, instance_dir)


def ensure_client(static_dir: Path, instance_dir: Path) -> Path:
    """The Socket.IO client file, fetched if need be."""
    return ensure_file(SOCKETIO_CLIENT, static_dir, instance_dir)


def ensure_served(static_dir: Path, instance_dir: Path) -> list[Path]:
    """Every file the board serves (the Socket.IO client, NoSleep.js), fetched if need be."""
    return [ensure_file(wanted, static_dir, instance_dir) for wanted in SERVED.values()]


def ensure_axe(instance_dir: Path) -> Path:
    """axe-core's ``axe.min.js``, fetched once into the instance folder's ``test-vendor`` (never
    into ``static/``: the board does not serve it)."""
    target = instance_dir / "test-vendor" / AXE_CORE.file_name
    if target.is_file() and target.stat().st_size >= AXE_CORE.min_size:
        return target
    return _store(target, fetch_npm_file(AXE_CORE))
