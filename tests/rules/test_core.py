"""Shared helpers of the rule library."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rules.core import clone

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6))
json_shaped = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=4).map(tuple)
    | st.dictionaries(st.one_of(st.text(max_size=4), st.integers(-3, 3)), inner, max_size=4),
    max_leaves=25,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for item in value.values() for c in _containers(item))]
    if isinstance(value, list | tuple):
        return [value, *(c for item in value for c in _containers(item))]
    return []


def _as_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_lists(v) for v in value]
    return value


@given(json_shaped)
def test_clone_is_an_equal_copy_that_shares_no_container(value: Any) -> None:
    copied = clone(value)
    assert copied == _as_lists(value)  # tuples come back as lists, as JSON would
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def test_clone_copies_dict_and_list_subclasses_as_plain_ones() -> None:
    state = OrderedDict(a=[1, (2, 3)], b={"c": OrderedDict(d=True)})
    copied = clone(state)
    assert copied == {"a": [1, [2, 3]], "b": {"c": {"d": True}}}
    assert type(copied) is dict and type(copied["b"]["c"]) is dict
    copied["a"][1].append(4)
    assert state["a"][1] == (2, 3)
