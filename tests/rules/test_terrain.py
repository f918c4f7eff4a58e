"""Blocked squares: the shared geometry (rules/terrain.py), checked against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import terrain
from rules.errors import InvalidDeclaration


def test_clean_blocked_sorts_dedups_and_refuses_junk():
    assert terrain.clean_blocked([[2, 1], [0, 0], [2, 1]], 5, 5) == [[0, 0], [2, 1]]
    assert terrain.clean_blocked(None) == []
    for junk in ("x", [[1]], [[1, 2, 3]], [["a", 1]], [[True, 1]], [[1.5, 2]], [[-1, 0]], {"x": 1}):
        with pytest.raises(InvalidDeclaration):
            terrain.clean_blocked(junk, 5, 5)
    with pytest.raises(InvalidDeclaration, match="off the 5×5 grid"):
        terrain.clean_blocked([[5, 0]], 5, 5)


def _brute_line_clear(a, b, blocked):
    """Sample the segment densely: it is clear if no sample lies strictly inside a blocked square other
    than the end squares, and no corner it passes exactly has both side squares blocked."""
    (x0, y0), (x1, y1) = a, b
    n = 2000
    for i in range(1, n):
        t = i / n
        x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
        sq = (math.floor(x + 0.5), math.floor(y + 0.5))
        if sq in blocked and sq not in (a, b):
            inside_x = abs(x - sq[0]) < 0.5 - 1e-6
            inside_y = abs(y - sq[1]) < 0.5 - 1e-6
            if inside_x and inside_y:
                return False
    return True


@settings(max_examples=150, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12),
       st.tuples(st.integers(0, 6), st.integers(0, 6)), st.tuples(st.integers(0, 6), st.integers(0, 6)))
def test_line_clear_agrees_with_sampling_away_from_corners(blocked, a, b):
    blocked = frozenset(blocked)
    exact = terrain.line_clear(a, b, blocked)
    sampled = _brute_line_clear(a, b, blocked)
    if sampled is False:
        assert exact is False
    # where sampling sees nothing, only a corner squeeze may still close the line
    if exact is False and sampled:
        dx, dy = b[0] - a[0], b[1] - a[1]
        assert dx and dy


def test_squeezing_between_two_corners_is_refused_but_passing_one_corner_is_not():
    assert not terrain.line_clear((0, 0), (1, 1), frozenset({(1, 0), (0, 1)}))
    assert terrain.line_clear((0, 0), (1, 1), frozenset({(1, 0)}))
    assert not terrain.line_clear((0, 0), (2, 2), frozenset({(2, 1), (1, 2)}))  # squeezes at (1.5, 1.5)
    assert not terrain.line_clear((0, 0), (2, 2), frozenset({(1, 1)}))


def _brute_steps(origin, blocked, w, h):
    """Step distances by Bellman-Ford relaxation over every legal king step."""
    inf = 10**9
    dist = {(x, y): inf for x in range(w) for y in range(h) if (x, y) not in blocked}
    dist[origin] = 0
    changed = True
    while changed:
        changed = False
        for (x, y), d in list(dist.items()):
            if d == inf:
                continue
            for dx, dy in itertools.product((-1, 0, 1), repeat=2):
                n = (x + dx, y + dy)
                if n not in dist or (dx and dy and (x + dx, y) in blocked and (x, y + dy) in blocked):
                    continue
                if d + 1 < dist[n]:
                    dist[n] = d + 1
                    changed = True
    return {k: v for k, v in dist.items() if v < inf}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_steps_match_brute_force(blocked):
    blocked = frozenset(blocked - {(0, 0)})
    assert terrain.steps_from((0, 0), blocked, 8, 8) == _brute_steps((0, 0), blocked, 8, 8)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_any_angle_ways_never_cross_blocked_squares_and_are_never_shorter_than_straight(blocked):
    blocked = frozenset(blocked - {(0, 0)})
    lengths = terrain.path_lengths((0, 0), blocked, 8, 8)
    steps = terrain.steps_from((0, 0), blocked, 8, 8)
    assert set(lengths) == set(steps)  # the same squares can be reached either way
    for sq, length in lengths.items():
        assert sq not in blocked
        assert length >= math.hypot(*sq) - 1e-9
        corners = terrain.path((0, 0), sq, blocked, 8, 8)
        assert corners[0] == (0, 0) and corners[-1] == sq
        assert all(terrain.line_clear(p, q, blocked) for p, q in zip(corners, corners[1:], strict=False))
        walked = sum(math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in zip(corners, corners[1:], strict=False))
        assert walked == pytest.approx(length)


def test_with_nothing_blocked_lengths_are_straight_distances():
    lengths = terrain.path_lengths((3, 3), frozenset(), 8, 8, 3.5)
    assert lengths[(5, 5)] == pytest.approx(math.hypot(2, 2))
    assert (6, 6) not in lengths  # 4.24 > 3.5
    assert terrain.step_distance((0, 0), (5, 3), frozenset(), 8, 8) == 5


def test_a_wall_makes_the_way_longer_and_a_closed_wall_leaves_none():
    wall = frozenset((4, y) for y in range(0, 6))
    assert terrain.path_length((2, 2), (6, 2), frozenset(), 8, 8) == 4
    around = terrain.path_length((2, 2), (6, 2), wall, 8, 8)
    # every way passes the wall's end at a square (4, y >= 6): never shorter than through (4, 6)
    assert 2 * math.hypot(2, 4) - 1e-9 <= around <= 2 * math.hypot(2, 4) + 0.5
    closed = frozenset((4, y) for y in range(8))
    assert terrain.path_length((2, 2), (6, 2), closed, 8, 8) is None
    assert terrain.step_distance((2, 2), (6, 2), closed, 8, 8) is None
    assert terrain.step_distance((2, 2), (6, 2), wall, 8, 8) == 8  # down to row 6 and back up
    assert not terrain.within_steps((3, 2), (5, 2), 2, closed, 8, 8)
    assert terrain.within_steps((3, 2), (5, 2), 2, frozenset(), 8, 8)


def test_point_along_a_way():
    corners = [(0, 0), (0, 3), (4, 3)]
    assert terrain.point_along(corners, 2) == (0.0, 2.0)
    assert terrain.point_along(corners, 5) == (2.0, 3.0)
    assert terrain.point_along(corners, 99) == (4.0, 3.0)
