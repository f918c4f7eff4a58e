"""Benchmark of image uploads under attack: eight large PNGs uploaded at once, to eight tables.

Run as ``python tests/benchmarks/bench_uploads.py`` (pytest does not collect it; it prints figures and
asserts nothing)::

    python tests/benchmarks/bench_uploads.py                 # 8 × 7000×7000 (refused: too many pixels)
    python tests/benchmarks/bench_uploads.py --side 4096     # 8 × 4096×4096 (the largest accepted)
    python tests/benchmarks/bench_uploads.py --uploads 16

A real server (``battleboard serve``, SQLite) in a subprocess. Each upload goes to a table of its own
(as eight GMs would; the per-table limit is not what holds them back), as a small PNG file that
decodes to ``side × side`` pixels. While they run, a ninth table's GM sends a command (``notes_set``)
every 50 ms over its socket and waits for its answer.

Figures: each upload's answer and latency; the server's memory (resident set, from
``/proc/<pid>/status``) before, at its peak during the uploads, and the growth; the latency of the
other table's commands before and during the uploads (p50, p95, max); CPU steal of the machine
during the run (``/proc/stat``: a high figure means the run should be repeated).
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import requests  # noqa: E402
import socketio  # noqa: E402
from PIL import Image  # noqa: E402

from tests.browser.conftest import LiveServer  # noqa: E402

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def steal() -> tuple[int, int]:
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


def picture(side: int) -> bytes:
    """A PNG that is small on disk and ``side × side`` pixels decoded (a gradient: it compresses)."""
    row = Image.linear_gradient("L").resize((side, 1))
    img = row.resize((side, side)).convert("RGB")
    out = io.BytesIO()
    img.save(out, "PNG", optimize=False)
    return out.getvalue()


class Gm:
    """A GM's browser: a table of its own, its session cookie, GM key and CSRF token."""

    def __init__(self, base: str, name: str) -> None:
        self.http = requests.Session()
        token = CSRF.search(self.http.get(base + "/").text).group(1)  # type: ignore[union-attr]
        page = self.http.post(base + "/tables", data={"name": name, "system": "adnd", "csrf_token": token})
        self.slug = re.search(r'data-table="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        self.key = re.search(r'data-token="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        self.csrf = re.search(r'data-csrf="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        self.base = base

    def upload(self, data: bytes) -> tuple[int, str, float]:
        started = time.perf_counter()
        response = self.http.post(f"{self.base}/t/{self.slug}/images", data=data, timeout=120, headers={
            "Content-Type": "image/png", "X-Battleboard-Key": self.key, "X-CSRFToken": self.csrf, "Origin": self.base})
        took = time.perf_counter() - started
        try:
            said = response.json().get("error") or "stored"
        except ValueError:
            said = response.text[:80]
        return response.status_code, said, took


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", type=int, default=7000, help="pixels on a side of each picture (default 7000)")
    parser.add_argument("--uploads", type=int, default=8, help="uploads at once (default 8)")
    args = parser.parse_args()

    data = picture(args.side)
    print(f"{args.uploads} uploads at once of a {args.side}×{args.side} PNG ({len(data) / 1024:.0f} KB on disk, "
          f"{args.side * args.side / 1e6:.1f} megapixels decoded)")
    with tempfile.TemporaryDirectory() as folder:
        server = LiveServer(Path(folder) / "instance").start()
        try:
            assert server.process is not None
            pid = server.process.pid
            gms = [Gm(server.url, f"Table {i}") for i in range(args.uploads)]
            other = Gm(server.url, "The other table")
            client = socketio.Client()
            client.connect(server.url, auth={"table": other.slug, "token": other.key}, transports=["websocket"], wait_timeout=30)
            latencies: dict[str, list[float]] = {"before": [], "during": []}
            phase = {"name": "before", "stop": False}

            def commands() -> None:
                n = 0
                while not phase["stop"]:
                    n += 1
                    started = time.perf_counter()
                    client.call("notes_set", {"notes": f"note {n}"}, timeout=30)
                    latencies[phase["name"]].append((time.perf_counter() - started) * 1000)
                    time.sleep(0.05)

            worker = threading.Thread(target=commands, daemon=True)
            worker.start()
            time.sleep(1.5)
            baseline = rss_kib(pid)
            peak = [baseline]
            results: list[tuple[int, str, float]] = []
            sampling = {"on": True}

            def sample() -> None:
                while sampling["on"]:
                    peak[0] = max(peak[0], rss_kib(pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            steal_before = steal()
            phase["name"] = "during"
            started = time.perf_counter()
            threads = [threading.Thread(target=lambda gm=gm: results.append(gm.upload(data))) for gm in gms]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - started
            phase["stop"] = True
            worker.join(30)
            sampling["on"] = False
            sampler.join()
            steal_after = steal()
            client.disconnect()
        finally:
            server.stop()

    answers: dict[str, int] = {}
    for status, said, _ in results:
        answers[f"{status} {said}"] = answers.get(f"{status} {said}", 0) + 1
    took = [t for _, _, t in results]
    print(f"uploads answered in {wall:.2f} s (each: p50 {statistics.median(took):.2f} s, max {max(took):.2f} s)")
    for answer, count in answers.items():
        print(f"  {count} × {answer}")
    print(f"server memory: {baseline / 1024:.0f} MB before, {peak[0] / 1024:.0f} MB at its peak, "
          f"growth {(peak[0] - baseline) / 1024:.0f} MB")
    for name, values in latencies.items():
        if values:
            print(f"the other table's commands {name} the uploads: {len(values)} answered, p50 {statistics.median(values):.1f} ms, "
                  f"p95 {percentile(values, 0.95):.1f} ms, max {max(values):.1f} ms")
    stolen, total = steal_after[0] - steal_before[0], steal_after[1] - steal_before[1]
    print(f"CPU steal during the uploads: {100 * stolen / max(1, total):.1f} %")


if __name__ == "__main__":
    main()
