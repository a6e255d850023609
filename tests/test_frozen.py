"""Frozen JSON values: equal to what they were made from, refusing every change, however they
were made (from any value, or in place from one just decoded)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given

from kforge.errors import AppendOnlyError
from kforge.frozen import FrozenDict, FrozenList, freeze, freeze_decoded
from kforge.jsoncodec import dumps, loads
from tests.test_frames import json_values


def _frozen_all_the_way(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(map(_frozen_all_the_way, value.values()))
    if isinstance(value, list):
        return type(value) is FrozenList and all(map(_frozen_all_the_way, value))
    return True


@given(json_values)
def test_a_decoded_value_frozen_in_place_is_what_freeze_makes(value: Any) -> None:
    decoded = loads(dumps(value))
    frozen = freeze_decoded(decoded)
    assert frozen == freeze(copy.deepcopy(value)) == value
    assert _frozen_all_the_way(frozen)
    assert dumps(frozen) == dumps(value)


def test_a_value_frozen_in_place_refuses_changes_at_any_depth() -> None:
    frozen = freeze_decoded(loads('{"calls": [{"arguments": {"a": 1}}], "n": 1}'))
    for change in (
        lambda: frozen.__setitem__("n", 2),
        lambda: frozen["calls"].append({}),
        lambda: frozen["calls"][0]["arguments"].update(a=2),
    ):
        with pytest.raises(AppendOnlyError):
            change()
    assert frozen == {"calls": [{"arguments": {"a": 1}}], "n": 1}
