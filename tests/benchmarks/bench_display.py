"""Benchmark of the table display in Chromium: how long one update takes to be applied and painted,
and how many bytes each role receives per update.

Run as ``python tests/benchmarks/bench_display.py`` (pytest does not collect it; it prints figures and
asserts nothing)::

    python tests/benchmarks/bench_display.py               # 80 updates per scenario
    python tests/benchmarks/bench_display.py --updates 200

A real server (``battleboard serve``, SQLite) and Debian's Chromium (or Playwright's). Two scenarios:

- **grid**: an Eclipse Phase battle of 20 combatants on the grid (10 a side, from the presets), the GM
  declaring random legal actions (drawn from the GM's ``view.legal``, as the leak tests do);
- **olympia**: an Olympia battle of 30 units a side (the presets, their troops ×40), the GM stepping
  it phase by phase (a new battle when one ends).

Pages, each measured on its own while the GM drives the battle (the others closed): the table
display at 1920×1080, a player's phone page at 375×667 with Chromium's CPU throttled 4×
(``Emulation.setCPUThrottlingRate``), and the GM console at 1280×800. A script run before the
page's own wraps the WebSocket's ``onmessage``; for each ``update`` frame it records:

- *apply*: from the frame's arrival to the end of the task that handled it and its microtasks (the
  board modules render there; measured by a message-channel task queued behind them);
- *render*: the next frame's work: from its requestAnimationFrame callbacks to the task after it
  (style, layout, paint and commit of that frame);
- *work* = apply + render: the figure the targets are about (p95 under 16 ms on the display, under
  50 ms on the throttled phone); *latency* adds the wait for the next frame (vsync) to it.
- *within*: *work* of the updates inside one battle, without the first update of each new battle
  (the bench starts a new one when a battle ends: that update redraws the whole board)
- *by kind*: the median *work* of the first update of a battle, of the update that ends one, and of
  the others (printed when a battle ended during the run)

Bytes: the length of each ``update`` frame as UTF-8, per role (GM, player, display = spectator).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from playwright.sync_api import sync_playwright  # noqa: E402

from rules import get_system  # noqa: E402
from tests.browser.conftest import LAUNCH_ARGS, LiveServer, chromium_path  # noqa: E402
from tests.server.test_leaks import declaration_from  # noqa: E402
from webapp.app import create_app  # noqa: E402
from webapp.config import load_config  # noqa: E402

TIMING_SCRIPT = r"""
(() => {
  const samples = [];
  window.__bench = samples;
  const Native = window.WebSocket;
  class Timed extends Native {
    set onmessage(handler) {
      super.onmessage = (event) => {
        const t0 = performance.now();
        handler.call(this, event);
        if (typeof event.data !== "string" || !event.data.startsWith('42["update"')) return;
        const sample = { t0 };
        samples.push(sample);
        const after = new MessageChannel();
        after.port1.onmessage = () => { sample.applied = performance.now(); };
        after.port2.postMessage(0);
        requestAnimationFrame(() => {
          sample.frame = performance.now();
          const painted = new MessageChannel();
          painted.port1.onmessage = () => {
            sample.painted = performance.now();
            // the frame's size and battle are read once the update is painted: encoding 33 KB to count
            // its bytes takes about a millisecond, which is the instrument's, not the page's
            const battle = /"battle_id":\s*"?([^",}]+)/.exec(event.data);
            sample.ended = /"status":\s*"ended"/.test(event.data);
            sample.bytes = new TextEncoder().encode(event.data).length;
            sample.battle = battle ? battle[1] : null;
          };
          painted.port2.postMessage(0);
        });
      };
    }
    get onmessage() { return super.onmessage; }
  }
  window.WebSocket = Timed;
})();
"""
OLYMPIA_TROOPS = {f.name for f in get_system("olympia").combatant_fields()} - {"health", "behind", "leader", "noble_attack", "noble_defence"}


def grid_lineup() -> list[dict[str, Any]]:
    presets = get_system("eclipse-phase").presets()
    lineup = []
    for i in range(20):
        entry = dict(presets[i % len(presets)])
        entry.update(id=f"c{i + 1}", name=f"{entry['name']} {i + 1}"[:40], side="AB"[i % 2], controller="gm", seat=None)
        lineup.append(entry)
    return lineup


def olympia_lineup() -> list[dict[str, Any]]:
    presets = get_system("olympia").presets()
    lineup = []
    for i in range(60):
        entry = dict(presets[i % len(presets)])
        for troop in OLYMPIA_TROOPS & set(entry):
            if isinstance(entry[troop], int) and not isinstance(entry[troop], bool):
                entry[troop] *= 40
        entry.update(id=f"c{i + 1}", name=f"{entry['name']} {i + 1}"[:40], side="AB"[i % 2], controller="gm", seat=None)
        if "leader" in entry:
            entry["leader"] = i < 2  # one stack leader a side
        lineup.append(entry)
    return lineup


def stats(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):6.2f} ms  p95 {p95:6.2f} ms  max {ordered[-1]:6.2f} ms"


def summarise(samples: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"apply": [], "render": [], "work": [], "latency": [], "bytes": [], "within": [],
                                   "first": [], "ending": [], "others": []}
    samples = [s for s in samples if all(k in s for k in ("applied", "frame", "painted"))]
    previous = samples[0].get("battle") if samples else None
    for s in samples:
        new_battle = s.get("battle") != previous
        previous = s.get("battle")
        apply = min(s["applied"], s["frame"]) - s["t0"]
        render = s["painted"] - s["frame"]
        out["apply"].append(apply)
        out["render"].append(render)
        out["work"].append(apply + render)
        if not new_battle:
            out["within"].append(apply + render)  # the work of an update inside one battle (not the first of a new one)
        # by kind: the first update of a battle, the one that ends it, the others
        out["first" if new_battle else "ending" if s.get("ended") else "others"].append(apply + render)
        out["latency"].append(s["painted"] - s["t0"])
        out["bytes"].append(float(s["bytes"]))
    return out


class GM:
    """The GM over a Socket.IO client of its own: sends the declarations, keeps its view."""

    def __init__(self, url: str, slug: str, token: str) -> None:
        import socketio

        self.client = socketio.Client(reconnection=False)
        self.battle: dict[str, Any] | None = None
        self.client.on("update", self._update)
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=20)

    def _update(self, payload: dict[str, Any]) -> None:
        if self.battle is None or payload["battle_id"] != self.battle["battle_id"] or payload["v"] > self.battle["v"]:
            self.battle = payload

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.call(event, payload, timeout=30)

    def sync(self) -> dict[str, Any]:
        ack = self.call("sync", {})
        self.battle = ack["battle"]
        return ack["table"]


def drive(gm: GM, system_id: str, updates: int, rng: random.Random, tag: str) -> dict[str, int]:
    """The GM sends ``updates`` accepted commands, one every quarter second (each page applies and
    paints one before the next comes); a new battle when one ends."""
    sent = restarts = refused = 0
    while sent < updates:
        battle = gm.battle
        assert battle is not None
        legal = battle["view"].get("legal") or []
        if battle["status"] == "ended" or (system_id != "olympia" and not legal):
            gm.call("battle_restart", {})
            restarts += 1
            sent += 1
            time.sleep(0.4)
            gm.sync()
            continue
        if system_id == "olympia":
            step = next((item for item in legal if item["type"] in ("begin", "step")), None)
            declaration = {"type": "begin"} if step and step["type"] == "begin" else {"type": "step", "by": "phase"}
        else:
            declaration = declaration_from(rng.choice(legal), rng)
        ack = gm.call("declare", {"battle_id": battle["battle_id"], "expected_v": battle["v"], "declaration": declaration,
                                  "msg_id": f"{tag}-{sent}-{refused}"})
        if not ack.get("ok"):
            refused += 1
            gm.sync()
            if refused > updates * 5:
                break
            continue
        sent += 1
        time.sleep(0.25)
        if gm.battle is None or gm.battle["v"] < ack["v"]:
            gm.sync()
    return {"updates": sent, "restarts": restarts, "refused": refused}


ROLES = ("display", "player (phone, CPU ×4)", "GM console")


def run_scenario(name: str, server: LiveServer, browser: Any, lineup: list[dict[str, Any]], system_id: str, updates: int, seed: int,
                 roles: tuple[str, ...] = ROLES) -> dict[str, Any]:
    """One battle; each role's page measured on its own (the other pages closed), so that the two
    cores of this machine are not shared by three pages painting the same update."""
    app = create_app(load_config(instance_path=server.instance))
    service = app.extensions["battleboard"].service
    table = service.create_table(f"Bench {name}", system_id)
    service.engine.dispose()

    phone_ctx = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True, device_scale_factor=2)
    phone_ctx.add_init_script(TIMING_SCRIPT)
    result: dict[str, Any] = {}
    try:
        phone = phone_ctx.new_page()
        phone.goto(f"{server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        player_url = phone.url
        phone.close()
        gm = GM(server.url, table.slug, table.gm_token)
        seat = gm.sync()["seats"][0]["id"]
        lineup = [dict(entry) for entry in lineup]
        lineup[0].update(controller="seat", seat=seat)
        for event, payload in (("lineup_set", {"lineup": lineup}), ("battle_start", {})):
            ack = gm.call(event, payload)
            assert ack["ok"], (event, ack)
        gm.sync()
        rng = random.Random(seed)
        for role in roles:
            if role == "display":
                context = browser.new_context(viewport={"width": 1920, "height": 1080})
                context.add_init_script(TIMING_SCRIPT)
                page, url = context.new_page(), f"{server.url}/t/{table.slug}/display"
            elif role == "GM console":
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.add_init_script(TIMING_SCRIPT)
                page, url = context.new_page(), f"{server.url}/t/{table.slug}/gm?key={table.gm_token}"
            else:
                context, page, url = None, phone_ctx.new_page(), player_url
            page.goto(url)
            page.wait_for_selector("[data-testid=connection-status][data-state=live]")
            if role.startswith("player"):
                phone_ctx.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 4})
            time.sleep(1.5)
            page.evaluate("window.__bench.length = 0")
            result[f"{role} run"] = drive(gm, system_id, updates, rng, f"{name}-{role[:2]}")
            time.sleep(1.0)
            result[role] = summarise(page.evaluate("window.__bench"))
            if role == "display":
                page.screenshot(path=str(server.instance / f"bench-{name}-display.png"))
            page.close()
            if context is not None:
                context.close()
        gm.client.disconnect()
        return result
    finally:
        phone_ctx.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=80, help="updates per scenario")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--keep", action="store_true", help="keep the instance folder (screenshots of the display)")
    parser.add_argument("--scenario", choices=("grid", "olympia"), action="append", help="only this scenario (repeatable; default both)")
    parser.add_argument("--role", choices=("display", "phone", "console"), action="append", help="only this page (repeatable; default every page)")
    args = parser.parse_args()
    short = {"display": ROLES[0], "phone": ROLES[1], "console": ROLES[2]}
    roles = tuple(short[r] for r in args.role) if args.role else ROLES
    folder = Path(tempfile.mkdtemp(prefix="bench-display-"))
    server = LiveServer(folder / "instance").start()
    print(f"bench_display: {args.updates} updates per scenario and page; Chromium {chromium_path() or '(Playwright)'}; {os.cpu_count()} CPUs;"
          f" load average {os.getloadavg()[0]:.1f}")
    try:
        with sync_playwright() as playwright:
            launch: dict[str, Any] = {"args": LAUNCH_ARGS}
            if chromium_path():
                launch["executable_path"] = chromium_path()
            browser = playwright.chromium.launch(**launch)
            scenarios = (("grid", grid_lineup(), "eclipse-phase"), ("olympia", olympia_lineup(), "olympia"))
            for name, lineup, system_id in scenarios:
                if args.scenario and name not in args.scenario:
                    continue
                result = run_scenario(name, server, browser, lineup, system_id, args.updates, args.seed, roles)
                label = "20-token grid (Eclipse Phase)" if name == "grid" else "Olympia, 30 units a side"
                print(f"\n{label}")
                for role in roles:
                    figures, run = result[role], result[f"{role} run"]
                    print(f"  {role}: {len(figures['work'])} updates measured ({run['restarts']} of them new battles)")
                    for key in ("work", "within", "apply", "render", "latency"):
                        print(f"    {key:8} {stats(figures[key])}")
                    if figures["first"] or figures["ending"]:
                        print("    work by kind of update: " + ", ".join(
                            f"{kind} {len(figures[kind])} median {statistics.median(figures[kind]):.2f} ms"
                            for kind in ("first", "ending", "others") if figures[kind]))
                    if figures["bytes"]:
                        print(f"    bytes    median {statistics.median(figures['bytes']):8.0f}  max {max(figures['bytes']):8.0f}")
            browser.close()
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    finally:
        server.stop()
        if args.keep:
            print("instance kept in", folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
