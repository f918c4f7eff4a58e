"""An AD&D 1e encounter in real Chromium: the DM screen, two players on 375 px phones and a spectator,
from the reaction check through the rounds to the outcome, whatever the dice say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, SocketSpy, box_of, start_with_seeds_in_turn
from tests.browser.test_duel import PHONE, give_to_player, join_as

pytestmark = pytest.mark.browser

FIGHTER, MAGE, ORC, GOBLIN = "c1", "c2", "c3", "c4"  # ids in lineup order
FOES = (ORC, GOBLIN)
MAX_ROUNDS = 8  # the DM calls it a day after this many rounds even if both sides still stand
MAX_STEPS = 300


# every action on the GM's segment track: the letters it shows, its combatant's token's letters on the
# grid, and whether those letters are cut
TRACK_CHIPS = """() => [...document.querySelectorAll('[data-testid=segment-track] .ad-act')].map((e) => {
  const id = e.dataset.testid.slice(4);
  const who = e.querySelector('.ad-act-who');
  const label = document.querySelector(`[data-testid=token-${id}] .token-label`);
  return { id, who: who.textContent, token: label ? label.textContent : null, cut: who.scrollWidth > who.clientWidth + 1 };
})"""

def setup_table(gm: Any, server: LiveServer) -> None:
    gm.goto(server.url + "/")
    gm.fill("[data-testid=table-name]", "Demon Idol night")
    gm.select_option("[data-testid=table-system]", "adnd")
    gm.click("[data-testid=create-table]")
    gm.wait_for_selector("[data-testid=connection-status][data-state=live]")
    for preset in ("Fighter (1st level)", "Magic-user (1st level)", "Orc", "Goblin"):
        gm.select_option("[data-testid=preset]", label=preset)
        gm.click("[data-testid=stat-save]")
        gm.wait_for_selector(f"[data-testid=lineup] >> text={preset}")


def assign(gm: Any, index: int, player: str) -> None:
    """Give a combatant to a player and wait until the server's lineup says so: the lineup editor sends the
    whole lineup it last drew, so a second change made before the first comes back would undo the first."""
    give_to_player(gm, index, player)
    gm.wait_for_selector(f"[data-testid=lineup-controller-{index}] option[selected]:has-text('Player: {player}')",
                         state="attached")


def version(page: Any) -> str:
    return page.get_attribute("[data-testid=battle]", "data-version")


def sync(gm: Any, pages: tuple[Any, ...]) -> str:
    """Wait until every page shows the battle at the GM's version."""
    v = version(gm)
    for page in pages:
        page.wait_for_selector(f"[data-testid=battle][data-version='{v}']", state="attached")
    return v


def then_wait(gm: Any, before: str, what: str, actor: Any = None) -> None:
    """Wait for the GM's board to move past version ``before``: the server accepted the action."""
    try:
        gm.wait_for_selector(f"[data-testid=battle]:not([data-version='{before}'])", state="attached", timeout=10_000)
    except PlaywrightTimeout as err:  # say what the board answered, not only that we timed out
        notice = (actor or gm).locator("#notice")
        shown = notice.inner_text() if notice.is_visible() else "none"
        raise AssertionError(f"{what} was not accepted; the notice said: {shown}") from err


def phase(gm: Any) -> str:
    if gm.locator("[data-testid=outcome]").count():
        return "ended"
    return gm.get_attribute("#battle .ad", "data-phase")


def gm_step(gm: Any, testid: str) -> None:
    v = version(gm)
    gm.click(f"[data-testid=gm-steps] [data-testid={testid}]")
    then_wait(gm, v, testid)


def gm_form_step(gm: Any, testid: str, note: str | None = None) -> None:
    """A DM step with fields: open its form, fill the note if any, send it."""
    v = version(gm)
    gm.click(f"[data-testid=gm-steps] [data-testid={testid}]")
    if note is not None:
        gm.fill("[data-testid=gm-steps] [data-testid=field-note]", note)
    gm.click(f"[data-testid=gm-steps] [data-testid={testid}-go]")
    then_wait(gm, v, testid)


def choose(form: Any, kinds: tuple[str, ...]) -> str:
    for kind in kinds:
        button = form.locator(f"[data-testid=kind-{kind}]")
        if button.count():
            button.click()
            expect(form.locator(f"[data-testid=kind-{kind}]")).to_have_attribute("aria-pressed", "true")
            return kind
    raise AssertionError(f"none of {kinds} offered: {form.inner_text()}")


def pick_foe(form: Any) -> str | None:
    for foe in FOES:
        button = form.locator(f"[data-testid=target-{foe}]")
        if button.count():
            button.click()
            expect(form.locator(f"[data-testid=target-{foe}]")).to_have_class(re.compile(r"\bselected\b"))
            return foe
    return None


