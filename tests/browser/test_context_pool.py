"""The browser tests' pool of contexts (tests/browser/conftest.py): a context handed on to the next
test is as clean as a new one, and a context a test changed for good is never handed on."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 375, "height": 667}, "is_mobile": True, "has_touch": True}


def test_a_context_given_back_is_handed_on_clean(browser: Any, live_server: LiveServer) -> None:
    first = browser.new_context(**PHONE)
    page = first.new_page()
    page.goto(live_server.url + "/")
    page.evaluate("localStorage.setItem('battleboard-left-over', 'yes'); document.cookie = 'left_over=yes; path=/'")
    assert page.evaluate("document.cookie") == "left_over=yes"
    first.close()  # given back, not closed
    again = browser.new_context(**PHONE)
    assert again is first, "the pool handed out a new context for the same options"
    assert [p for p in again.pages if not p.is_closed() and p.url != "about:blank"] == []  # the test's pages are gone
    page = again.new_page()
    page.goto(live_server.url + "/")
    assert page.evaluate("localStorage.getItem('battleboard-left-over')") is None
    assert page.evaluate("document.cookie") == ""
    assert "left_over" not in {cookie["name"] for cookie in again.cookies()}  # (the server's own session cookie is new)
    other = browser.new_context(viewport={"width": 1280, "height": 800})
    assert other is not again, "a context made with other options was handed out"
    other.close()
    again.close()


def test_a_context_changed_for_good_is_never_handed_on(browser: Any, live_server: LiveServer) -> None:
    changed = browser.new_context(viewport={"width": 1024, "height": 600})
    changed.add_init_script("window.leftOver = true")
    changed.new_page().goto(live_server.url + "/")
    changed.close()
    fresh = browser.new_context(viewport={"width": 1024, "height": 600})
    assert fresh is not changed
    page = fresh.new_page()
    page.goto(live_server.url + "/")
    assert page.evaluate("window.leftOver === undefined")
    fresh.close()
