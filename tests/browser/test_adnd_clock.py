"""AD&D's declaration clock tells a player the truth after a reload (issue 33): a phone whose own clock
is off, reloaded seconds into its declaration, counts from the server's start of the clock, as the DM's
console does (it once showed "0 s — on time" while the console showed "6 s — 1 segment late")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, create_table
from tests.browser.test_adnd import assign, declare_for_npc, gm_form_step, gm_step
from tests.browser.test_duel import PHONE, join_as

pytestmark = pytest.mark.browser

FIGHTER, ORC = "c1", "c2"
#: the phone's own clock runs this far behind the server's (seconds)
PHONE_BEHIND = 47
SHIFT_CLOCK = f"""(() => {{
  const real = Date.now.bind(Date);
  Date.now = () => real() - {PHONE_BEHIND * 1000};
}})();"""


def seconds(text: str) -> int:
    found = re.search(r": (\d+) s", text)
    assert found, f"no clock in {text!r}"
    return int(found.group(1))


def test_a_phone_reloaded_mid_declaration_shows_the_consoles_lateness(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
    phone_context = browser.new_context(**PHONE)
    phone_context.add_init_script(SHIFT_CLOCK)
    errors: list[str] = []
    try:
        gm, phone = gm_context.new_page(), phone_context.new_page()
        for name, page in (("gm", gm), ("phone", phone)):
            page.on("pageerror", lambda e, n=name: errors.append(f"{n}: {e}"))
        create_table(gm, live_server, "Clock night", "adnd", ("Fighter (1st level)", "Orc"))
        join_as(phone, gm, "Alice")
        assert phone.evaluate("Date.now()") < gm.evaluate("Date.now()") - (PHONE_BEHIND - 5) * 1000, "the phone's clock is not shifted"
        assign(gm, 0, "Alice")
        gm.click("[data-testid=start-battle]")
        gm.wait_for_selector("[data-testid=step-reaction][data-state=current]", state="attached")
        # the DM knows the encounter: every check skipped with a note, no surprise
        for check in ("reaction", "surprise", "distance", "morale"):
            gm_form_step(gm, f"gm-skip-{check}", note="known")
        declare_for_npc(gm, ORC, ("melee", "charge", "await"), "the orc waits")
        gm_step(gm, "gm-roll-order")  # Alice's clock starts on the server

        console = gm.locator("[data-testid=await-clock]")
        form = phone.locator(f"[data-testid=declare-form][data-combatant={FIGHTER}]")
        expect(form.locator("[data-testid=clock]")).to_have_text(re.compile(r": \d+ s"))
        # four seconds into the declaration, the phone reloads
        expect(console).to_have_text(re.compile(r": ([4-9]|\d\d+) s"), timeout=15_000)
        phone.reload()
        phone.wait_for_selector("[data-testid=connection-status][data-state=live]")
        clock = form.locator("[data-testid=clock]")
        expect(clock).to_have_text(re.compile(r": \d+ s"))
        # the console passes six seconds: a segment late, and the phone says the same
        expect(console).to_have_text(re.compile(r"1 segment late"), timeout=15_000)
        before = seconds(console.inner_text())
        shown = clock.inner_text()
        after = seconds(console.inner_text())
        assert before - 1 <= seconds(shown) <= after + 1, f"the phone shows {shown!r}, the console {before}-{after} s"
        # (the two pages tick on their own half-seconds: the phone reads "segment late" within a tick)
        expect(clock).to_have_text(re.compile(r"\d+ s — [12] segments? late"), timeout=2_000)
        phone.screenshot(path=str(shots / "phone-clock-after-reload.png"))
        gm.screenshot(path=str(shots / "console-clock.png"))
        assert not errors, errors
    finally:
        gm_context.close()
        phone_context.close()
