"""The ``router`` agent: guardrail → router ⇄ executor → grading → generate.

One durable step per node. The guardrail refuses what the documents have nothing on and ends;
the first tool round always searches the documents with the user's own words; later rounds
follow a typed ``RouterDecision`` (a tool and a search query, or ``generate``) informed by the
conversation so far; grading keeps only the passages graded relevant; generation writes the
answer from them with ``kforge.rag.grounded`` (extractive for small models, checked generation
otherwise), and its ``[n]`` markers are the numbers of the answer's own Sources. Each step emits
``agent.status`` frames named guardrail, out_of_scope, routing, executing, tool_start,
tool_end, grading and generation.

Args: ``question`` (required); ``corpus`` (name of the document collection); ``history``
(earlier turns as ``{question, answer}``; when absent, the earlier turns of the run's session are
read from the store); ``web_search`` (offer web search); ``max_iterations`` (tool rounds, 3);
``k`` (passages per search, 4); ``max_tokens`` (of the answer); ``scope`` (what is in scope);
``guardrail`` (false skips it); ``answer`` (``extractive`` or ``generative``; default: what the
model's provider says).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kforge.agents.conversation import (
    Turn,
    format_history,
    load_session_turns,
    turns_from_args,
)
from kforge.agents.react import service_tools
from kforge.agents.router_answer import FALLBACK_NOTE, model_only_answer
from kforge.agents.router_guardrail import judge_scope, polite_refusal
from kforge.agents.router_schema import ROUTER_SYSTEM, RouterDecision, router_schema
from kforge.agents.router_tools import (
    MAX_K,
    RETRIEVE,
    WEB_SEARCH,
    passages_from_result,
    retrieve_tool,
)
from kforge.engine.agent import StepOutcome
from kforge.engine.context import RunContext
from kforge.engine.registry import AgentRegistry, default_registry
from kforge.errors import ModelOutputError, ValidationError
from kforge.frames import (
    AgentAction,
    AgentResponse,
    AgentStatus,
    AgentThinking,
    DataEvent,
    ErrorFrame,
    Observation,
    Plan,
    ToolCallFrame,
    ToolResultFrame,
)
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.memory.compaction import journaled_complete
from kforge.rag.grading import grade_results
from kforge.rag.grounded import ANSWER_STYLES, AnswerStyle, write_answer
from kforge.rag.rewrite import fallback_rewrite, normalize_query
from kforge.rag.textcheck import LoopWatch, key_terms
from kforge.rag.types import Chunk, SearchHit
from kforge.tools.base import Tool
from kforge.tools.execution import execute_tool

__all__ = ["DEFAULT_SCOPE", "RouterAgent", "register"]

DEFAULT_SCOPE = "the topics of the user's documents and closely related technical subjects"
_WEB_TOOL_NAMES = ("web_search", "search_web_for_info")
_DECIDE = ModelSettings(temperature=0.1, max_tokens=200)
_ROUTER_ATTEMPTS = 2
_LINKED = 2
"""Documents named by the relevant passages that join them (the second hop)."""
_ACTION_HELP = {
    RETRIEVE: "- retrieve_chunks: search the user's documents; give a search query.",
    WEB_SEARCH: "- web_search: search the web, for recent events or topics the documents lack; "
    "give a search query.",
}


def _positive(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValidationError(f"router agent: '{name}' must be a positive integer (got {value!r})")
    return value


def _flag(args: dict[str, Any], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ValidationError(f"router agent: '{name}' must be true or false (got {value!r})")
    return value


class RouterAgent:
    """Answers one turn of a conversation from documents (and the web, when configured)."""

    agent_type = "router"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self._configure(dict(args or {}))
        self.turns: list[Turn] = turns_from_args(self.args.get("history"))
        self.node = "guardrail"
        self.iteration = 0
        """Tool rounds done (each a routing decision and its execution)."""
        self.route: list[str] = []
        self.queries: list[str] = []
        self.tools_used: list[str] = []
        self.pending: dict[str, Any] | None = None
        self.hits: list[dict[str, Any]] = []
        self.passages: list[dict[str, Any]] = []
        self.router_failures = 0
        self.answer = ""
        self.citations: list[dict[str, Any]] = []
        self.out_of_scope = False
        self.fallback = False
        self.conversational = False
        """A greeting or thanks: answered without searching, and without the fallback note."""
        self.answer_path = ""
        """Which path wrote the answer (extractive, generative, ...), and why, in the result."""
        self.answer_reason = ""

    def _configure(self, args: dict[str, Any]) -> None:
        self.args = args
        question = self.args.get("question", "")
        if not isinstance(question, str) or not question.strip():
            raise ValidationError("the router agent needs a non-empty 'question'")
        self.question = question.strip()
        self.corpus_name: str | None = str(self.args.get("corpus") or "") or None
        self.web = bool(self.args.get("web_search", False))
        self.max_iterations = _positive(self.args, "max_iterations", 3)
        self.k = min(_positive(self.args, "k", 4), MAX_K)
        self.max_tokens = _positive(self.args, "max_tokens", 400)
        self.scope = str(self.args.get("scope") or DEFAULT_SCOPE)
        self.use_guardrail = _flag(self.args, "guardrail", True)
        style = self.args.get("answer")
        if style is not None and style not in ANSWER_STYLES:
            raise ValidationError(
                f"router agent: 'answer' must be one of {', '.join(ANSWER_STYLES)} (got {style!r})"
            )
        self.answer_style: AnswerStyle | None = style

    @property
    def actions(self) -> list[str]:
        return [RETRIEVE, *([WEB_SEARCH] if self.web else [])]

    # -- the graph ----------------------------------------------------------------------------

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.node == "guardrail":
            await self._guardrail(ctx)
        elif self.node == "router":
            await self._route(ctx)
        elif self.node == "executor":
            await self._execute(ctx)
        elif self.node == "grading":
            await self._grade(ctx)
        elif self.node == "generate":
            await self._generate(ctx)
        if self.node != "done":
            return StepOutcome()
        if self.out_of_scope:
            summary = "out of scope: answered politely"
        else:
            summary = f"answered with {len(self.citations)} citation(s)"
        return StepOutcome(True, self.result(), summary)

    def _status(self, ctx: RunContext, step: str, tool: str | None = None) -> None:
        self.route.append(step)
        ctx.emit(
            AgentStatus(
                phase=step,
                step_number=self.iteration,
                max_steps=self.max_iterations,
                current_tool=tool,
                input_tokens=ctx.usage.input_tokens,
                output_tokens=ctx.usage.output_tokens,
            )
        )
        ctx.flush()  # streamed at once, as seed 003's step events are

    def _after_tool_round(self) -> str:
        return "generate" if self.iteration >= self.max_iterations else "router"

    # -- guardrail ----------------------------------------------------------------------------

    async def _guardrail(self, ctx: RunContext) -> None:
        self._status(ctx, "guardrail")
        if "history" not in self.args:
            loaded = await load_session_turns(ctx, self.agent_type)
            if loaded is not None:
                self.turns = loaded
        if not self.use_guardrail:
            self.node = "router"
            return
        verdict = await judge_scope(
            ctx,
            ctx.corpus(self.corpus_name),
            self.question,
            self.turns,
            self.scope,
            ask_model=self._style(ctx) == "generative",
            documents_only=not self.web,
        )
        if verdict.in_scope:
            self.node = "router"
            return
        self._status(ctx, "out_of_scope")
        self.out_of_scope = True
        self._finish(ctx, polite_refusal(self.scope, verdict), achieved=False)

    # -- router -------------------------------------------------------------------------------

    async def _route(self, ctx: RunContext) -> None:
        self._status(ctx, "routing")
        if self.iteration >= self.max_iterations:
            self._plan(ctx, f"{self.max_iterations} tool round(s) done; writing the answer", None)
            self.node = "generate"
            return
        if not self.queries:
            if not key_terms(self._first_query()):
                self.conversational = True
                self._plan(ctx, "a conversational message: nothing to search for", None)
                self.node = "generate"
                return
            self._search(
                ctx, RETRIEVE, self._first_query(), "search the documents for the question"
            )
            return
        if self.passages:
            self._plan(ctx, f"{len(self.passages)} relevant passage(s) found", None)
            self.node = "generate"
            return
        if self._style(ctx) == "extractive":
            query = fallback_rewrite(self.question, self.queries)
            self._search(ctx, RETRIEVE, query, "nothing relevant yet: search with fewer words")
            return
        try:
            response = await ctx.complete(
                self._router_messages(),
                _DECIDE,
                output_schema=router_schema(self.actions),
                purpose="routing",
            )
            decision = RouterDecision.from_response(response, self.actions)
        except ModelOutputError as exc:
            self.router_failures += 1
            ctx.emit(
                ErrorFrame(
                    error_type="invalid_router_decision",
                    recoverable=True,
                    message=f"the router's decision could not be used ({exc}); attempt "
                    f"{self.router_failures} of {_ROUTER_ATTEMPTS}",
                )
            )
            if self.router_failures < _ROUTER_ATTEMPTS:
                return
            # out of attempts: search the documents once, then answer
            action = RETRIEVE if not self.queries else "generate"
            decision = RouterDecision(action, self.question, "fallback after unusable decisions")
        if decision.generates:
            self._plan(ctx, decision.reasoning or "the question can be answered now", None)
            self.node = "generate"
            return
        query = decision.query or self.question
        if normalize_query(query) in {normalize_query(q) for q in self.queries}:
            rewritten = fallback_rewrite(self.question, self.queries)
            ctx.emit(AgentThinking(message=f"'{query}' was already searched; trying '{rewritten}'"))
            query = rewritten
        self._search(ctx, decision.action, query, decision.reasoning or f"search for {query}")

    def _first_query(self) -> str:
        """The user's words: the question, and in a conversation the previous question too, so
        that a follow-up ("what about for detection?") searches within its topic."""
        if self.turns:
            return f"{self.turns[-1].question} {self.question}"
        return self.question

    def _grading_query(self) -> str:
        """What a passage must be about: the question, or with the previous question when the
        question alone names too little ("and why?")."""
        if len(key_terms(self.question)) >= 2 or not self.turns:
            return self.question
        return self._first_query()

    def _search(self, ctx: RunContext, action: str, query: str, reasoning: str) -> None:
        plan = self._plan(ctx, reasoning, action)
        tool = self._tool(ctx, action)
        arguments: dict[str, Any] = {"query": query}
        if action == RETRIEVE:
            arguments["k"] = self.k
        call = ctx.emit(
            ToolCallFrame(
                tool_name=tool.name,
                tool_arguments=arguments,
                reasoning=reasoning,
                iteration=self.iteration + 1,
                plan_frame_id=plan.id,
            )
        )
        self.pending = {
            "action": action,
            "query": query,
            "arguments": arguments,
            "reasoning": reasoning,
            "call_frame_id": call.id,
        }
        self.node = "executor"

    def _router_messages(self) -> list[Message]:
        actions = "\n".join(_ACTION_HELP[a] for a in self.actions)
        parts = [format_history(self.turns)] if self.turns else []
        parts.append(f"Question: {self.question}")
        if self.passages:
            titles = "; ".join(sorted({p["title"] or p["file"] for p in self.passages}))
            parts.append(f"Relevant passages found so far: {len(self.passages)} ({titles}).")
        elif self.queries:
            parts.append("No relevant passages found so far.")
        if self.queries:
            parts.append("Queries already tried: " + "; ".join(self.queries))
        parts.append(f"Tool rounds left: {self.max_iterations - self.iteration}.")
        parts.append('Reply as {"reasoning": "...", "action": "...", "query": "..."}.')
        return [
            Message.system(ROUTER_SYSTEM.format(actions=actions)),
            Message.user("\n".join(parts)),
        ]

    def _plan(self, ctx: RunContext, reasoning: str, action: str | None) -> Plan:
        return ctx.emit(
            Plan(
                goal=self.question,
                reasoning=reasoning,
                observations=tuple(self.queries),
                next_action=AgentAction.RESPOND if action is None else AgentAction.TOOL_CALL,
                iteration=self.iteration,
                max_iterations=self.max_iterations,
            )
        )

    # -- executor -----------------------------------------------------------------------------

    async def _execute(self, ctx: RunContext) -> None:
        pending = self.pending
        if pending is None:  # nothing to run: decide again
            self.node = "router"
            return
        tool = self._tool(ctx, pending["action"])
        self._status(ctx, "executing", tool.name)
        self._status(ctx, "tool_start", tool.name)
        result = await execute_tool(ctx, tool, pending["arguments"], reasoning=pending["reasoning"])
        error = result.text.removeprefix("Error: ") if result.is_error else ""
        result_frame = ctx.emit(
            ToolResultFrame(
                tool_name=tool.name,
                success=not result.is_error,
                result_text=result.summary(2000),
                structured_result=result.structured_content,
                error_message=error[:2000],
                tool_call_frame_id=pending["call_frame_id"],
            )
        )
        self._status(ctx, "tool_end", tool.name)
        ctx.flush()
        self.iteration += 1
        self.queries.append(pending["query"])
        self.tools_used.append(tool.name)
        self.pending = None
        known = {p["id"] for p in self.passages}
        hits = [h for h in passages_from_result(result) if h.chunk.id not in known]
        if hits:
            self.hits = [h.to_dict() for h in hits]
            self.node = "grading"
            return
        content = f"{tool.name} failed: {error[:300]}" if result.is_error else "no new passages"
        ctx.emit(
            Observation(
                content=content,
                goal_achieved=False,
                iteration=self.iteration,
                tool_result_frame_id=result_frame.id,
            )
        )
        self.node = self._after_tool_round()

    def _tool(self, ctx: RunContext, action: str) -> Tool:
        if action == RETRIEVE:
            return retrieve_tool(ctx.corpus(self.corpus_name))
        supplied = {t.name: t for t in service_tools(ctx.services)}
        for name in _WEB_TOOL_NAMES:
            if name in supplied:
                return supplied[name]
        from kforge.tools.builtin import WebSearchTool

        return WebSearchTool()

    # -- grading ------------------------------------------------------------------------------

    async def _grade(self, ctx: RunContext) -> None:
        self._status(ctx, "grading")
        query = self.queries[-1] if self.queries else self.question
        hits = [SearchHit.from_dict(h) for h in self.hits]
        background = format_history(self.turns, max_turns=2)
        lexical = self._style(ctx) == "extractive"
        # graded against what the user asked, not against the query that found them
        graded = await grade_results(
            self._grading_query(),
            hits,
            journaled_complete(ctx, "grading"),
            context=background,
            lexical=lexical,
        )
        relevant = sorted((g for g in graded if g.relevant), key=lambda g: -g.confidence)
        found = [(g.hit.chunk, g.reasoning) for g in relevant]
        if relevant and all(g.hit.retriever != "web" for g in relevant):
            found += await self._linked(ctx, [g.hit.chunk for g in relevant])
        for chunk, reasoning in found:
            record = {**chunk.to_dict(), "location": chunk.location}
            self.passages.append(record)
            ctx.emit(
                DataEvent(
                    name="source.found",
                    payload={
                        "file": record["file"],
                        "location": record["location"],
                        "chunk_id": record["id"],
                        "reasoning": reasoning,
                    },
                )
            )
        ctx.emit(
            Observation(
                content=f"{len(relevant)} of {len(graded)} passages are relevant to {query!r}",
                goal_achieved=bool(relevant),
                iteration=self.iteration,
            )
        )
        self.hits = []
        self.node = self._after_tool_round()

    async def _linked(self, ctx: RunContext, relevant: list[Chunk]) -> list[tuple[Chunk, str]]:
        """Documents the relevant passages name by title: the second hop of a question such as
        "what did the actress who played X do later?". Recorded, like every corpus read."""
        known = {p["source"] for p in self.passages} | {c.source for c in relevant}
        text = " ".join(c.text for c in relevant)

        def linked() -> dict[str, Any]:
            corpus = ctx.corpus(self.corpus_name)
            chunks = corpus.linked_chunks(text, exclude=known, limit=_LINKED)
            return {"chunks": [c.to_dict() for c in chunks]}

        payload = await ctx.recorded("rag.linked", linked)
        chunks = [Chunk.from_dict(c) for c in payload.get("chunks", [])]
        return [(c, f"named by a relevant passage: {c.title}") for c in chunks]

    # -- generation ---------------------------------------------------------------------------

    def _style(self, ctx: RunContext) -> AnswerStyle:
        return self.answer_style or answer_style(ctx.model)

    async def _generate(self, ctx: RunContext) -> None:
        self._status(ctx, "generation")
        passages = [Chunk.from_dict(p) for p in self.passages]
        self.fallback = not passages and not self.conversational
        style = self._style(ctx)
        settings_cap = self.max_tokens

        async def write(messages: list[Message], settings: ModelSettings) -> ModelResponse:
            settings = replace(
                settings, max_tokens=min(settings.max_tokens or settings_cap, settings_cap)
            )
            return await ctx.complete(
                messages, settings, purpose="generation", stream=True, watch=LoopWatch()
            )

        history = format_history(self.turns)
        if passages:
            written = await write_answer(
                self.question, passages, write, style=style, history=history
            )
        else:
            written = await model_only_answer(
                self.question, write if style == "generative" else None, history=history
            )
        self.answer_path, self.answer_reason = written.path, written.reason
        ctx.emit(
            DataEvent(
                name="answer.checked",
                payload={
                    "path": written.path,
                    "reason": written.reason,
                    "dropped": list(written.dropped),
                    "citations": len(written.citations),
                },
            )
        )
        answer = written.text
        if not answer and self.conversational:
            answer = "Hello! Ask me anything about your documents."
        elif not answer:
            searched = "; ".join(f"'{q}'" for q in self.queries) or "nothing"
            answer = f"I found nothing about this in your documents (searched: {searched})."
        elif self.fallback:
            answer = f"{FALLBACK_NOTE}\n\n{answer}"
        self.citations = [c.to_dict() for c in written.citations]
        self._finish(ctx, answer, achieved=not self.fallback)

    def _finish(self, ctx: RunContext, answer: str, *, achieved: bool) -> None:
        self.answer = answer
        self.node = "done"
        ctx.emit(
            AgentResponse(
                response_text=answer,
                goal_achieved=achieved,
                iterations_used=self.iteration,
                tools_called=tuple(self.tools_used),
                reasoning_trace=" → ".join(self.route),
            )
        )

    # -- state --------------------------------------------------------------------------------

    def result(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "citations": list(self.citations),
            "out_of_scope": self.out_of_scope,
            "fallback": self.fallback,
            "answer_path": self.answer_path,
            "answer_reason": self.answer_reason,
            "queries": list(self.queries),
            "route": list(self.route),
            "iterations": self.iteration,
            "history_turns": len(self.turns),
        }

    def partial_result(self) -> dict[str, Any]:
        return self.result()

    _STATE = (
        "node",
        "iteration",
        "route",
        "queries",
        "tools_used",
        "pending",
        "hits",
        "passages",
        "router_failures",
        "answer",
        "citations",
        "out_of_scope",
        "fallback",
        "conversational",
        "answer_path",
        "answer_reason",
    )

    def get_state(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self._STATE}
        return {**state, "args": self.args, "turns": [t.to_dict() for t in self.turns]}

    def restore_state(self, state: dict[str, Any]) -> None:
        self._configure(dict(state.get("args", self.args)))
        for name in self._STATE:
            if name in state:
                setattr(self, name, state[name])
        self.turns = turns_from_args(state.get("turns"))


def register(registry: AgentRegistry = default_registry) -> None:
    """Register the ``router`` agent type (does nothing when it is already registered)."""
    if RouterAgent.agent_type not in registry:
        registry.register(RouterAgent.agent_type, RouterAgent)