def declare_on_phone(phone: Any, gm: Any, cid: str, kinds: tuple[str, ...], spell: bool = False,
                     wait_for_clock: bool = False) -> str:
    """The awaited player declares on the phone, the running clock in view; returns the kind declared."""
    form = phone.locator(f"[data-testid=declare-form][data-combatant={cid}]")
    form.wait_for()
    clock = form.locator("[data-testid=clock]")
    expect(clock).to_have_text(re.compile(r": \d+ s"))
    if wait_for_clock:  # the clock runs on the phone, second by second
        expect(clock).to_have_text(re.compile(r": [1-9]\d* s"), timeout=5_000)
    kind = choose(form, kinds)
    target = pick_foe(form)
    if kind == "charge" and target:
        # the phone's charge panel tells when the charge would land and who could strike back
        expect(phone.locator("[data-testid=charge-target]")).to_be_visible()
        # in whole feet, as a table says it (the distance between centres has decimals)
        expect(phone.locator("[data-testid=charge-target]")).to_contain_text(re.compile(r"\(\D*\d+ ft away\)"))
    if spell:
        form.locator("[data-testid=field-spell]").fill("Magic missile")
        form.locator("[data-testid=field-damage]").fill("1d4+1")
    submit = form.locator("[data-testid=declare-submit]")
    expect(submit).to_be_enabled()
    box = box_of(submit)
    assert box and box["height"] >= 44, "the declare button is too small for a thumb"
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "the phone scrolls sideways"
    v = version(gm)
    submit.click()
    then_wait(gm, v, f"{cid}'s declaration ({kind})", actor=phone)
    return kind


def declare_for_npc(gm: Any, cid: str, kinds: tuple[str, ...], note: str) -> None:
    form = gm.locator(f"[data-testid=declare-form][data-combatant={cid}]")
    choose(form, kinds)
    targets = form.locator("[data-testid^=target-]")
    if targets.count() and not form.locator("[data-testid^=target-].selected").count():
        targets.first.click()
    form.locator("[data-testid=field-note]").fill(note)
    submit = form.locator("[data-testid=declare-submit]")
    expect(submit).to_be_enabled()
    v = version(gm)
    submit.click()
    then_wait(gm, v, f"the DM's note for {cid}")


