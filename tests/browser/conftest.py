"""Browser tests: a real server process and Debian's Chromium driven by Playwright.

Under ``CI=true`` a missing browser is a failure, never a silent skip.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import socketio
from playwright.sync_api import expect

from tests.conftest import CSRF_FIELD, disconnect_now, interrupt
from tests.server_forks import Forked, serve

REPO = Path(__file__).resolve().parents[2]
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# Playwright's ``expect`` gives up after 5 s: on this 2-core machine with another test run beside this
# one, a page sometimes needs longer to receive and draw what the test waits for (a waited-for answer
# is not a timed assertion: a wrong page still fails, later)
expect.set_options(timeout=15_000)


def chromium_path() -> str | None:
    for candidate in (os.environ.get("BATTLEBOARD_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    path = chromium_path()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no Chromium found under CI=true: the test command must install it (apt-get install chromium)")
        return {**browser_type_launch_args, "args": LAUNCH_ARGS}  # Playwright's own Chromium, if installed
    return {**browser_type_launch_args, "executable_path": path, "args": LAUNCH_ARGS}


#: the seed every browser test plays with (see ``fixed_seeds``); set BATTLEBOARD_TEST_SEED to try another
TEST_SEED = os.environ.get("BATTLEBOARD_TEST_SEED") or "battleboard-browser-tests"

# A context's phones make their client seeds (static/js/entropy.js) from ``crypto.getRandomValues``: here
# the bytes come from a small seeded generator instead (mulberry32 over a hash of the context's own seed),
# so a phone of a test sends the same client seed on every run. Each page of the context starts afresh.
FIXED_RANDOM = """(seed) => {
  let h = 1779033703 ^ seed.length;
  for (let i = 0; i < seed.length; i++) { h = Math.imul(h ^ seed.charCodeAt(i), 3432918353); h = (h << 13) | (h >>> 19); }
  let a = h >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0);
  };
  crypto.getRandomValues = (array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 0xff;
    return array;
  };
}"""


@pytest.fixture(scope="package", autouse=True)
def fixed_seeds() -> Iterator[str]:
    """Browser tests play with fixed dice: every server they start (in a subprocess or in this one)
    derives each battle's seed and each seat's id from the test seed and the table (``config.test_seed``).
    Only while the browser tests run: the other tests keep random seeds unless they give one."""
    patch = pytest.MonkeyPatch()
    patch.setenv("BATTLEBOARD_TEST_SEED", TEST_SEED)
    # and their simulated odds fight a twentieth of the battles: the pages show them the same way,
    # and the rules tests check their precision (tests/rules/test_odds_olympia.py)
    patch.setenv("BATTLEBOARD_ODDS_WORK", "0.05")
    # and each update's chances to win take three hundredths of a second, not the second a table gets
    # (a few games: the bar reads the same, "a rough first guess"; tests/rules/test_chances.py checks
    # their accuracy). Every update of every browser test works them out.
    patch.setenv("BATTLEBOARD_CHANCES_SECONDS", "0.03")
    yield TEST_SEED
    patch.undo()


@pytest.fixture(scope="session", autouse=True)
def screenshots_taken_again() -> Iterator[None]:
    """A screenshot that Chromium could not take at that moment ("Unable to capture screenshot": the
    page between two navigations or not yet painted, seen on a busy machine) is taken again once the
    page has loaded, up to three times: a screenshot is for looking at, never what a test asserts."""
    from playwright.sync_api import Error, Page

    original = Page.screenshot

    def screenshot(page: Page, *args: Any, **kwargs: Any) -> bytes:
        for attempt in range(3):
            try:
                return original(page, *args, **kwargs)
            except Error as exc:
                if "Unable to capture screenshot" not in str(exc) or attempt == 2:
                    raise
                page.wait_for_load_state()
                page.wait_for_timeout(250)
        raise AssertionError("unreachable")

    patch = pytest.MonkeyPatch()
    patch.setattr(Page, "screenshot", screenshot)
    yield
    patch.undo()


#: the contexts a test has given back, kept open for the next test that asks for one made alike
#: (per browser, by the options they were made with): see ``ContextPool``
_POOLS: dict[int, ContextPool] = {}
#: the methods that change a page for good: the pool's kept page of a context (see
#: ``ContextPool._new_anchor``) that a test called one of them on is closed at the end, not kept
_PAGE_TAINTING = ("add_init_script", "route", "route_from_har", "unroute", "unroute_all", "expose_binding", "expose_function",
                  "set_extra_http_headers", "set_default_timeout", "set_default_navigation_timeout", "emulate_media",
                  "add_locator_handler", "remove_locator_handler", "route_web_socket")
#: the methods that change a context for good: a context a test called one of them on is closed at
#: the end, never handed to another test
_TAINTING = ("add_init_script", "route", "route_from_har", "unroute", "unroute_all", "expose_binding", "expose_function",
             "new_cdp_session", "set_offline", "set_extra_http_headers", "set_geolocation", "grant_permissions",
             "set_default_timeout", "set_default_navigation_timeout")


class ContextPool:
    """Browser contexts handed from one test to the next (per test process and browser).

    A new context costs Chromium about a second of CPU (a network context, storage, a renderer
    process), and a test opens three or four: on two cores that was the largest share of the browser
    tests' time. A context a test is done with (its ``close``, or the test's end) comes here instead:
    its pages are closed, its cookies, permissions and the storage of every origin its pages opened
    (local storage, IndexedDB, caches) are cleared, and the next test that asks for a context made
    with the same options gets it, as clean as a new one. Each keeps a blank page of its own open, so
    that the renderer it started stays warm. A context a test changed for good (an init script of its
    own, routes, offline, a CDP session: :data:`_TAINTING`) is really closed, and so is one handed
    out many times."""

    #: idle contexts kept per set of options, and how many tests one context serves
    KEEP, USES = 4, 30

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.new_context = browser.new_context  # Playwright's own
        self.idle: dict[str, list[Any]] = {}

    def take(self, kwargs: dict[str, Any], seed: str) -> Any:
        key = json.dumps(kwargs, sort_keys=True, default=str)
        idle = self.idle.get(key) or []
        context = idle.pop() if idle else self._make(key, kwargs)
        context._pool_state.update(out=True, uses=context._pool_state["uses"] + 1)
        # this test's seeded crypto.getRandomValues (the last init script added wins)
        context._pool_state["init"](script=f"({FIXED_RANDOM})({json.dumps(seed)})")
        return context

    def _make(self, key: str, kwargs: dict[str, Any]) -> Any:
        context = self.new_context(**kwargs)
        originals = {name: getattr(context, name) for name in (*_TAINTING, "new_page", "close")}
        state: dict[str, Any] = {"key": key, "uses": 0, "out": False, "tainted": False, "origins": set(),
                                 "init": originals["add_init_script"], "close": originals["close"],
                                 "new_page": originals["new_page"], "new_cdp_session": originals["new_cdp_session"]}
        self._new_anchor(context, state)
        state["cdp"] = originals["new_cdp_session"](state["anchor"])
        context._pool_state = state

        for name in _TAINTING:
            setattr(context, name, _flagging(state, "tainted", originals[name]))

        def new_page(*args: Any, **kw: Any) -> Any:
            if not args and not kw and not state["anchor_out"]:
                state["anchor_out"] = True  # the page kept open is this test's first page of the context
                return state["anchor"]
            page = originals["new_page"](*args, **kw)
            _note_origins(page, state)
            return page

        context.new_page = new_page
        context.close = lambda *args, **kw: self.give_back(context)
        return context

    def _new_anchor(self, context: Any, state: dict[str, Any]) -> None:
        """Open the context's kept page (about:blank): handed out as the first page a test asks of
        the context, and kept when the test is done with it (its ``close`` takes it back to
        about:blank, its listeners are removed, its size is set back). A page a test changed for
        good (an init script or a route of its own, emulated media, its timeouts) is closed and
        another opened in its place."""
        page = state["new_page"]()
        listeners: list[tuple[str, Any]] = []
        originals = {name: getattr(page, name) for name in ("on", "once", "close", *_PAGE_TAINTING)}
        state.update(anchor=page, anchor_out=False, anchor_tainted=False, anchor_listeners=listeners,
                     anchor_viewport=page.viewport_size, anchor_close=originals["close"])

        def listening(name: str) -> Any:
            def call(event: str, f: Any) -> None:
                listeners.append((event, f))
                originals[name](event, f)
            return call

        page.on, page.once = listening("on"), listening("once")
        for name in _PAGE_TAINTING:
            setattr(page, name, _flagging(state, "anchor_tainted", originals[name]))
        page.close = lambda *args, **kw: self._blank(state)
        _note_origins(page, state)
        listeners.clear()  # (the pool's own listener stays)

    def _blank(self, state: dict[str, Any]) -> None:
        """The kept page back to about:blank (what a test's ``close`` of it does: its sockets close)."""
        page = state["anchor"]
        state["origins"].add(origin_of(page.url))
        page.goto("about:blank")

    def _take_back_anchor(self, context: Any, state: dict[str, Any]) -> None:
        """The kept page, handed out to a test that is done: as it was before, or a new one."""
        if not state["anchor_out"]:
            return
        page = state["anchor"]
        for event, f in state["anchor_listeners"]:
            try:
                page.remove_listener(event, f)
            except KeyError:  # (a ``once`` listener that has run is gone already)
                pass
        state["anchor_listeners"].clear()
        if state["anchor_tainted"] or page.is_closed():
            if not page.is_closed():
                state["origins"].add(origin_of(page.url))
                state["anchor_close"]()
            self._new_anchor(context, state)
            state["cdp"] = state["new_cdp_session"](state["anchor"])
            return
        self._blank(state)
        if page.viewport_size != state["anchor_viewport"] and state["anchor_viewport"] is not None:
            page.set_viewport_size(state["anchor_viewport"])
        state["anchor_out"] = False

    def close_all(self) -> None:
        """Close every idle context (the test process is done with the browser)."""
        for idle in self.idle.values():
            for context in idle:
                try:
                    context._pool_state["close"]()
                except Exception:  # noqa: BLE001 - gone with the browser already
                    pass
        self.idle.clear()

    def give_back(self, context: Any) -> None:
        """A test is done with ``context``: keep it for the next (cleaned) or close it."""
        state = context._pool_state
        if not state["out"]:
            return  # given back already
        state["out"] = False
        try:
            idle = self.idle.setdefault(state["key"], [])
            if state["tainted"] or state["uses"] >= self.USES or len(idle) >= self.KEEP or not self.browser.is_connected():
                raise LookupError("not kept")
            for page in context.pages:
                if page is not state["anchor"]:
                    state["origins"].add(origin_of(page.url))
                    page.close()
            self._take_back_anchor(context, state)
            context.clear_cookies()
            context.clear_permissions()
            for origin in state["origins"] - {""}:
                state["cdp"].send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            state["origins"].clear()
            idle.append(context)
        except Exception:  # noqa: BLE001 - not kept: closed for good (or already gone with the browser)
            try:
                state["close"]()
            except Exception:  # noqa: BLE001
                pass


def _flagging(state: dict[str, Any], flag: str, method: Any) -> Any:
    """``method``, setting ``state[flag]`` when called (a context's or a kept page's change for good)."""
    def call(*args: Any, **kw: Any) -> Any:
        state[flag] = True
        return method(*args, **kw)
    return call


def _note_origins(page: Any, state: dict[str, Any]) -> None:
    """Note in ``state`` every origin the page's main frame goes to (their storage is cleared later)."""
    page.on("framenavigated", lambda frame: state["origins"].add(origin_of(frame.url)) if frame.parent_frame is None else None)


@pytest.fixture(scope="session")
def browser(browser: Any) -> Iterator[Any]:
    """pytest-playwright's browser, whose pooled contexts are closed before it is."""
    yield browser
    pool = _POOLS.pop(id(browser), None)
    if pool is not None:
        pool.close_all()


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a page's address ("" for about:blank and the like).

    >>> origin_of("http://127.0.0.1:5071/t/duel/gm?key=x"), origin_of("about:blank")
    ('http://127.0.0.1:5071', '')
    """
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""


@pytest.fixture(autouse=True)
def fixed_client_seeds(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every context a test opens (``browser.new_context``, ``browser.new_page``) comes from the
    test process's :class:`ContextPool` and gets the seeded ``crypto.getRandomValues`` above, seeded
    by the test's id and the context's place in the test, so the phones' client seeds are the same
    on every run. The contexts still out at the end go back to the pool."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    pool = _POOLS.get(id(browser))
    if pool is None or pool.browser is not browser:
        pool = _POOLS[id(browser)] = ContextPool(browser)
    opened: list[Any] = []

    def new_context(*args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError("browser.new_context takes keyword arguments only here")
        # still pages (the boards' own prefers-reduced-motion rules): no dice rolling in, no bar
        # sliding, no halo turning round the active token at every frame. On two cores, the pages'
        # animations took the CPU the servers and the other worker needed. A test about an animation
        # asks for one (``reduced_motion="no-preference"``).
        kwargs.setdefault("reduced_motion", "reduce")
        context = pool.take(kwargs, f"{TEST_SEED}/{request.node.nodeid}/{len(opened)}")
        opened.append(context)
        return context

    def new_page(*args: Any, **kwargs: Any) -> Any:
        return new_context(*args, **kwargs).new_page()

    patch = pytest.MonkeyPatch()
    patch.setattr(browser, "new_context", new_context)
    patch.setattr(browser, "new_page", new_page)
    try:
        yield
    finally:
        patch.undo()
        for context in opened:
            pool.give_back(context)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: this test process's own port for its servers, below the range the system hands out to outgoing
#: connections (see ``home_port``)
_HOME_PORT: list[int] = []


def home_port() -> int:
    """The port this test process's servers listen on, one after another, when it is free.

    A browser keeps what it fetched (the pages' scripts and styles, and the code it compiled from
    them) per address, port included: a server on a new port for each test made every test's pages
    fetch and compile the board's 22 scripts and 10 style sheets again, which took Chromium two thirds more
    CPU per page than a page of a server it had seen. The port is picked once per test process, at
    random below the system's range of ports for outgoing connections (so that none of those takes
    it between two tests); when it is held (a server of the module still running, another copy of
    the suite), the server gets any free port."""
    if not _HOME_PORT:
        try:
            low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            low = 32768
        rng = random.Random()
        for _ in range(50):
            port = rng.randrange(10_000, max(low, 10_001))
            if _bindable(port):
                _HOME_PORT.append(port)
                break
        else:
            return free_port()
    port = _HOME_PORT[0]
    return port if _bindable(port) else free_port()


def _bindable(port: int) -> bool:
    """Whether a server could listen on ``port`` now (as gevent's does: with SO_REUSEADDR)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class LiveServer:
    """``battleboard serve`` in a subprocess on a free port, with its own instance folder."""

    def __init__(self, instance: Path, port: int | None = None, env: dict[str, str] | None = None) -> None:
        self.instance = instance
        self.port = port or home_port()
        self.port_given = port is not None
        self.extra_env = env or {}
        self.process: Forked | subprocess.Popen[bytes] | None = None
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = instance / "server.log"

    def start(self) -> LiveServer:
        env = {**os.environ, "BATTLEBOARD_INSTANCE": str(self.instance), **self.extra_env}
        env.pop("DATABASE_URL", None) if "DATABASE_URL" not in self.extra_env else None
        self.instance.mkdir(parents=True, exist_ok=True)
        # (a fork of the tests' server helper, with the imports done once: tests/server_forks.py)
        self.process = serve(["serve", "--host", "127.0.0.1", "--port", str(self.port), "--no-demo"], env=env, cwd=REPO, log=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = self.log.read_text()
                if "Address already in use" in said and not self.port_given and self.port in _HOME_PORT:
                    # (taken between the look and the server's start: any free port will do)
                    self.port = free_port()
                    self.url = f"http://127.0.0.1:{self.port}"
                    return self.start()
                raise RuntimeError(f"the server exited: {said[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start in 30 s")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process:
            interrupt(self.process)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "instance").start()
    yield server
    server.stop()


@pytest.fixture
def shots(output_path: str) -> Path:
    """This test's folder in the test output directory (pytest-playwright's ``--output``, test-results/)."""
    folder = Path(output_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# The words of the elements matching a selector that the page breaks across two lines (a name set
# too large for its box and wrapped inside a word: "Wild Monst/er"); call with the selector.
WORDS_BROKEN = """(selector) => [...document.querySelectorAll(selector)].flatMap((el) => {
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    for (const m of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, m.index);
      range.setEnd(text, m.index + m[0].length);
      if (range.getClientRects().length > 1) out.push(m[0]);
    }
  }
  return out;
})"""


# the elements that hold a combatant's, a unit's or a side's name, in every system's board
NAMES = ".pb-name, .ol-side-name, .ol-unit-name, .bb-ap-name, .bb-tl-name, .ep-track-name, .ep-mine-head strong, .kit-token-name, .lineup-name"


# The words of the kit's bars matching a selector that do not fit in their bar ("35/35 · WT ",
# "Strength 1,990 / 1,990 · breaks"): a bar's text wider than the bar, or running past its edge.
BARS_CUT = """(selector) => [...document.querySelectorAll(selector)].filter((bar) => {
  const t = bar.querySelector('.kit-bar-text');
  return t && (t.scrollWidth > bar.clientWidth + 1 || t.getBoundingClientRect().right > bar.getBoundingClientRect().right + 1);
}).map((bar) => bar.textContent)"""


# What reads badly on a page at its size, one line each: a text cut by the box it scrolls in or by
# the window ("cut: ..."), a control (button, field) running past its box, or two texts drawn over
# each other ("overlap: ... and ..."); call with the selector of the part to check. Closed folds,
# hidden parts, the grid's SVG (its tokens may lie outside the part shown) and dice still rolling
# are left out; a text cut on purpose with an ellipsis too.
TEXT_CUT = """(selector) => {
  const root = document.querySelector(selector) || document.body;
  const skip = "svg, [hidden], option, script, style, title, .rolling, details:not([open]) > :not(summary)";
  const chain = (el) => { const out = []; for (let a = el; a && a !== document.body; a = a.parentElement) out.push(a); return out; };
  // the part of the window shown inside `from`: the window cut by every box from there up that clips
  const window_ = (from) => {
    let left = 0, right = document.documentElement.clientWidth, top = -Infinity, bottom = Infinity;
    for (const a of chain(from)) {
      const s = getComputedStyle(a);
      const r = a.getBoundingClientRect();
      if (s.overflowX !== "visible") { left = Math.max(left, r.left); right = Math.min(right, r.right); }
      if (s.overflowY !== "visible") { top = Math.max(top, r.top); bottom = Math.min(bottom, r.bottom); }
    }
    return { left, right, top, bottom };
  };
  const out = [];
  const texts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const el = text.parentElement;
    if (!text.data.trim() || !el || el.closest(skip)) continue;
    if (chain(el).some((a) => getComputedStyle(a).textOverflow === "ellipsis" || getComputedStyle(a).visibility === "hidden")) continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const rects = [...range.getClientRects()].filter((r) => r.width > 1 && r.height > 1);
    const w = window_(el);
    const words = text.data.trim().slice(0, 40);
    for (const r of rects) {
      if (r.bottom <= w.top || r.top >= w.bottom) continue; // (scrolled out of its box: a scroll away)
      if (r.left < w.left - 1 || r.right > w.right + 1) out.push(`cut: "${words}"`);
      texts.push({ el, r, words });
    }
  }
  for (const el of root.querySelectorAll("button, select, input, textarea")) {
    if (el.closest(skip) || !el.getClientRects().length) continue;
    const r = el.getBoundingClientRect();
    const w = window_(el.parentElement);
    if (r.width > 1 && (r.left < w.left - 1 || r.right > w.right + 1)) out.push(`cut: the control "${(el.textContent || el.value || "").trim().slice(0, 30)}"`);
  }
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i], b = texts[j];
    if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
    const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
    const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
    if (w > 2 && h > 2) out.push(`overlap: "${a.words}" and "${b.words}"`);
  }
  return [...new Set(out)];
}"""


# The numbers of a log list that do not fit in the room the list leaves them ("93." shown as "3."):
# each line's number ("12.") against the list's left padding, where its marker is drawn; call with
# the list's selector.
LOG_NUMBERS_CUT = """(selector) => {
  const list = document.querySelector(selector);
  if (!list || !list.children.length) return ['no log lines'];
  const room = parseFloat(getComputedStyle(list).paddingLeft);
  const first = list.children[0];
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
  probe.style.font = getComputedStyle(first).font;
  probe.style.fontVariantNumeric = getComputedStyle(first).fontVariantNumeric;
  first.append(probe);
  const cut = [];
  const count = list.children.length;
  for (const n of new Set([count, 1])) {  // (a reversed list counts down from its length)
    probe.textContent = `${list.reversed ? n : count - n + 1}. `;
    if (probe.getBoundingClientRect().width > room + 0.5) cut.push(probe.textContent.trim());
  }
  probe.remove();
  return cut;
}"""


# Resolves once the page's fonts are loaded and two frames have been drawn since: what a page shows
# "live" (connected, caught up, drawn) is then laid out in its own fonts.
SETTLE = "() => document.fonts.ready.then(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))"


def settle(page: Any) -> None:
    """Wait until the page has its fonts and has drawn what it holds (instead of a fixed pause)."""
    page.evaluate(SETTLE)


# True once no animation or transition that ends is still running on the page (dice rolled in, a
# reveal turned over, bars and rings slid to their values, a broken side's shake, a unit's flash).
# The active token's halo (one slow turn of a dashed ring on the grids) moves nothing and is left
# out, as are endless animations.
AT_REST = """() => document.getAnimations().every((a) => a.playState !== "running"
  || !a.effect || a.effect.getComputedTiming().endTime === Infinity
  || Boolean(a.effect.target && a.effect.target.closest && a.effect.target.closest(".token-active-halo")))"""


def at_rest(page: Any, timeout: float = 15_000) -> None:
    """Wait until what moves on the page has stopped (instead of a fixed pause before a screenshot
    or a measure)."""
    page.wait_for_function(AT_REST, timeout=timeout)


def console_settled(gm: Any, timeout: float = 20_000) -> None:
    """Wait until a GM console has drawn the battle's latest version and that version's chances bar
    (which comes just after an update and moves what is below it): a drag or a tap aimed then lands
    where it was aimed."""
    gm.wait_for_function(
        """() => { const b = document.querySelector('[data-testid=battle]');
                   const bar = document.querySelector('[data-testid=chances-bar]');
                   return b && bar && !bar.hidden && bar.dataset.v === b.dataset.version; }""",
        timeout=timeout,
    )
    at_rest(gm)


def wait_for_client_seed(phone: Any, timeout: float = 10_000) -> None:
    """Wait until the board has taken this phone's client seed for its battle (static/js/entropy.js
    remembers it once answered): the phone's own command is then in the log, not racing the next one."""
    phone.wait_for_function(
        "() => Object.keys(localStorage).some((k) => k.startsWith('battleboard-entropy-') && localStorage.getItem(k) === '1')",
        timeout=timeout,
    )


def start_with_seeds_in_turn(start: Callable[[], None], phones: Sequence[Any]) -> None:
    """Start the battle (``start()``) with the phones' client seeds taken in the phones' order.

    A phone sends its seed as soon as it holds a running battle, and the board mixes the seeds into
    the dice in the order they come (static/js/entropy.js): two phones on the page at the start
    raced, and the dice of the whole battle followed whichever came first (the four-combatant
    Eclipse Phase fight ended at version 41 in one run and at 182 in the next). So every phone after
    the first waits on about:blank until the one before has its seed in, then opens its page again."""
    addresses = [phone.url for phone in phones]
    for phone in phones[1:]:
        phone.goto("about:blank")
    start()
    for index, (phone, address) in enumerate(zip(phones, addresses, strict=True)):
        if index:
            phone.goto(address)
        wait_for_client_seed(phone)


def box_of(locator: Any, timeout: float = 10.0) -> dict[str, float]:
    """The bounding box of what ``locator`` finds, read once it holds one.

    ``Locator.bounding_box()`` resolves the element, then measures it: a page that draws the element
    again in between (an update re-renders a phone's actions) leaves the old one detached, and the
    read gives None. This reads until a drawn element answers, so a test waits for what it reads.
    """
    deadline = time.monotonic() + timeout
    while True:
        box = locator.bounding_box(timeout=timeout * 1000)
        if box is not None:
            return box
        if time.monotonic() > deadline:
            raise AssertionError(f"{locator} has no box on the page (not drawn, or hidden) after {timeout} s")
        time.sleep(0.05)


class SocketSpy:
    """Records every Socket.IO frame a page receives, to check what reached it."""

    def __init__(self, page: Any) -> None:
        self.frames: list[str] = []
        page.on("websocket", self._attach)

    def _attach(self, ws: Any) -> None:
        ws.on("framereceived", lambda payload: self.frames.append(payload if isinstance(payload, str) else payload.decode("utf-8", "replace")))

    def text(self) -> str:
        return "\n".join(self.frames)


def create_table(gm: Any, server: LiveServer, name: str, system: str, presets: tuple[str, ...] = (), *, by_form: bool = False) -> None:
    """The GM creates a table and adds combatants from presets on its console.

    ``by_form``: on the front page's form, as a GM does (the duel's first test). Otherwise the page
    sends what that form sends (its CSRF token, read off a form of this browser's session) and opens
    the console it is sent to: the same table, the same session, without drawing the front page
    first (a page load of Chromium's CPU, in each of the tests that start with a table)."""
    if by_form:
        gm.goto(server.url + "/")
        gm.fill("[data-testid=table-name]", name)
        gm.select_option("[data-testid=table-system]", system)
        gm.click("[data-testid=create-table]")
    else:
        form = gm.request.get(server.url + "/join")
        token = CSRF_FIELD.search(form.text())
        assert form.ok and token, f"no CSRF token on the join form ({form.status})"
        created = gm.request.post(server.url + "/tables", form={"name": name, "system": system, "csrf_token": token.group(1)},
                                  max_redirects=0)
        assert created.status in (302, 303), f"the table was not created ({created.status}): {created.text()[:300]}"
        gm.goto(urllib.parse.urljoin(server.url + "/", created.headers["location"]))
    gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
    for preset in presets:
        add_preset(gm, preset)


def add_preset(gm: Any, preset: str) -> None:
    gm.select_option("[data-testid=preset]", label=preset)
    gm.click("[data-testid=stat-save]")
    gm.wait_for_selector(f"[data-testid=lineup] >> text={preset}")


def gm_call(gm: Any, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A Socket.IO command sent with the page's own key (a GM console's: the GM's) on a socket of
    its own; the server's answer."""
    return gm.evaluate(
        """([event, payload]) => new Promise((resolve) => {
            const socket = io({ auth: { table: document.body.dataset.table, token: document.body.dataset.token }, transports: ["websocket"] });
            socket.on("connect", () => socket.emit(event, payload, (ack) => { socket.disconnect(); resolve(ack); }));
        })""",
        [event, payload],
    )


class GmSocket:
    """The GM's console as a socket client of a live server (python-socketio on a websocket): it acts
    for every combatant, for the steps of a battle a test plays without its pages' buttons."""

    def __init__(self, url: str, slug: str, token: str) -> None:
        self.client = socketio.Client(reconnection=False)
        self.client.connect(url, auth={"table": slug, "token": token}, transports=["websocket"], wait_timeout=10)

    def call(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self.client.call(event, payload, timeout=10)

    def close(self) -> None:
        disconnect_now(self.client)
