"""The ``tree`` agent: the six-step assistant whose subquestions are subagents (child runs).

Steps, one or more durable runner steps each: 1 ``clarify`` (a blocking question when the
request is ambiguous), 2 ``questions`` (at most 3 rounds of blocking questions; a declined one
ends them), 3 ``subquestions`` (0-4 child tree runs started in parallel, within the depth
limit), 4 ``execute`` (retrieval when a corpus is given, tools such as the sandboxed ``python``
with ``fork``/``wait``), 5 ``check`` (the intervention check, and the subagents' results),
6 ``summary`` (main answer plus each subagent's result, one last question only if
uncertainties remain). Interventions reach the agent between steps (``intervene``).
What it asks a person and hands to a subagent is checked first (``questions``): only real
questions about something not yet given, no subagent restating its parent, and a request that
names its parts split into them when the model's split is unusable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from kforge import jsoncodec
from kforge.agents.common.evidence import gather_evidence
from kforge.agents.common.writing import write_grounded
from kforge.agents.decisions import structured
from kforge.agents.results import AgentResult, TreeResult, upgrade_citations
from kforge.agents.tree.arguments import MAX_SUBQUESTIONS, TreeArgs
from kforge.agents.tree.prompts import (
    CLARIFY_PROMPT,
    EXECUTE_PROMPT,
    MISSING_PROMPT,
    RESOLVE_PROMPT,
    Clarity,
    MissingInfo,
    Resolution,
    Subquestions,
    subquestions_prompt,
)
from kforge.agents.tree.questions import (
    adds_to,
    asked_question,
    covers,
    explicit_parts,
    new_terms,
    restates,
    same_task,
    task_text,
)
from kforge.agents.tree.state import MainAnswer, TreeState
from kforge.agents.tree.subagents import Steered, TreeSpawner, collect
from kforge.agents.tree.summary import compose_summary, uncertainties
from kforge.effects import Effect
from kforge.engine.agent import StepOutcome
from kforge.engine.arguments import parse_arguments
from kforge.engine.run_context import RunContext
from kforge.errors import ConfigurationError, ValidationError
from kforge.frames import AgentSpeaking, AgentThinking, DataEvent, Frame, PhaseChanged, new_id
from kforge.llm.base import answer_style
from kforge.llm.types import Message, ModelSettings, ToolCall
from kforge.rag.compose import Segment
from kforge.rag.grounded import GENERATE_SYSTEM, number_segments
from kforge.rag.textcheck import cut_loop

__all__ = ["STEPS", "TreeAgent", "TreeSpawner"]

STEPS = ("clarify", "questions", "subquestions", "execute", "check", "summary")
DECISION = ModelSettings(temperature=0.0, max_tokens=200)
EXECUTION = ModelSettings(temperature=0.2, max_tokens=400)
_CONTINUE: StepOutcome[TreeResult] = StepOutcome()
_CHECKED = "tree.intervention_check"


def _never() -> bool:
    return False


def _replayed(started: Frame | None) -> bool:
    return True


_CHECKED_FIRST: Effect[bool] = Effect(name=_CHECKED, record=None, starts=True, when=_never)
"""Steps recorded in the earlier order (the check before the results) are replayed so."""


_Reply = TypeVar("_Reply")


class TreeAgent:
    agent_type = "tree"
    result_type: ClassVar[type[AgentResult]] = TreeResult

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args: dict[str, Any] = dict(args or {})
        self.params = parse_arguments(TreeArgs, self.args, agent=self.agent_type)
        if not self.params.prompt.strip():
            raise ValidationError("the tree agent needs a non-empty 'prompt'")
        self.state = TreeState(prompt=self.params.prompt.strip())
        if not self.params.clarify:
            self.state.stage = "questions"

    # -- the runner's interface ------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        saved: dict[str, Any] = jsoncodec.to_builtins(self.state)
        return saved

    def restore_state(self, state: dict[str, Any]) -> None:
        saved = {"prompt": self.params.prompt.strip(), **state}
        main = saved.get("main")
        if isinstance(main, dict):  # saved by an earlier version: {} for none, old citations
            saved["main"] = upgrade_citations(main) if main else None
        self.state = jsoncodec.convert(saved, TreeState)

    def partial_result(self) -> TreeResult:
        return self.result(partial=True)

    def child_run(self, prompt: str) -> tuple[str, dict[str, Any]]:
        """What ``fork(prompt)`` from this agent's code starts: a tree agent one level down."""
        if self.params.depth >= self.params.max_depth:
            raise ValidationError(
                f"fork(): this agent is at depth {self.params.depth}, the tree's depth limit "
                f"({self.params.max_depth}); do the work here instead"
            )
        return self.agent_type, self._child_args(prompt)

    def intervene(self, ctx: RunContext, action: str, content: str) -> None:
        """A person's modify or comment, taken between steps."""
        state = self.state
        if action == "comment":
            state.comments.append(content)
            ctx.emit(AgentThinking(message=f"User comment: {content[:200]}"))
            if state.stage in ("check", "summary") and state.main and not self.params.corpus:
                self._answer_again(ctx, content)
            return
        if action != "modify":
            return
        state.prompt = content
        state.modifications.append(content)
        ctx.emit(AgentThinking(message=f"Re-planning from {state.stage} with new instructions"))
        if state.stage in ("execute", "check", "summary"):
            state.main, state.retrieved, state.messages, state.tool_rounds = None, False, [], 0
            state.resolved = False
            self._goto(ctx, "execute", "modified by user")

    def _answer_again(self, ctx: RunContext, note: str) -> None:
        """A comment that came after the main answer was written: write it again with the
        note (one more turn of the tool conversation, whose calls are not made again)."""
        state = self.state
        if state.messages:
            state.messages.append(Message.user(f"Note from the user: {note}").to_dict())
        else:
            state.main = None
        state.resolved = False
        self._goto(ctx, "execute", "comment from user")

    async def step(self, ctx: RunContext) -> StepOutcome[TreeResult]:
        stage = _STAGES.get(self.state.stage)
        if stage is None:  # "summary": the step that ends the run
            return await self._summary(ctx)
        await stage(self, ctx)
        return _CONTINUE

    # -- the six steps ---------------------------------------------------------------------

    async def _clarify(self, ctx: RunContext) -> None:
        decision = await self._decide(ctx, CLARIFY_PROMPT, Clarity, "tree.clarify")
        question = self._usable(decision.question) if decision.ambiguous else ""
        if question:
            await self._ask(ctx, question, "clarify")
        self._goto(ctx, "questions", "clarified")

    async def _questions(self, ctx: RunContext) -> None:
        state = self.state
        if state.rounds < self.params.max_question_rounds and not state.questions_done:
            decision = await self._decide(ctx, MISSING_PROMPT, MissingInfo, "tree.questions")
            state.rounds += 1
            question = self._usable(decision.question) if decision.missing else ""
            if question and not new_terms(question, self._request()):
                question = ""  # it asks for nothing the request and the answers do not say
            if not question or await self._ask(ctx, question, "questions") is None:
                state.questions_done = True
            if not state.questions_done and state.rounds < self.params.max_question_rounds:
                return
        self._goto(ctx, "subquestions", "nothing more to ask")

    async def _subquestions(self, ctx: RunContext) -> None:
        params = self.params
        if params.depth < params.max_depth and params.max_subquestions > 0:
            prompt = subquestions_prompt(params.max_subquestions)
            decision = await self._decide(ctx, prompt, Subquestions, "tree.subquestions")
            chosen, split = self._pick_subquestions(decision.subquestions), "model"
            parts = explicit_parts(self.state.prompt, params.max_subquestions)
            if parts and not covers(chosen, parts):  # the model left out a part the user named
                chosen, split = parts, "parts"
            if chosen:
                ctx.emit(DataEvent(name="tree.split", payload={"by": split, "parts": chosen}))
                await self._spawn(ctx, chosen)
        self._goto(ctx, "execute", f"{len(self.state.subagents)} subagent(s) running")

    async def _execute(self, ctx: RunContext) -> None:
        state = self.state
        await self._keep_subagents_working(ctx)
        if self.params.corpus and not state.retrieved:
            await self._retrieve(ctx)
            state.retrieved = True
            if self._tools_offered(ctx):
                return
        elif self._tools_offered(ctx):
            if not await self._tool_round(ctx):
                return
        elif not state.main:
            state.main = await self._model_answer(ctx)
        self._goto(ctx, "check", "main execution done")

    async def _check(self, ctx: RunContext) -> None:
        """The intervention check: what people said is applied between steps (``intervene``);
        here the agent collects its subagents' results and records what it works with. An
        intervention sent while it waits for them ends this step at once, so it is taken now
        (not when they end), and the next step checks again. Nothing is recorded before the
        results: a step parked until they end leaves nothing to replay, so an intervention
        that wakes it is applied before it runs again."""
        state = self.state
        # a step recorded in the earlier order (the check before the results), re-executed
        checked_first = await ctx.step(_CHECKED_FIRST, _replayed, self._checked_frame())
        if state.subagents:
            try:
                recorded = await ctx.step(
                    "tree.subagents.results",
                    lambda: collect(self._spawner(ctx), ctx, state.subagents),
                )
            except Steered:
                return
            # in the order they were started; a forked tree's children have ids of their own
            results = recorded["results"]
            state.subagents = [{**c, **r} for c, r in zip(state.subagents, results, strict=False)]
        if not checked_first:
            self._checked(ctx)
        self._goto(ctx, "summary", "subagents collected")

    def _checked(self, ctx: RunContext) -> None:
        ctx.emit(self._checked_frame())

    def _checked_frame(self) -> DataEvent:
        state = self.state
        payload = {"comments": state.comments, "modified": bool(state.modifications)}
        return DataEvent(name=_CHECKED, payload=payload)

    async def _summary(self, ctx: RunContext) -> StepOutcome[TreeResult]:
        state = self.state
        doubts = uncertainties(state)
        if doubts and not state.resolved:
            listed = "\n".join(f"- {d}" for d in doubts)
            decision = await self._decide(
                ctx, RESOLVE_PROMPT, Resolution, "tree.resolve", extra=f"Uncertainties:\n{listed}"
            )
            question = self._usable(decision.question) if decision.ask else ""
            if question:
                state.note = await self._ask(ctx, question, "summary", final=True) or ""
        state.resolved = True
        result = self.result(partial=False)
        ctx.emit(AgentSpeaking(text=result.answer))
        ended = sum(1 for c in state.subagents if c.get("status") != "completed")
        summary = f"answered with {len(state.subagents)} subagent(s)" + (
            f", {ended} of them without an answer" if ended else ""
        )
        return StepOutcome(True, result, summary)

    # -- parts -----------------------------------------------------------------------------

    def _goto(self, ctx: RunContext, stage: str, reason: str) -> None:
        ctx.emit(PhaseChanged(from_phase=self.state.stage, to_phase=stage, reason=reason))
        self.state.stage = stage

    def _request(self) -> str:
        state = self.state
        parts = [f"Request: {state.prompt}"]
        parts += [f"Q: {c['question']}\nA: {c['answer']}" for c in state.clarifications]
        parts += [f"Note from the user: {c}" for c in state.comments]
        return "\n\n".join(parts)

    async def _decide(
        self,
        ctx: RunContext,
        system: str,
        output_type: type[_Reply],
        purpose: str,
        *,
        extra: str = "",
    ) -> _Reply:
        user = self._request() + (f"\n\n{extra}" if extra else "")
        messages = [Message.system(system), Message.user(user)]
        return await structured(ctx, messages, DECISION, output_type, purpose)

    def _usable(self, text: str) -> str:
        """``text`` as a question worth asking, or "": not a question, the request again (small
        models write both), or a question already asked."""
        question = asked_question(text)
        state = self.state
        if not question or restates(question, state.prompt):
            return ""
        before = [c["question"] for c in state.clarifications] + state.declined
        if any(restates(question, earlier) for earlier in before):
            return ""
        return question

    async def _ask(
        self, ctx: RunContext, question: str, step: str, *, final: bool = False
    ) -> str | None:
        """Ask the user; their answer, or None when they declined (remembered as an
        uncertainty unless it is the ``final`` question)."""
        answer = await ctx.ask(
            question,
            kind="question",
            payload={"step": step, "decline": 'answer {"declined": true} or an empty text'},
        )
        text = str(answer.get("text") or "").strip()
        if answer.get("declined") or not text:
            if not final:
                self.state.declined.append(question)
            return None
        self.state.clarifications.append({"question": question, "answer": text})
        return text

    def _pick_subquestions(self, proposed: list[str]) -> list[str]:
        """The model's subquestions that are usable tasks adding to this agent's request (its
        parent's, for the subagent), none restating another."""
        request = self.state.prompt
        parts = explicit_parts(request, MAX_SUBQUESTIONS)
        chosen: list[str] = []
        for text in proposed:
            task = task_text(text)
            if not task or not adds_to(task, request, parts):
                continue
            if not any(same_task(task, c, request) for c in chosen):
                chosen.append(task)
        return chosen[: self.params.max_subquestions]

    def _child_args(self, prompt: str) -> dict[str, Any]:
        params = self.params
        args: dict[str, Any] = {
            "prompt": prompt,
            "depth": params.depth + 1,
            "max_depth": params.max_depth,
            "max_subquestions": params.max_subquestions,
            "max_question_rounds": params.max_question_rounds,
            "max_tool_rounds": params.max_tool_rounds,
            "clarify": params.clarify,
            "k": params.k,
        }
        for name in ("corpus", "tools", "answer"):
            value = getattr(params, name)
            if value is not None:
                args[name] = value
        return args

    def _spawner(self, ctx: RunContext) -> TreeSpawner:
        spawner = ctx.services.agents
        if not isinstance(spawner, TreeSpawner):
            raise ConfigurationError(
                "the tree agent starts its subagents as child runs: run it with kforge.Runtime "
                "(Services.agents must offer start and settle)"
            )
        return spawner

    async def _spawn(self, ctx: RunContext, prompts: list[str]) -> None:
        """Start one child run per subquestion. Their ids are recorded before any starts, so a
        step re-executed after a crash starts each child once."""
        spawner = self._spawner(ctx)
        planned = await ctx.step(
            "tree.subagents.planned",
            lambda: {"subagents": [{"id": new_id(), "prompt": p} for p in prompts]},
        )
        ctx.flush()
        for child in planned["subagents"]:
            await spawner.start(
                self.agent_type, self._child_args(child["prompt"]), run_id=child["id"]
            )
        self.state.subagents = [dict(c) for c in planned["subagents"]]
        ctx.emit(DataEvent(name="tree.subagents", payload={"subagents": self.state.subagents}))

    async def _keep_subagents_working(self, ctx: RunContext) -> None:
        """Subagents a crash left behind, or forked with this agent, work again alongside its
        main execution, as they did before (not only once it waits for them)."""
        if self.state.subagents:
            spawner = self._spawner(ctx)
            for child in self.state.subagents:
                args = self._child_args(child["prompt"])
                await spawner.start(self.agent_type, args, run_id=child["id"])

    def _tools_offered(self, ctx: RunContext) -> bool:
        return bool(self.params.tools) and answer_style(ctx.model) == "generative"

    async def _retrieve(self, ctx: RunContext) -> None:
        question = self.state.prompt
        args = {"question": question, "corpus": self.params.corpus, "k": self.params.k}
        style = self.params.answer or answer_style(ctx.model)
        evidence = await gather_evidence(ctx, question, args, lexical=style == "extractive")
        chunks = [p.as_chunk() for p in evidence.passages]
        written = await write_grounded(
            ctx,
            question,
            chunks,
            style=style,
            purpose="tree.answer",
            settings=EXECUTION,
            system=GENERATE_SYSTEM,
        )
        segments = [Segment(s["text"], s["source"]) for s in written.segments]
        text, citations, _ = number_segments(segments, chunks)
        self.state.main = MainAnswer(
            text=text or evidence.disclaimer or "The documents say nothing about this.",
            citations=tuple(citations),
            path=written.path,
        )

    async def _tool_round(self, ctx: RunContext) -> bool:
        """One model call with the tools; True once the model answered without a tool."""
        from kforge.agents.react import resolve_tools
        from kforge.tools.execution import execute_call

        state = self.state
        tools = resolve_tools(ctx.services, self.params.tools, agent=self.agent_type)
        if not state.messages:
            found = state.main.text if state.main else ""
            context = f"\n\nFrom the documents: {found}" if found else ""
            state.messages = [
                Message.system(EXECUTE_PROMPT).to_dict(),
                Message.user(self._request() + context).to_dict(),
            ]
        messages = Message.from_dicts(state.messages)
        last = state.tool_rounds >= self.params.max_tool_rounds
        # the last round offers no tool, so its text is the answer: it streams as it is
        # written (a reply that may be a tool call does not: it could be a call's JSON)
        response = await ctx.complete(
            messages,
            EXECUTION,
            tools=() if last else tools.specs(),
            purpose="tree.execute",
            stream=last,
        )
        if not response.tool_calls or last:
            text, _ = cut_loop(response.text)
            before = state.main or MainAnswer(text="")
            state.main = replace(before, text=text.strip() or before.text, path="tools")
            return True
        state.messages.append(Message.assistant(response.text, response.tool_calls).to_dict())
        for call in response.tool_calls:
            call_id = call.id or new_id()
            result = await execute_call(ctx, tools, ToolCall(call.name, call.arguments, call_id))
            ctx.flush()
            state.messages.append(Message.tool(result.text[:4000], call_id, call.name).to_dict())
        state.tool_rounds += 1
        return False

    async def _model_answer(self, ctx: RunContext) -> MainAnswer:
        from kforge.agents.common.answer import model_only_answer

        async def write(messages: list[Message], settings: ModelSettings) -> Any:
            # streamed: listeners see the answer as it is written
            return await ctx.complete(messages, settings, purpose="tree.answer", stream=True)

        style = self.params.answer or answer_style(ctx.model)
        answer = await model_only_answer(self._request(), write if style == "generative" else None)
        text = answer.text or "No documents were given and this model does not answer alone."
        return MainAnswer(text=text, path=answer.path)

    def result(self, *, partial: bool = False) -> TreeResult:
        state = self.state
        text = compose_summary(state)
        failed = [c for c in state.subagents if c.get("status") not in (None, "completed")]
        return TreeResult(
            answer=text,
            main_answer=state.main.text if state.main else "",
            citations=state.main.citations if state.main else (),
            subagents=tuple(dict(c) for c in state.subagents),
            metadata={
                "depth": self.params.depth,
                "step": state.stage,
                "clarifications": list(state.clarifications),
                "declined": list(state.declined),
                "comments": list(state.comments),
                "modifications": list(state.modifications),
                "answer_path": state.main.path if state.main else "",
                "partial": partial or bool(failed),
                "note": state.note,
            },
        )


_STAGES: dict[str, Callable[[TreeAgent, RunContext], Awaitable[None]]] = {
    "clarify": TreeAgent._clarify,
    "questions": TreeAgent._questions,
    "subquestions": TreeAgent._subquestions,
    "execute": TreeAgent._execute,
    "check": TreeAgent._check,
}
"""What each stage does; each sets ``state.stage`` to the next (``summary`` ends the run)."""
