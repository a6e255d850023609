"""How a model declares the way answers from documents are written with it (``StyledModel``)."""

from __future__ import annotations

from kforge.llm import get_model
from kforge.llm.base import StyledModel, answer_style
from kforge.llm.config import AnswerStyle
from kforge.llm.testing.scripted import ScriptedModel


class Quoting(ScriptedModel):
    """A model that declares the extractive style, as a provider's ``answer`` setting does."""

    @property
    def answer_style(self) -> AnswerStyle:
        return "extractive"


def test_the_providers_models_declare_their_answer_style() -> None:
    local = get_model("local:smollm2")
    assert isinstance(local, StyledModel) and local.answer_style == "extractive"
    assert answer_style(local) == "extractive"


def test_a_model_that_declares_no_style_writes_its_own_answers() -> None:
    plain = ScriptedModel([])
    assert not isinstance(plain, StyledModel)
    assert answer_style(plain) == "generative"
    quoting = Quoting([])
    assert isinstance(quoting, StyledModel) and answer_style(quoting) == "extractive"
