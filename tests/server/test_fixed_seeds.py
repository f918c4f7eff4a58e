"""BATTLEBOARD_TEST_SEED (tests only): the same table in a new database gets the same dice seed and the
same seat ids; unset, every battle's seed and every seat's id are random as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import duel_lineup, make_app
from webapp.config import load_config


def play_a_table(instance: Path, **overrides: Any) -> tuple[list[str], list[str]]:
    """A new database: a duel table, two seats, two battles one after the other; their seeds and the seats' ids."""
    app = make_app(instance, **overrides)
    service = app.extensions["battleboard"].service
    try:
        table = service.create_table("Seeded", "phantoms-bane")
        seats = [service.join(table.join_code, name)[1] for name in ("Alice", "Bob")]
        service.set_lineup(table.id, duel_lineup(a={"controller": "seat", "seat": seats[0].public_id}))
        battles = [service.start_battle(table.id).battle_id for _ in range(2)]  # (the second replaces the first)
        return [service.battle(b).seed for b in battles], [seat.public_id for seat in seats]
    finally:
        service.engine.dispose()


def test_a_test_seed_gives_every_new_database_the_same_seeds_and_seats(tmp_path: Path) -> None:
    one = play_a_table(tmp_path / "one", test_seed="a test seed")
    two = play_a_table(tmp_path / "two", test_seed="a test seed")
    assert one == two
    seeds, seat_ids = one
    assert seeds[0] != seeds[1], "the table's next battle has dice of its own"
    assert all(len(seed) == 32 and all(c in "0123456789abcdef" for c in seed) for seed in seeds)
    assert len(set(seat_ids)) == 2 and all(s.startswith("s") and len(s) == 9 for s in seat_ids)
    other = play_a_table(tmp_path / "other", test_seed="another test seed")
    assert other[0][0] != seeds[0] and other[1] != seat_ids


def test_without_a_test_seed_the_seeds_and_seats_are_random(tmp_path: Path) -> None:
    one = play_a_table(tmp_path / "one", test_seed=None)
    two = play_a_table(tmp_path / "two", test_seed=None)
    assert one[0][0] != two[0][0] and set(one[1]).isdisjoint(two[1])


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATTLEBOARD_TEST_SEED", raising=False)
    assert load_config().test_seed is None
    monkeypatch.setenv("BATTLEBOARD_TEST_SEED", "")
    assert load_config().test_seed is None
    monkeypatch.setenv("BATTLEBOARD_TEST_SEED", "night-one")
    assert load_config().test_seed == "night-one"
