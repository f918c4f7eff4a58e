"""The browser libraries are fetched with Python alone (issue 33): the pinned tarball from the npm
registry, checked against its SHA-512 before anything is read from it or stored. A registry of the
test's own on 127.0.0.1 (``BATTLEBOARD_NPM_REGISTRY``) serves the tarballs: no network here."""

from __future__ import annotations

import io
import shutil
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from webapp import vendor
from webapp.vendor import (
    NpmFile,
    VendorError,
    ensure_axe,
    ensure_client,
    ensure_file,
    fetch_npm_file,
    integrity_of,
)


def tarball(files: dict[str, bytes]) -> bytes:
    """An npm-style tarball: every file under ``package/``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Registry:
    """A tiny npm registry on 127.0.0.1: path -> bytes, and the paths it was asked for."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.asked: list[str] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                registry.asked.append(self.path)
                data = registry.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    served = Registry()
    monkeypatch.setenv("BATTLEBOARD_NPM_REGISTRY", served.url)
    # whatever the machine has on its PATH, npm is not needed any more
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    yield served
    served.server.shutdown()
    served.server.server_close()


SCRIPT = b"/* a browser library */ window.library = 1;" + b" " * 2000


def test_a_pinned_tarball_is_fetched_checked_and_read_with_python_alone(registry: Registry, tmp_path: Path) -> None:
    package = tarball({"dist/lib.min.js": SCRIPT, "package.json": b"{}"})
    wanted = NpmFile("some-lib", "1.2.3", integrity_of(package), "dist/lib.min.js", "lib.min.js")
    registry.files["/some-lib/-/some-lib-1.2.3.tgz"] = package
    assert fetch_npm_file(wanted) == SCRIPT
    stored = ensure_file(wanted, tmp_path / "static", tmp_path / "instance")
    assert stored == tmp_path / "static" / "vendor" / "lib.min.js" and stored.read_bytes() == SCRIPT
    # fetched once: a second call finds it
    asked = len(registry.asked)
    assert ensure_file(wanted, tmp_path / "static", tmp_path / "instance") == stored and len(registry.asked) == asked


def test_a_tampered_tarball_is_refused_and_nothing_is_stored(registry: Registry, tmp_path: Path) -> None:
    genuine = tarball({"dist/socket.io.min.js": SCRIPT})
    tampered = tarball({"dist/socket.io.min.js": SCRIPT.replace(b"= 1", b"= 2")})
    # the real pinned Socket.IO client: the registry serves something else at its address
    registry.files["/socket.io-client/-/socket.io-client-4.8.1.tgz"] = tampered
    with pytest.raises(VendorError, match="does not match its pinned SHA-512"):
        ensure_client(tmp_path / "static", tmp_path / "instance")
    assert registry.asked == ["/socket.io-client/-/socket.io-client-4.8.1.tgz"]
    assert not (tmp_path / "static" / "vendor").exists() and not (tmp_path / "instance" / "vendor").exists()
    # the same for the tests' axe-core, and for any pinned file whose tarball changed by one byte
    registry.files["/axe-core/-/axe-core-4.10.3.tgz"] = tampered
    with pytest.raises(VendorError, match="pinned SHA-512"):
        ensure_axe(tmp_path / "instance")
    assert not (tmp_path / "instance" / "test-vendor").exists()
    wanted = NpmFile("some-lib", "1.0.0", integrity_of(genuine), "dist/socket.io.min.js", "lib.min.js")
    registry.files["/some-lib/-/some-lib-1.0.0.tgz"] = genuine[:-1] + bytes([genuine[-1] ^ 1])
    with pytest.raises(VendorError, match="pinned SHA-512"):
        ensure_file(wanted, tmp_path / "static", tmp_path / "instance")
    assert not (tmp_path / "static" / "vendor").exists()


def test_a_missing_tarball_or_file_says_what_is_wrong(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(VendorError, match="404"):
        fetch_npm_file(NpmFile("nothing-here", "1.0.0", "sha512-x", "a.js", "a.js"))
    package = tarball({"README.md": b"no script"})
    registry.files["/some-lib/-/some-lib-2.0.0.tgz"] = package
    with pytest.raises(VendorError, match="has no dist/lib.min.js"):
        fetch_npm_file(NpmFile("some-lib", "2.0.0", integrity_of(package), "dist/lib.min.js", "lib.min.js"))


def test_the_pinned_files_and_their_registry_addresses() -> None:
    """Each pinned file is a tarball on the registry's HTTPS address, with a SHA-512 to check."""
    for wanted in (vendor.SOCKETIO_CLIENT, vendor.NOSLEEP, vendor.AXE_CORE):
        assert wanted.integrity.startswith("sha512-") and len(wanted.integrity) == 95
    assert vendor.tarball_url("nosleep.js", "0.12.0", vendor.REGISTRY) == "https://registry.npmjs.org/nosleep.js/-/nosleep.js-0.12.0.tgz"
    assert set(vendor.SERVED) == {"socket.io.min.js", "NoSleep.min.js"}


def test_the_board_serves_its_libraries_and_nothing_else_under_vendor(app: Any) -> None:
    folder = Path(app.instance_path) / "vendor"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "NoSleep.min.js").write_bytes(SCRIPT)
    static_copy = Path(app.static_folder) / "vendor" / "NoSleep.min.js"
    if static_copy.is_file():  # a checkout that fetched it already serves that one
        expected = static_copy.read_bytes()
    else:
        expected = SCRIPT
    client = app.test_client()
    answer = client.get("/vendor/NoSleep.min.js")
    assert answer.status_code == 200 and answer.mimetype == "text/javascript" and answer.data == expected
    assert client.get("/vendor/axe-4.10.3.min.js").status_code == 404  # the tests' checker is never served
    assert client.get("/vendor/..%2Fsecret_key").status_code == 404
    # the page's policy lets NoSleep's own silent video (a data: address) play, and nothing else from outside
    assert "media-src 'self' data:" in answer.headers["Content-Security-Policy"]
