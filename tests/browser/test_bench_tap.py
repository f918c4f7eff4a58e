"""The tap benchmark (tests/benchmarks/bench_tap.py) keeps working: its core times two taps of a phone
in one system (the figures are the benchmark's to print, never checked here)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.benchmarks.bench_tap import measure_system
from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_bench_tap_times_two_taps(browser: Any, live_server: LiveServer) -> None:
    assert len(measure_system(browser, live_server, "phantoms-bane", taps=2, settle=0.1).samples) == 2
