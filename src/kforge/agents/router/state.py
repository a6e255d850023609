"""The router agent's arguments and the state it saves after each step (by field name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from kforge.rag.grounded import AnswerStyle
from kforge.rag.types import Citation

__all__ = ["Positive", "RouterArgs", "RouterState"]

Positive = Annotated[int, Field(ge=1)]
"""A whole number of at least 1."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RouterArgs:
    """The router agent's arguments (see the module docstring)."""

    question: str = ""
    corpus: str | None = None
    """The document collection (default: ``kforge.rag.DEFAULT_CORPUS``)."""
    history: list[dict[str, Any]] | None = None
    """Earlier turns as ``{question, answer}``; absent: the session's earlier turns, read from
    the store."""
    web_search: bool = False
    """Offer web search."""
    max_iterations: Positive = 3
    """Tool rounds."""
    k: Positive = 5
    """Passages per search (at most ``MAX_K``)."""
    max_tokens: Positive = 400
    """Of the answer."""
    scope: str | None = None
    """What is in scope (default: the topics of the user's documents)."""
    guardrail: bool = True
    """False skips the scope check."""
    answer: AnswerStyle | None = None
    """``extractive`` or ``generative``; default: what the model's provider says."""


@dataclass(eq=False)
class RouterState:
    """Where the turn is: saved after each step and restored by field name."""

    node: str = "guardrail"
    """The graph node the next step runs: guardrail, router, executor, grading, generate, done."""
    iteration: int = 0
    """Tool rounds done (each a routing decision and its execution)."""
    route: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    tools_used: list[str] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    """The tool call chosen by the router node, run by the executor node."""
    hits: list[dict[str, Any]] = field(default_factory=list)
    passages: list[dict[str, Any]] = field(default_factory=list)
    router_failures: int = 0
    answer: str = ""
    citations: list[Citation] = field(default_factory=list)
    """The passages the answer cites, numbered as its ``[n]`` markers."""
    out_of_scope: bool = False
    fallback: bool = False
    conversational: bool = False
    """A greeting or thanks: answered without searching, and without the fallback note."""
    answer_path: str = ""
    """Which path wrote the answer (extractive, generative, ...), and why, in the result."""
    answer_reason: str = ""
    search_question: str = ""
    """What is searched and graded: the question, or with the previous one when it follows up."""
    focus: dict[str, Any] | None = None
    """The focus of ``search_question`` in the corpus (``kforge.rag.focus``), as first read."""
    closest: list[dict[str, Any]] = field(default_factory=list)
    """Passages found but not relevant, for "See also" when the documents do not say."""
    unheld: list[dict[str, Any]] = field(default_factory=list)
    """The hits of the searches so far when none of their passages was relevant (graded
    without a model call): graded again with the next search's."""
    refused: bool = False
    """The answer says the documents do not say (or the question is out of scope)."""
    short_answer: str = ""
    """The answer's direct answer line (empty for a refusal or an answer without sources)."""
