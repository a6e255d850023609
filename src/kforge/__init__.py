"""Knowledge Forge: durable, explainable, human-steerable agents.

Public names are imported lazily, so ``import kforge`` stays fast; ``kforge.X`` loads X's module
the first time it is used.
"""

from __future__ import annotations

from kforge.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AppendOnlyList": "kforge.engine.append_only",
    "Checkpoint": "kforge.engine.phases",
    "CheckpointKind": "kforge.frames",
    "ForgeAgent": "kforge.engine.agent",
    "ForgeError": "kforge.errors",
    "Frame": "kforge.frames",
    "MemoryStore": "kforge.store.memory",
    "Message": "kforge.llm.types",
    "Model": "kforge.llm.base",
    "ModelResponse": "kforge.llm.types",
    "ModelSettings": "kforge.llm.types",
    "PhaseContext": "kforge.engine.phases",
    "PostgresStore": "kforge.store.postgres",
    "PhaseGraph": "kforge.engine.phases",
    "PhaseTransition": "kforge.engine.phases",
    "RunContext": "kforge.engine.run_context",
    "RunLimits": "kforge.engine.limits",
    "RunRecord": "kforge.store.base",
    "RunStatus": "kforge.store.base",
    "Runtime": "kforge.runtime.runtime",
    "SQLiteStore": "kforge.store.sqlite",
    "Services": "kforge.engine.services",
    "ScriptedModel": "kforge.llm.testing.scripted",
    "StepAgent": "kforge.engine.agent",
    "StepOutcome": "kforge.engine.agent",
    "Store": "kforge.store.combined",
    "RunLog": "kforge.store.base",
    "PassageStore": "kforge.store.passages",
    "ToolCall": "kforge.llm.types",
    "Tool": "kforge.tools.base",
    "ToolAnnotations": "kforge.tools.annotations",
    "ToolRegistry": "kforge.tools.registry",
    "ToolResult": "kforge.tools.result",
    "Usage": "kforge.llm.types",
    "ApprovalPolicy": "kforge.tools.approval",
    "execute_tool": "kforge.tools.execution",
    "tool": "kforge.tools.decorator",
    "explain_run": "kforge.explain",
    "FunctionModel": "kforge.llm.testing.function",
    "LocalModel": "kforge.llm.local",
    "OpenAICompatibleModel": "kforge.llm.openai.compat",
    "TestModel": "kforge.llm.testing.testmodel",
    "ToolSpec": "kforge.llm.types",
    "get_model": "kforge.llm.registry",
    "PriceTable": "kforge.memory.tokens",
    "TokenBudget": "kforge.memory.tokens",
    "format_usage": "kforge.memory.tokens",
    "PromptTemplate": "kforge.prompts",
    "load_template": "kforge.prompts",
    "BuildAgent": "kforge.agents.build.agent",
    "ReactAgent": "kforge.agents.react",
    "ResearchAgent": "kforge.agents.research.agent",
    "RouterAgent": "kforge.agents.router",
    "TreeAgent": "kforge.agents.tree",
    "QueryUserHandler": "kforge.runtime.runtime",
    "Intervention": "kforge.runtime.interventions",
    "InterventionAction": "kforge.runtime.interventions",
    "UnderstandAgent": "kforge.agents.understand.agent",
    "Corpus": "kforge.rag.corpus",
    "ingest_folder": "kforge.rag.ingest",
    "agentic_search": "kforge.rag.agentic",
    "register_agent": "kforge.agents.builtin",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
