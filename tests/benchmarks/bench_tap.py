"""Benchmark of what players feel: from a phone's tap on an action to the table display's change.

Run as ``python tests/benchmarks/bench_tap.py`` (pytest does not collect it; it prints figures and
asserts nothing)::

    python tests/benchmarks/bench_tap.py                          # 30 taps in each of the five systems
    python tests/benchmarks/bench_tap.py --taps 100 --system phantoms-bane

A real server (``battleboard serve`` on a free loopback port, a fresh SQLite instance folder) and
Debian's Chromium (or Playwright's). For each system, one table with the demo's lineup (sturdier
where its battles end within a few taps), the first hero in a player's seat and everyone else
played by the GM (the duel's monster by the computer, as in the demo). One browser holds both
pages: the table display at 1920×1080 and the player's phone page at 375×667 (touch, no CPU
throttling). The GM is a Socket.IO client of its own, which plays the other side between taps (and
restarts a battle that ended), so that the phone's next action is due.

Each tap is a real, legal action that changes what the TV shows:

- phantoms-bane: the player chooses Attack (the computer has chosen: the turn resolves);
- eclipse-phase: the player declares an attack on the first foe (the GM defends and accepts);
- olympia: during the deployment, the player moves their unit between the front and the back row;
- adnd: the player declares a melee attack on the first foe (kind and target picked before the tap);
- battles-and-balances: the player attacks the foe in reach (the GM brings the foes to the prince).

Timestamps come from one clock: ``performance.timeOrigin + performance.now()`` in each page (each
page's offset to the system clock is measured at the start, and the skew between the two pages is
printed and taken out). For each tap:

- *tap*: the moment the phone's page sees the finger lift (its ``pointerup`` listener runs), where a
  tap becomes a click. Not the touch event's own timestamp: Playwright's touches go through
  DevTools, which takes that timestamp and then waits up to a frame for the page's compositor
  before passing the touch on (about 15 ms here), which no finger does. Before each tap the pages
  settle (``--settle``, 0.5 s) and the phone's questions (the odds of the action as it is built)
  are answered, as a player reads them before tapping;
- *change*: the display's first DOM change after the update arrived (its MutationObserver callback);
- *frame*: the display's next frame after that change (its requestAnimationFrame callback);
- *painted*: the task after that frame (its style, layout and paint done).

It prints, per system, p50 / p95 / max of tap → change, tap → frame (the target: under 50 ms at
p95) and tap → painted; the medians of the parts of the way: the phone (tap → its socket sends the
declaration), the server (→ the update arrives at the display's socket, loopback included), the
display's work (→ change), the wait for the frame and the frame's work; tap → frame counted from the
touch event's own timestamp, for comparison; and at the end a Markdown table of the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser.conftest import LAUNCH_ARGS, LiveServer, chromium_path  # noqa: E402
from webapp import cli  # noqa: E402
from webapp.app import create_app  # noqa: E402
from webapp.config import load_config  # noqa: E402

SYSTEMS = ("phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances")
PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
TV = {"viewport": {"width": 1920, "height": 1080}}
TARGET_MS = 50.0
#: the combatant in the player's seat (the first of each demo lineup)
HERO = "c1"
#: GM commands between two taps before the battle is started again (an AD&D round where the hero is
#: down goes on without them)
MAX_GM_STEPS = 60

# The phone's side: when its page saw the finger lift (the touch's end, where a tap becomes a click),
# when its socket sent the declaration, and how many of its questions to the server (the odds of
# an action, asked as it is built) are still unanswered.
PHONE_SCRIPT = r"""
(() => {
  const clock = () => performance.timeOrigin + performance.now();
  const tap = (window.__tap = { armed: false, lift: null, touch: null, sent: null, asking: new Set() });
  tap.arm = () => { tap.armed = true; tap.lift = null; tap.touch = null; tap.sent = null; };
  addEventListener("pointerup", (e) => {
    if (!tap.armed || tap.lift !== null) return;
    tap.lift = clock();
    tap.touch = performance.timeOrigin + e.timeStamp;
  }, true);
  const Native = window.WebSocket;
  class Timed extends Native {
    send(data) {
      if (typeof data === "string") {
        const asked = /^42(\d+)\[/.exec(data);
        if (asked) tap.asking.add(asked[1]);
        if (tap.armed && tap.sent === null && /^42\d*\["declare"/.test(data)) tap.sent = clock();
      }
      return super.send(data);
    }
    set onmessage(handler) {
      super.onmessage = (event) => {
        const answer = typeof event.data === "string" && /^43(\d+)\[/.exec(event.data);
        if (answer) tap.asking.delete(answer[1]);
        handler.call(this, event);
      };
    }
    get onmessage() { return super.onmessage; }
  }
  window.WebSocket = Timed;
})();
"""

# The display's side: when the next update arrived, the first DOM change after it, and the next frame.
TV_SCRIPT = r"""
(() => {
  const clock = () => performance.timeOrigin + performance.now();
  const tap = (window.__tap = { armed: false, sample: null });
  tap.arm = () => { tap.armed = true; tap.sample = null; };
  const Native = window.WebSocket;
  class Timed extends Native {
    set onmessage(handler) {
      super.onmessage = (event) => {
        if (tap.armed && tap.sample === null && typeof event.data === "string" && event.data.startsWith('42["update"')) {
          tap.sample = { arrived: clock() };
        }
        handler.call(this, event);
      };
    }
    get onmessage() { return super.onmessage; }
  }
  window.WebSocket = Timed;
  new MutationObserver(() => {
    const s = tap.sample;
    if (!tap.armed || s === null || s.change !== undefined) return;
    s.change = clock();
    requestAnimationFrame(() => {
      s.frame = clock();
      const after = new MessageChannel(); // the task after the frame: its style, layout and paint done
      after.port1.onmessage = () => { s.painted = clock(); tap.armed = false; };
      after.port2.postMessage(0);
    });
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();
"""

# This page's clock minus the system clock (Date.now), in ms: read at the moment Date.now() ticks,
# the median of a few ticks (what is left is the resolution of performance.now, 0.1 ms)
CLOCK_OFFSET = """() => {
  const out = [];
  for (let i = 0; i < 9; i++) {
    const d0 = Date.now();
    let d = d0;
    while (d === d0) d = Date.now();
    out.push(performance.timeOrigin + performance.now() - d);
  }
  out.sort((a, b) => a - b);
  return out[4];
}"""


# --- each system: its lineup, the GM's play between taps, and the player's tap ----------------------------


def _by_type(view: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for item in view.get("legal") or []:
        out.setdefault(item["type"], []).append(item)
    return out


RESTART = {"type": "restart"}


def gm_duel(view: dict[str, Any]) -> dict[str, Any] | None:
    """The computer chooses for the monster at the start of each turn: the player's choice is due."""
    return None


def gm_deployment(view: dict[str, Any]) -> dict[str, Any] | None:
    """The battle stays in its deployment, where a player moves their units."""
    return None


def gm_eclipse_phase(view: dict[str, Any]) -> dict[str, Any] | None:
    """The GM defends and accepts the dice, and ends every other combatant's turn (and the hero's,
    once its attack is made), until the hero may attack again."""
    by_type = _by_type(view)
    if "roll_initiative" in by_type:
        return {"type": "roll_initiative"}
    if view.get("pending") is not None:
        if "defend" in by_type:
            template = by_type["defend"][0]
            return {"type": "defend", "combatant": template["combatant"], "method": template["methods"][0]["method"]}
        if "accept" in by_type:
            return {"type": "accept", "combatant": by_type["accept"][0]["combatant"]}
        return RESTART
    active = view.get("active")
    if active == HERO and any(t["combatant"] == HERO for t in by_type.get("attack", [])):
        return None
    if any(t["combatant"] == active for t in by_type.get("end_turn", [])):
        return {"type": "end_turn", "combatant": active}
    return RESTART


def gm_adnd(view: dict[str, Any]) -> dict[str, Any] | None:
    """The DM skips the opening checks, declares a melee attack for each of its own, and steps the
    round (initiative, resolution, bleeding, next round) until the hero's declaration is awaited."""
    by_type = _by_type(view)
    for item in view.get("legal") or []:
        if item["type"].startswith("check_") and (item.get("fixed") or {}).get("skip") and str(item.get("testid", "")).startswith("gm-skip-"):
            decl = {"type": item["type"], **item["fixed"]}
            decl.update({f["name"]: f["default"] if f.get("default") is not None else "" for f in item.get("fields") or []})
            return decl
    declares = by_type.get("declare", [])
    for item in declares:
        if item["combatant"] != HERO:
            action = next((a for a in item["actions"] if a["kind"] == "melee"), None) or next(a for a in item["actions"] if not a["needs_target"])
            decl = {"type": "declare", "combatant": item["combatant"], "kind": action["kind"]}
            if action["targets"]:
                decl["target"] = action["targets"][0]["id"]
            return decl
    if "roll_order" in by_type:
        return {"type": "roll_order"}
    if declares:  # the hero's declaration is awaited: a melee attack, while a foe stands
        melee = next((a for a in declares[0]["actions"] if a["kind"] == "melee"), None)
        return None if melee and melee["targets"] else RESTART
    for kind in ("roll_initiative", "resolve_all", "bleed", "next_round", "finish"):
        if kind in by_type:
            return {"type": kind}
    return RESTART


def gm_battles_and_balances(view: dict[str, Any]) -> dict[str, Any] | None:
    """Everyone else waits (keeping their points) until the prince acts with a foe in reach."""
    by_type = _by_type(view)
    actor = view.get("actor")
    if actor == HERO and any(t["combatant"] == HERO and not t.get("ally") for t in by_type.get("attack", [])):
        return None
    if any(t["combatant"] == actor for t in by_type.get("pass", [])):
        return {"type": "pass", "combatant": actor}
    return RESTART


def tap_choose_attack(phone: Any) -> Any:
    return phone.locator("[data-testid=choose-attack]")


def tap_declare_attack(phone: Any) -> Any:
    try:  # the odds of the attack as built come first (a player reads them before tapping)
        phone.wait_for_selector("[data-testid=ep-odds][data-state=ready]", timeout=3000)
    except Exception:  # noqa: BLE001 (no odds shown: the tap goes on)
        pass
    return phone.locator("[data-testid=ep-declare-attack]")


def tap_other_row(phone: Any) -> Any:
    here = phone.locator(f"[data-testid^=row-choice-{HERO}-][aria-pressed=true]").get_attribute("data-testid") or ""
    return phone.locator(f"[data-testid=row-choice-{HERO}-{0 if here.endswith('-1') else 1}]")


def tap_declare_melee(phone: Any) -> Any:
    phone.locator("[data-testid=kind-melee]").click()
    phone.locator("[data-testid=declare-form] [data-testid^=target-c]").first.click()
    return phone.locator("[data-testid=declare-submit]:not([disabled])")


def tap_attack_foe(phone: Any) -> Any:
    return phone.locator("[data-testid=due-now] [data-testid^=action-attack-c]:not(.bb-ally)").first


@dataclass
class Scenario:
    system: str
    #: what the player taps, and what must be on the phone before (an action due)
    action: str
    ready: str
    tap: Callable[[Any], Any]
    gm_next: Callable[[dict[str, Any]], dict[str, Any] | None]
    #: changes to the demo lineup: combatant id -> fields
    sturdier: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the GM's commands after each start of a battle
    opening: list[dict[str, Any]] = field(default_factory=list)


SCENARIOS = {s.system: s for s in (
    Scenario("phantoms-bane", "choose Attack", "[data-testid=choose-attack]:not([disabled])", tap_choose_attack, gm_duel,
             sturdier={cid: {"health": 30, "health_max": 30, "defence": 12, "armour_bonus": 8} for cid in ("c1", "c2")}),
    Scenario("eclipse-phase", "declare an attack", "[data-testid=ep-declare-attack]:not([disabled])", tap_declare_attack, gm_eclipse_phase),
    Scenario("olympia", "move a unit to the other row", f"[data-testid^=row-choice-{HERO}-]", tap_other_row, gm_deployment),
    Scenario("adnd", "declare a melee attack", "[data-testid=declare-form] [data-testid=kind-melee]", tap_declare_melee, gm_adnd),
    Scenario("battles-and-balances", "attack the foe in reach", "[data-testid=due-now] [data-testid^=action-attack-c]:not(.bb-ally)",
             tap_attack_foe, gm_battles_and_balances,
             sturdier={cid: {"health_override": 120} for cid in ("c3", "c4")},
             opening=[{"type": "place", "combatant": "c3", "x": 2, "y": 0}, {"type": "place", "combatant": "c4", "x": 2, "y": 1}]),
)}


def lineup_for(scenario: Scenario, seat: str) -> list[dict[str, Any]]:
    lineup = cli.demo_lineup(scenario.system)
    for entry in lineup:
        entry.update(scenario.sturdier.get(entry["id"], {}))
        if entry["id"] == HERO:
            entry.update(controller="seat", seat=seat)
        elif entry["controller"] == "computer" and scenario.system != "phantoms-bane":
            entry["controller"] = "gm"
    return lineup


# --- the GM's socket ------------------------------------------------------------------------------------


class GM:
    """The GM over a Socket.IO client of its own: plays between the taps, keeps the GM's view."""

    def __init__(self, url: str, slug: str, token: str) -> None:
        import socketio

        self.client = socketio.Client(reconnection=False)
        self.battle: dict[str, Any] | None = None
        self.client.on("update", self._update)
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=20)

    def _update(self, payload: dict[str, Any]) -> None:
        if self.battle is None or (payload["battle_id"] == self.battle["battle_id"] and payload["v"] > self.battle["v"]):
            self.battle = payload

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        ack = self.client.call(event, payload, timeout=30)
        if not ack.get("ok"):
            raise RuntimeError(f"{event} {payload}: {ack}")
        return ack

    def sync(self) -> dict[str, Any]:
        ack = self.call("sync", {})
        self.battle = ack["battle"]
        return ack["table"]

    def wait_for(self, version: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.battle is None or self.battle["v"] < version:
            if time.monotonic() > deadline:
                self.sync()
                return
            time.sleep(0.005)

    def declare(self, declaration: dict[str, Any]) -> None:
        assert self.battle is not None
        ack = self.call("declare", {"battle_id": self.battle["battle_id"], "expected_v": self.battle["v"], "declaration": declaration})
        self.wait_for(ack["v"])

    def restart(self, opening: list[dict[str, Any]]) -> None:
        self.call("battle_restart", {})
        self.sync()
        for step in opening:
            self.declare(step)


# --- measuring ------------------------------------------------------------------------------------------


@dataclass
class Result:
    system: str
    #: one dict per tap: tap, sent, arrived, change, frame (ms on the system clock)
    samples: list[dict[str, float]] = field(default_factory=list)
    restarts: int = 0
    gm_steps: int = 0
    retries: int = 0
    skew_ms: float = 0.0


def live(page: Any) -> None:
    page.wait_for_selector("[data-testid=connection-status][data-state=live]", timeout=20_000)


def wait_version(page: Any, selector: str, version: int) -> None:
    page.wait_for_function("([sel, v]) => { const el = document.querySelector(sel); return el && Number(el.dataset.version) >= v; }",
                           arg=[selector, version], timeout=15_000)


def measure_system(browser: Any, server: LiveServer, system_id: str, taps: int = 30, settle: float = 0.5,
                   shots: Path | None = None) -> Result:
    """``taps`` taps of the player's phone in one system, each timed to the table display's change
    and its next frame; the pages in their own contexts of ``browser``, on ``server``'s board."""
    scenario = SCENARIOS[system_id]
    app = create_app(load_config(instance_path=server.instance))
    service = app.extensions["battleboard"].service
    table = service.create_table(f"Tap {system_id}", system_id)
    service.engine.dispose()
    result = Result(system_id)
    phone_ctx = browser.new_context(**PHONE)
    tv_ctx = browser.new_context(**TV)
    gm: GM | None = None
    try:
        phone_ctx.add_init_script(PHONE_SCRIPT)
        tv_ctx.add_init_script(TV_SCRIPT)
        phone = phone_ctx.new_page()
        phone.goto(f"{server.url}/j/{table.join_code}")
        phone.fill("[data-testid=join-name]", "Alice")
        phone.click("[data-testid=join-submit]")
        live(phone)
        gm = GM(server.url, table.slug, table.gm_token)
        seat = gm.sync()["seats"][0]["id"]
        gm.call("lineup_set", {"lineup": lineup_for(scenario, seat)})
        gm.call("battle_start", {})
        gm.sync()
        for step in scenario.opening:
            gm.declare(step)
        tv = tv_ctx.new_page()
        tv.goto(f"{server.url}/t/{table.slug}/display")
        live(tv)
        phone_offset, tv_offset = phone.evaluate(CLOCK_OFFSET), tv.evaluate(CLOCK_OFFSET)
        result.skew_ms = tv_offset - phone_offset
        since = 0
        while len(result.samples) < taps:
            battle = gm.battle
            assert battle is not None
            step = RESTART if battle["status"] == "ended" else scenario.gm_next(battle["view"])
            if step is not None:
                since += 1
                if step is RESTART or since > MAX_GM_STEPS:
                    gm.restart(scenario.opening)
                    result.restarts += 1
                    since = 0
                else:
                    gm.declare(step)
                    result.gm_steps += 1
                continue
            since = 0
            version = battle["v"]
            wait_version(phone, "#battle", version)
            wait_version(tv, "#board", version)
            phone.wait_for_selector(scenario.ready, timeout=15_000)
            time.sleep(settle)  # (the pages settle: their dice and odds, as a player reads before tapping)
            target = scenario.tap(phone)
            target.wait_for(state="visible", timeout=15_000)
            # (and the phone has its answers: a player taps once the odds of what they built show)
            phone.wait_for_function("() => window.__tap.asking.size === 0", timeout=15_000)
            time.sleep(0.1)
            tv.evaluate("window.__tap.arm()")
            phone.evaluate("window.__tap.arm()")
            target.tap()
            tv.wait_for_function("() => window.__tap.sample && window.__tap.sample.painted !== undefined", timeout=15_000)
            mark = phone.evaluate("({lift: window.__tap.lift, touch: window.__tap.touch, sent: window.__tap.sent})")
            seen = tv.evaluate("window.__tap.sample")
            gm.wait_for(version + 1)
            if mark["lift"] is None or mark["sent"] is None or seen["arrived"] - tv_offset < mark["sent"] - phone_offset - 0.5:
                result.retries += 1  # (another update reached the display before the tap's: not this tap's)
                if result.retries > taps:
                    raise RuntimeError(f"{system_id}: the display's updates do not follow the taps ({mark}, {seen})")
                continue
            result.samples.append({**{k: mark[k] - phone_offset for k in ("touch", "sent")}, "tap": mark["lift"] - phone_offset,
                                   **{k: seen[k] - tv_offset for k in ("arrived", "change", "frame", "painted")}})
        if shots is not None:
            tv.screenshot(path=str(shots / f"bench-tap-{system_id}-display.png"))
            phone.screenshot(path=str(shots / f"bench-tap-{system_id}-phone.png"))
        return result
    finally:
        if gm is not None:
            gm.client.disconnect()
        phone_ctx.close()
        tv_ctx.close()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def spans(result: Result) -> dict[str, list[float]]:
    """Each tap's durations in ms: the figures (from the tap) and the parts of the way."""
    s = result.samples
    return {
        "change": [x["change"] - x["tap"] for x in s],
        "frame": [x["frame"] - x["tap"] for x in s],
        "painted": [x["painted"] - x["tap"] for x in s],
        "touch → frame": [x["frame"] - x["touch"] for x in s],  # (from the touch event's own timestamp)
        # the parts
        "phone": [x["sent"] - x["tap"] for x in s],
        "server": [x["arrived"] - x["sent"] for x in s],
        "display": [x["change"] - x["arrived"] for x in s],
        "to frame": [x["frame"] - x["change"] for x in s],
        "frame's work": [x["painted"] - x["frame"] for x in s],
    }


def report(result: Result) -> str:
    d = spans(result)

    def line(label: str, values: list[float]) -> str:
        return f"  {label:14} p50 {pct(values, 50):6.1f} ms  p95 {pct(values, 95):6.1f} ms  max {max(values):6.1f} ms"

    verdict = "under" if pct(d["frame"], 95) < TARGET_MS else "OVER"
    parts = ("phone", "server", "display", "to frame", "frame's work")
    return "\n".join([
        f"{result.system} ({SCENARIOS[result.system].action}): {len(result.samples)} taps, {result.restarts} battles restarted, "
        f"{result.gm_steps} GM commands between taps, clock skew display-phone {result.skew_ms:+.2f} ms",
        line("tap → change", d["change"]),
        line("tap → frame", d["frame"]) + f"   ({verdict} {TARGET_MS:.0f} ms at p95)",
        line("tap → painted", d["painted"]),
        "  medians of the parts: " + ", ".join(f"{name} {statistics.median(d[name]):.1f} ms" for name in parts),
        f"  (tap → frame from the touch event's own timestamp, DevTools' wait included: "
        f"p50 {pct(d['touch → frame'], 50):.1f} ms, p95 {pct(d['touch → frame'], 95):.1f} ms)",
    ])


def table(results: list[Result]) -> str:
    """The figures as a Markdown table (for docs/benchmarks.md)."""
    rows = ["| system | the tap | taps | tap → change p50 / p95 | tap → frame p50 / p95 | max |", "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        d = spans(r)
        rows.append(f"| {r.system} | {SCENARIOS[r.system].action} | {len(r.samples)} | {pct(d['change'], 50):.1f} / {pct(d['change'], 95):.1f} ms | "
                    f"{pct(d['frame'], 50):.1f} / {pct(d['frame'], 95):.1f} ms | {max(d['frame']):.1f} ms |")
    return "\n".join(rows)


def commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--taps", type=int, default=30, help="taps per system (default 30)")
    parser.add_argument("--system", choices=SYSTEMS, action="append", help="only this system (repeatable; default all five)")
    parser.add_argument("--settle", type=float, default=0.5, help="seconds the pages settle before each tap (default 0.5)")
    parser.add_argument("--keep", action="store_true", help="keep the instance folder (the server's log, screenshots)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-tap-"))
    server = LiveServer(folder / "instance").start()
    systems = args.system or list(SYSTEMS)
    try:
        with sync_playwright() as playwright:
            launch: dict[str, Any] = {"args": LAUNCH_ARGS}
            if chromium_path():
                launch["executable_path"] = chromium_path()
            browser = playwright.chromium.launch(**launch)
            print(f"bench_tap: {args.taps} taps per system at {commit()}; Chromium {browser.version}; {os.cpu_count()} CPUs;"
                  f" load average {os.getloadavg()[0]:.1f}")
            results = []
            for system_id in systems:
                results.append(measure_system(browser, server, system_id, args.taps, args.settle, folder if args.keep else None))
                print(report(results[-1]), flush=True)
            browser.close()
        print(f"load average at the end {os.getloadavg()[0]:.1f}\n")
        print(table(results))
    finally:
        server.stop()
        if args.keep:
            print("instance kept in", folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
