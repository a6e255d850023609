"""The ``router`` agent: guardrail → router ⇄ executor → grading → generate.

One durable step per node. The guardrail refuses what the documents have nothing on and ends;
the first tool round always searches the documents with the user's own words; later rounds
follow a typed ``RouterDecision`` (a tool and a search query, or ``generate``) informed by the
conversation so far; grading keeps only the passages graded relevant; generation writes the
answer from them with ``kforge.rag.grounded`` (extractive for small models, checked generation
otherwise), and its ``[n]`` markers are the numbers of the answer's own Sources. Each step emits
``agent.status`` frames named guardrail, out_of_scope, routing, executing, tool_start,
tool_end, grading and generation.

Args: ``RouterArgs`` (``state.py``); ``question`` is required. A question comparing two items
also searches each item on its own, beyond ``max_iterations``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, ClassVar

from kforge import jsoncodec
from kforge.agents.common.answer import FALLBACK_NOTE, model_only_answer, short_answer
from kforge.agents.conversation import (
    Turn,
    format_history,
    load_session_turns,
    search_question,
    turns_from_args,
)
from kforge.agents.decisions import structured
from kforge.agents.results import AgentResult, CitedAnswer, upgrade_citations
from kforge.agents.router.grading import GradingNode
from kforge.agents.router.guardrail import judge_scope, polite_refusal, scope_evidence
from kforge.agents.router.prompts import RouterDecision, router_reply, router_system
from kforge.agents.router.state import RouterArgs, RouterState
from kforge.agents.router.tools import (
    ACTION_HELP,
    MAX_K,
    RETRIEVE,
    WEB_SEARCH,
    passages_from_result,
    retrieve_tool,
)
from kforge.engine.agent import StepOutcome
from kforge.engine.arguments import parse_arguments
from kforge.engine.run_context import RunContext
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
)
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.rag.acronyms import expand_acronyms
from kforge.rag.focus import CorpusStatistics, Focus, question_focus
from kforge.rag.grounded import AnswerStyle, write_answer
from kforge.rag.question import read_question
from kforge.rag.rewrite import fallback_rewrite, normalize_query
from kforge.rag.textcheck import LoopWatch, key_terms
from kforge.rag.types import Chunk
from kforge.tools.base import Tool
from kforge.tools.execution import execute_tool

__all__ = ["DEFAULT_SCOPE", "RouterAgent", "RouterArgs", "RouterState"]

DEFAULT_SCOPE = "the topics of the user's documents and closely related technical subjects"
_WEB_TOOL_NAMES = ("web_search", "search_web_for_info")
_DECIDE = ModelSettings(temperature=0.1, max_tokens=200)
_ROUTER_ATTEMPTS = 2
_WIDER = 2  # times as many passages read after a search found none relevant: the focus is near


class RouterAgent(GradingNode):
    """Answers one turn of a conversation from documents (and the web, when configured)."""

    agent_type = "router"
    result_type: ClassVar[type[AgentResult]] = CitedAnswer

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self._configure(dict(args or {}))
        self.turns: list[Turn] = turns_from_args(self.args.get("history"))
        self.state = RouterState()

    def _configure(self, args: dict[str, Any]) -> None:
        self.args = args
        parsed = parse_arguments(RouterArgs, args, agent=self.agent_type)
        if not parsed.question.strip():
            raise ValidationError("the router agent needs a non-empty 'question'")
        self.question = parsed.question.strip()
        self.corpus_name = parsed.corpus or None
        self.web = parsed.web_search
        self.max_iterations = parsed.max_iterations
        self.k = min(parsed.k, MAX_K)
        self.max_tokens = parsed.max_tokens
        self.scope = parsed.scope or DEFAULT_SCOPE
        self.use_guardrail = parsed.guardrail
        self.answer_style: AnswerStyle | None = parsed.answer

    @property
    def actions(self) -> list[str]:
        return [RETRIEVE, *([WEB_SEARCH] if self.web else [])]

    # -- the graph ----------------------------------------------------------------------------

    async def step(self, ctx: RunContext) -> StepOutcome[CitedAnswer]:
        node = _NODES.get(self.state.node)
        if node is not None:
            await node(self, ctx)
        if self.state.node != "done":
            return StepOutcome()
        if self.state.out_of_scope:
            summary = "out of scope: answered politely"
        else:
            summary = f"answered with {len(self.state.citations)} citation(s)"
        return StepOutcome(True, self.result(), summary)

    def _status(self, ctx: RunContext, step: str, tool: str | None = None) -> None:
        self.state.route.append(step)
        ctx.emit(
            AgentStatus(
                phase=step,
                step_number=self.state.iteration,
                max_steps=self.max_iterations,
                current_tool=tool,
                input_tokens=ctx.usage.input_tokens,
                output_tokens=ctx.usage.output_tokens,
            )
        )
        ctx.flush()  # a person watching sees each node as it starts, not when the step ends

    def _after_tool_round(self) -> str:
        if self.state.passages and self._unsearched_item() is not None:
            return "router"
        return "generate" if self.state.iteration >= self.max_iterations else "router"

    # -- guardrail ----------------------------------------------------------------------------

    async def _guardrail(self, ctx: RunContext) -> None:
        self._status(ctx, "guardrail")
        if "history" not in self.args:
            loaded = await load_session_turns(ctx, self.agent_type)
            if loaded is not None:
                self.turns = loaded
        await self._read_focus(ctx)
        if not self.use_guardrail:
            self.state.node = "router"
            return
        corpus = ctx.corpus(self.corpus_name)
        evidence = await scope_evidence(ctx, corpus, self.state.search_question, self._focus())
        verdict = await judge_scope(
            ctx,
            corpus,
            self.state.search_question,
            self.turns,
            self.scope,
            evidence=evidence,
            ask_model=self._style(ctx) == "generative",
            documents_only=not self.web,
        )
        if verdict.in_scope:
            self.state.node = "router"
            return
        self._status(ctx, "out_of_scope")
        self.state.out_of_scope = self.state.refused = True
        if evidence.nothing:  # no passage holds any focus term: there is nothing to list
            answer = self._focus().refusal([])
        else:
            answer = polite_refusal(self.scope, verdict)
        self._finish(ctx, answer, achieved=False)

    async def _read_focus(self, ctx: RunContext) -> None:
        """Decide what to search (the question, or with the previous one: see
        ``kforge.agents.conversation``) and read its focus in the corpus; recorded, so a
        re-executed step decides as the first one did."""
        corpus = ctx.corpus(self.corpus_name)
        question, turns = self.question, self.turns

        def read() -> dict[str, Any]:
            searched = expand_acronyms(corpus, search_question(corpus, question, turns))
            statistics = CorpusStatistics.of(corpus) if len(corpus) else None
            return {
                "search_question": searched,
                "focus": jsoncodec.to_builtins(question_focus(searched, statistics)),
            }

        payload = await ctx.step("rag.focus", read)
        self.state.search_question = str(payload.get("search_question") or question)
        self.state.focus = dict(payload.get("focus") or {})

    def _focus(self) -> Focus:
        if self.state.focus is None:  # a run saved before focus was read: weigh terms alike
            return question_focus(self.state.search_question or self.question)
        return jsoncodec.convert(self.state.focus, Focus)

    # -- router -------------------------------------------------------------------------------

    async def _route(self, ctx: RunContext) -> None:
        self._status(ctx, "routing")
        item = self._unsearched_item()
        if self.state.passages and item is not None:
            # "the difference between X and Y": each item's own passage, not only the
            # passages that name both (rounds beyond ``max_iterations``, at most two)
            self._search(ctx, RETRIEVE, item, f"search for one of the compared items: {item}")
            return
        if self.state.iteration >= self.max_iterations:
            self._plan(ctx, f"{self.max_iterations} tool round(s) done; writing the answer", None)
            self.state.node = "generate"
            return
        if not self.state.queries:
            if not key_terms(self._first_query()):
                self.state.conversational = True
                self._plan(ctx, "a conversational message: nothing to search for", None)
                self.state.node = "generate"
                return
            self._search(
                ctx, RETRIEVE, self._first_query(), "search the documents for the question"
            )
            return
        if self.state.passages:
            self._plan(ctx, f"{len(self.state.passages)} relevant passage(s) found", None)
            self.state.node = "generate"
            return
        if self._style(ctx) == "extractive":
            query = fallback_rewrite(self.question, self.state.queries)
            why = "nothing relevant yet: search with fewer words, further down"
            self._search(ctx, RETRIEVE, query, why, min(_WIDER * self.k, MAX_K))
            return
        try:
            # one attempt a step: a failed decision is recorded and the next step asks again
            reply = await structured(
                ctx,
                self._router_messages(),
                _DECIDE,
                router_reply(tuple(self.actions)),
                "routing",
                attempts=1,
            )
            decision = RouterDecision.from_reply(reply)
        except ModelOutputError as exc:
            self.state.router_failures += 1
            ctx.emit(
                ErrorFrame(
                    error_type="invalid_router_decision",
                    recoverable=True,
                    message=f"the router's decision could not be used ({exc}); attempt "
                    f"{self.state.router_failures} of {_ROUTER_ATTEMPTS}",
                )
            )
            if self.state.router_failures < _ROUTER_ATTEMPTS:
                return
            # out of attempts: search the documents once, then answer
            action = RETRIEVE if not self.state.queries else "generate"
            decision = RouterDecision(action, self.question, "fallback after unusable decisions")
        if decision.generates:
            self._plan(ctx, decision.reasoning or "the question can be answered now", None)
            self.state.node = "generate"
            return
        query = decision.query or self.question
        if normalize_query(query) in {normalize_query(q) for q in self.state.queries}:
            rewritten = fallback_rewrite(self.question, self.state.queries)
            ctx.emit(AgentThinking(message=f"'{query}' was already searched; trying '{rewritten}'"))
            query = rewritten
        self._search(ctx, decision.action, query, decision.reasoning or f"search for {query}")

    def _unsearched_item(self) -> str | None:
        """For a question comparing or choosing between two items, the first item not yet
        searched for on its own."""
        asked = read_question(self._first_query())
        if asked.kind not in ("comparison", "choice"):
            return None
        searched = {normalize_query(q) for q in self.state.queries}
        return next((o for o in asked.options if normalize_query(o) not in searched), None)

    def _first_query(self) -> str:
        """The user's words: the question, and in a conversation the previous question too when
        the question follows up ("what about for detection?"), so it searches within its topic."""
        return self.state.search_question or self.question

    def _search(self, ctx: RunContext, action: str, query: str, reasoning: str, k: int = 0) -> None:
        plan = self._plan(ctx, reasoning, action)
        self._tool(ctx, action)  # a missing tool fails the decision, not a later step
        arguments: dict[str, Any] = {"query": query}
        if action == RETRIEVE:
            arguments["k"] = k or self.k
        self.state.pending = {
            "action": action,
            "query": query,
            "arguments": arguments,
            "reasoning": reasoning,
            "plan_frame_id": plan.id,
        }
        self.state.node = "executor"

    def _router_messages(self) -> list[Message]:
        actions = "\n".join(ACTION_HELP[a] for a in self.actions)
        parts = [format_history(self.turns)] if self.turns else []
        parts.append(f"Question: {self.question}")
        if self.state.passages:
            titles = "; ".join(sorted({p["title"] or p["file"] for p in self.state.passages}))
            parts.append(f"Relevant passages found so far: {len(self.state.passages)} ({titles}).")
        elif self.state.queries:
            parts.append("No relevant passages found so far.")
        if self.state.queries:
            parts.append("Queries already tried: " + "; ".join(self.state.queries))
        parts.append(f"Tool rounds left: {self.max_iterations - self.state.iteration}.")
        parts.append('Reply as {"reasoning": "...", "action": "...", "query": "..."}.')
        return [
            Message.system(router_system(actions)),
            Message.user("\n".join(parts)),
        ]

    def _plan(self, ctx: RunContext, reasoning: str, action: str | None) -> Plan:
        return ctx.emit(
            Plan(
                goal=self.question,
                reasoning=reasoning,
                observations=tuple(self.state.queries),
                next_action=AgentAction.RESPOND if action is None else AgentAction.TOOL_CALL,
                iteration=self.state.iteration,
                max_iterations=self.max_iterations,
            )
        )

    # -- executor -----------------------------------------------------------------------------

    async def _execute(self, ctx: RunContext) -> None:
        pending = self.state.pending
        if pending is None:  # nothing to run: decide again
            self.state.node = "router"
            return
        tool = self._tool(ctx, pending["action"])
        self._status(ctx, "executing", tool.name)
        self._status(ctx, "tool_start", tool.name)
        # the plan (committed with the decision) names the call, so it is the same id
        # whichever step or process executes it
        plan_id = pending.get("plan_frame_id") or pending.get("call_frame_id") or ""
        call_id = f"call-{plan_id}"
        result = await execute_tool(
            ctx,
            tool,
            pending["arguments"],
            reasoning=pending["reasoning"],
            iteration=self.state.iteration + 1,
            plan_frame_id=plan_id or None,
            call_id=call_id,
        )
        error = result.text.removeprefix("Error: ") if result.is_error else ""
        self._status(ctx, "tool_end", tool.name)
        ctx.flush()
        self.state.iteration += 1
        self.state.queries.append(pending["query"])
        self.state.tools_used.append(tool.name)
        self.state.pending = None
        known = {p["id"] for p in self.state.passages}
        hits = [h for h in passages_from_result(result) if h.chunk.id not in known]
        if hits:
            self.state.hits = [h.to_dict() for h in hits]
            self.state.node = "grading"
            return
        content = f"{tool.name} failed: {error[:300]}" if result.is_error else "no new passages"
        ctx.emit(
            Observation(
                content=content,
                goal_achieved=False,
                iteration=self.state.iteration,
                call_id=call_id,
            )
        )
        self.state.node = self._after_tool_round()

    def _tool(self, ctx: RunContext, action: str) -> Tool:
        if action == RETRIEVE:
            return retrieve_tool(ctx.corpus(self.corpus_name))
        supplied = {t.name: t for t in ctx.services.tool_list()}
        for name in _WEB_TOOL_NAMES:
            if name in supplied:
                return supplied[name]
        from kforge.tools.builtin import WebSearchTool

        return WebSearchTool()

    # -- generation ---------------------------------------------------------------------------

    def _style(self, ctx: RunContext) -> AnswerStyle:
        return self.answer_style or answer_style(ctx.model)

    async def _generate(self, ctx: RunContext) -> None:
        self._status(ctx, "generation")
        passages = [Chunk.from_dict(p) for p in self.state.passages]
        self.state.fallback = not passages and not self.state.conversational
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
            # a small model does not answer alone: the documents do not say
            written = await model_only_answer(
                self.question, write if style == "generative" else None, history=history
            )
        self.state.answer_path, self.state.answer_reason = written.path, written.reason
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
        if not answer and self.state.conversational:
            answer = "Hello! Ask me anything about your documents."
        elif not answer:
            # passages found relevant but holding no sentence to quote come first
            seen = [*passages, *(Chunk.from_dict(c) for c in self.state.closest)]
            answer = self._focus().refusal(self._focus().closest(seen))
            self.state.refused = True
            written = replace(written, citations=())  # a refusal quotes and cites nothing
        elif self.state.fallback:
            answer = f"{FALLBACK_NOTE}\n\n{answer}"
        self.state.citations = list(written.citations)
        # the writer's own short answer when it states one, else the answer's opening line
        self.state.short_answer = written.short_answer or short_answer(answer)
        self._finish(ctx, answer, achieved=not self.state.fallback)

    def _finish(self, ctx: RunContext, answer: str, *, achieved: bool) -> None:
        self.state.answer = answer
        self.state.node = "done"
        ctx.emit(
            AgentResponse(
                response_text=answer,
                goal_achieved=achieved,
                iterations_used=self.state.iteration,
                tools_called=tuple(self.state.tools_used),
                reasoning_trace=" → ".join(self.state.route),
            )
        )

    def result(self) -> CitedAnswer:
        return CitedAnswer(
            question=self.question,
            answer=self.state.answer,
            short_answer=self.state.short_answer if self.state.citations else "",
            refused=self.state.refused,
            citations=tuple(self.state.citations),
            out_of_scope=self.state.out_of_scope,
            fallback=self.state.fallback,
            answer_path=self.state.answer_path,
            answer_reason=self.state.answer_reason,
            queries=tuple(self.state.queries),
            route=tuple(self.state.route),
            iterations=self.state.iteration,
            history_turns=len(self.turns),
        )

    partial_result = result  # the answer so far is the best a limit can keep

    def get_state(self) -> dict[str, Any]:
        state = jsoncodec.to_builtins(self.state)
        return {**state, "args": self.args, "turns": jsoncodec.to_builtins(self.turns)}

    def restore_state(self, state: dict[str, Any]) -> None:
        self._configure(dict(state.get("args", self.args)))
        try:
            self.state = jsoncodec.convert(state, RouterState)
        except ValueError:  # saved by an earlier version: its citations upgraded, then read
            self.state = jsoncodec.convert(upgrade_citations(state), RouterState)
        self.turns = turns_from_args(state.get("turns"))


_NODES: dict[str, Callable[[RouterAgent, RunContext], Awaitable[None]]] = {
    "guardrail": RouterAgent._guardrail,
    "router": RouterAgent._route,
    "executor": RouterAgent._execute,
    "grading": RouterAgent._grade,
    "generate": RouterAgent._generate,
}
"""The graph: what each node does; each sets ``state.node`` to the next one (``done`` ends)."""
