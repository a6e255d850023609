"""Every prompt sent to a model comes from the template library and renders byte for byte the
text it had as an inline string (``moved_prompts.json``, captured from that code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.prompts.moved_cases import CASES, rendered

EXPECTED: dict[str, str] = json.loads(
    (Path(__file__).with_name("moved_prompts.json")).read_text(encoding="utf-8")
)


def test_every_captured_case_is_still_checked() -> None:
    assert set(CASES) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_library_renders_the_captured_text(name: str) -> None:
    assert rendered_one(name) == EXPECTED[name]


def rendered_one(name: str) -> str:
    value = CASES[name]()
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def test_rendered_covers_every_case() -> None:
    assert rendered().keys() == EXPECTED.keys()