def test_an_adnd_encounter_from_reaction_to_outcome(browser: Any, live_server: LiveServer, shots: Path) -> None:
    gm_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    alice_ctx, bob_ctx = browser.new_context(**PHONE), browser.new_context(**PHONE)
    watch_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    try:
        gm, alice, bob, watch = (c.new_page() for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx))
        for name, page in (("gm", gm), ("alice", alice), ("bob", bob), ("watch", watch)):
            page.on("pageerror", lambda e, n=name: errors.append(f"{n}: {e}"))
        watch_spy, alice_spy, bob_spy = SocketSpy(watch), SocketSpy(alice), SocketSpy(bob)
        others = (alice, bob, watch)
        phones = {FIGHTER: alice, MAGE: bob}

        setup_table(gm, live_server)
        join_as(alice, gm, "Alice")
        join_as(bob, gm, "Bob")
        assign(gm, 0, "Alice")
        assign(gm, 1, "Bob")
        # the second assignment kept the first
        expect(gm.locator("[data-testid=lineup-controller-0] option[selected]")).to_have_text("Player: Alice")
        watch.goto(gm.get_attribute("[data-testid=watch-link]", "href"))
        watch.wait_for_selector("[data-testid=connection-status][data-state=live]")

        # the phones' client seeds are in, one after the other: no later version slips between the
        # GM's and what every page is waited for (sync), and the dice are the same every run
        start_with_seeds_in_turn(lambda: gm.click("[data-testid=start-battle]"), (alice, bob))
        for page in (gm, *others):  # (a phone folds the procedure under the step under way)
            page.wait_for_selector("[data-testid=step-reaction][data-state=current]", state="attached")
        gm.screenshot(path=str(shots / "gm-start.png"), full_page=True)

        # --- the encounter checks: reaction, surprise, distance, opening morale (skipped with a note)
        gm_form_step(gm, "gm-check_reaction")
        sync(gm, others)
        expect(watch.locator("[data-testid=step-reaction]")).to_have_attribute("data-state", "done")
        expect(watch.locator("[data-testid=step-reaction]")).to_contain_text(re.compile(r"\d+: \w"))
        expect(watch.locator("[data-testid=step-surprise]")).to_have_attribute("data-state", "current")
        gm_step(gm, "gm-check_surprise")
        sync(gm, others)
        expect(watch.locator("[data-testid=step-surprise]")).to_have_attribute("data-state", "done")
        expect(watch.locator("[data-testid=step-surprise]")).to_contain_text("Surprise:")
        expect(watch.locator("[data-testid=step-distance]")).to_have_attribute("data-state", "current")
        gm_step(gm, "gm-check_distance")
        sync(gm, others)
        expect(watch.locator("[data-testid=step-distance]")).to_have_attribute("data-state", "done")
        expect(watch.locator("[data-testid=step-distance]")).to_contain_text(re.compile(r"The parties are \d+ inch(es)? apart"))
        expect(watch.locator("[data-testid=step-morale]")).to_have_attribute("data-state", "current")
        gm_form_step(gm, "gm-skip-morale", note="they are not afraid")
        sync(gm, others)
        expect(watch.locator("[data-testid=step-morale]")).to_have_attribute("data-state", "skipped")
        expect(watch.locator("[data-testid=step-morale]")).to_contain_text("they are not afraid")
        surprise = gm.locator("[data-testid=step-surprise_segments]").count() > 0
        first_step = "surprise_segments" if surprise else "declarations"
        for page in (gm, watch):
            expect(page.locator(f"[data-testid=step-{first_step}]")).to_have_attribute("data-state", "current")
        if surprise:
            expect(watch.locator("[data-testid=round]")).to_contain_text(re.compile(r"Surprise segment 1 of \d"))
        else:
            expect(watch.locator("[data-testid=round]")).to_have_text("Round 1")
        gm.screenshot(path=str(shots / "gm-after-checks.png"), full_page=True)

        # --- the rounds: each page does what its board offers, until the DM ends the encounter
        declared_on_phone: dict[str, int] = {FIGHTER: 0, MAGE: 0}
        spell_cast = False
        noted = 0  # the DM's secret notes so far
        secret_notes: list[str] = []  # those of the segment or round now being played
        batch = ""  # "Surprise segment 1 of 2", "Round 1", ...
        kept = 0  # notes that stayed the DM's after their round resolved
        rounds_recapped = 0
        decided = False
        in_resolution = False
        for _step in range(MAX_STEPS):
            sync(gm, others)
            now = phase(gm)
            if now != "resolution":
                in_resolution = False
            if now == "ended":
                break
            round_text = watch.inner_text("[data-testid=round]")
            in_surprise = round_text.startswith("Surprise")
            if round_text != batch:  # a new segment or round: the notes of the last one are settled
                batch, secret_notes = round_text, []
            if now == "declarations":
                if gm.locator("[data-testid=gm-roll-order]").count():
                    gm_step(gm, "gm-roll-order")
                    continue
                cid = gm.get_attribute("[data-testid=declare-form]", "data-combatant")
                if cid in FOES:
                    note = f"xyzzy{noted:02d} plan"
                    declare_for_npc(gm, cid, ("await",) if in_surprise else ("charge", "melee", "await"), note)
                    noted += 1
                    secret_notes.append(note)
                    # the spectator is told that a secret action was noted, never what it is
                    sync(gm, others)
                    expect(watch.locator("[data-testid=log]")).to_contain_text("noted a secret action")
                    continue
                assert cid in phones, f"unexpected declaration form for {cid!r}"
                expect(watch.locator("[data-testid=await-clock]")).to_contain_text(re.compile(r"\d+ s"))
                if in_surprise:
                    kinds: tuple[str, ...] = ("await",)  # nobody is hurt before round 1
                elif cid == FIGHTER:
                    kinds = ("charge", "melee", "await")
                else:
                    kinds = ("missile", "charge", "await") if spell_cast else ("spell",)
                kind = declare_on_phone(phones[cid], gm, cid, kinds, spell=kinds == ("spell",),
                                        wait_for_clock=declared_on_phone[cid] == 0)
                spell_cast = spell_cast or kind == "spell"
                declared_on_phone[cid] += 1
                if declared_on_phone[cid] == 1:
                    phones[cid].screenshot(path=str(shots / f"phone-{cid}-declared-{kind}.png"), full_page=True)
                continue
            if now == "initiative":
                for spy in (watch_spy, alice_spy, bob_spy):
                    assert not [n for n in secret_notes if n in spy.text()], "a DM's note leaked before initiative"
                gm_step(gm, "gm-initiative")
                continue
            if now == "resolution":
                if not in_resolution:  # nothing of this round is resolved yet
                    in_resolution = True
                    for name, spy in (("spectator", watch_spy), ("Alice", alice_spy), ("Bob", bob_spy)):
                        leaked = [n for n in secret_notes if n in spy.text()]
                        assert not leaked, f"the DM's secret note {leaked} reached {name}'s socket before it resolved"
                    expect(gm.locator("[data-testid=segment-track]")).to_be_visible()
                    gm_track = gm.inner_text("[data-testid=segment-track]")
                    for note in secret_notes:
                        assert note in gm_track, "the DM's own screen shows the DM's notes"
                    players_act = [c for c in (FIGHTER, MAGE) if gm.locator(f"[data-testid=act-{c}]").count()]
                    for cid in players_act:  # the players' actions are on every track, in the same segment
                        segment = gm.locator(f".ad-seg:has([data-testid=act-{cid}])").first.get_attribute("data-testid")
                        assert segment and re.fullmatch(r"segment-([1-9]|10)", segment), segment
                        for page in (watch, alice, bob):
                            expect(page.locator(f"[data-testid={segment}] [data-testid=act-{cid}]").first).to_be_visible()
                    # each action on the track goes by its token's letters, whole ("MU", as on the grid),
                    # not by a name broken in a tenth of the card ("Mag ic- us…")
                    chips = gm.evaluate(TRACK_CHIPS)
                    assert chips and all(c["who"] == c["token"] and not c["cut"] for c in chips), chips
                    if not players_act:  # only the DM's secret actions: nothing to show the others yet
                        expect(watch.locator("[data-testid=segment-track]")).to_have_count(0)
                    for foe in FOES:  # the DM's actions are on the DM's track only
                        expect(watch.locator(f"[data-testid=act-{foe}]")).to_have_count(0)
                        expect(alice.locator(f"[data-testid=act-{foe}]")).to_have_count(0)
                    if not in_surprise and gm.locator("[data-testid=spells]").count():
                        expect(watch.locator("[data-testid=spells]")).to_contain_text("Magic missile")
                    if rounds_recapped == 0:
                        gm.screenshot(path=str(shots / "gm-resolution.png"), full_page=True)
                        watch.screenshot(path=str(shots / "spectator-resolution.png"), full_page=True)
                        assert alice.evaluate("document.documentElement.scrollWidth") <= 375
                gm_step(gm, "gm-resolve-next")
                continue
            if now == "bleeding":
                gm_step(gm, "gm-bleed")
                continue
            if now == "recap":
                rounds_recapped += 1
                for page in (watch, alice, bob):
                    expect(page.locator("[data-testid=recap] h2")).to_have_text(f"Recap of round {rounds_recapped}")
                    expect(page.locator("[data-testid=recap]")).to_contain_text("Side A:")
                # once resolved, the foes' actions are on every track, but the DM's notes on them never
                # leave the DM's screen (issue 32: they were published when the action resolved)
                track = watch.inner_text("[data-testid=segment-track]")
                for note in secret_notes:
                    assert note not in track, f"{note!r} reached the spectator's track"
                    for name, spy in (("spectator", watch_spy), ("Alice", alice_spy), ("Bob", bob_spy)):
                        assert note not in spy.text(), f"the DM's note {note!r} reached {name}'s socket"
                kept += len(secret_notes)
                secret_notes = []
                for phone in (alice, bob):
                    assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "a phone scrolls sideways"
                if rounds_recapped == 1:
                    watch.screenshot(path=str(shots / "spectator-recap.png"), full_page=True)
                    alice.screenshot(path=str(shots / "phone-recap.png"), full_page=True)
                    gm.screenshot(path=str(shots / "gm-recap.png"), full_page=True)
                decided = "fight no more" in watch.inner_text("[data-testid=recap]")
                if decided or rounds_recapped >= MAX_ROUNDS:
                    gm_step(gm, "gm-end-encounter")
                else:
                    gm_step(gm, "gm-next-round")
                continue
            if now == "recovery":
                gm_step(gm, "gm-finish")
                continue
            raise AssertionError(f"unexpected phase {now!r}")
        else:
            raise AssertionError(f"the encounter did not end in {MAX_STEPS} steps")

        # --- the outcome, everywhere
        for page in (gm, *others):
            expect(page.locator("[data-testid=outcome]")).to_contain_text("The encounter ends")
        if decided:
            expect(watch.locator("[data-testid=outcome]")).to_contain_text(re.compile(r"side [AB] holds the field"))
        assert rounds_recapped >= 1
        assert decided or rounds_recapped >= MAX_ROUNDS
        assert declared_on_phone[FIGHTER] >= 1 and declared_on_phone[MAGE] >= 1, declared_on_phone
        assert noted >= 2 and kept >= 2, "the DM noted both foes' actions in secret, and the notes stayed the DM's"
        for phone in (alice, bob):
            assert phone.evaluate("document.documentElement.scrollWidth") <= 375, "a phone scrolls sideways"
        gm.screenshot(path=str(shots / "gm-end.png"), full_page=True)
        alice.screenshot(path=str(shots / "phone-end.png"), full_page=True)
        watch.screenshot(path=str(shots / "spectator-end.png"), full_page=True)
        assert not errors, errors
    finally:
        for c in (gm_ctx, alice_ctx, bob_ctx, watch_ctx):
            c.close()
