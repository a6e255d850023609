"""The token loop of the local provider: sample, check the grammar lazily, stream, stop, cancel.

llama-cpp-python filters the whole vocabulary through the grammar before every token. Here the
token is sampled first and only that one token is checked against the grammar; the vocabulary
is filtered only when the check fails (as llama.cpp's own sampler does). Output is the same
language, at close to unconstrained speed. Prompt tokens already in the KV cache are reused.
"""

from __future__ import annotations

import codecs
import ctypes
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kforge.errors import ModelError

__all__ = ["DecodeResult", "GenerationCancelled", "SamplingParams", "decode"]


class GenerationCancelled(Exception):
    """The caller stopped waiting; generation ended early."""


@dataclass(frozen=True, slots=True)
class SamplingParams:
    max_tokens: int
    temperature: float
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    seed: int = 0
    """Seeds the sampler: the same prompt, parameters and seed give the same tokens."""
    stop: tuple[str, ...] = ()
    repeat_penalty: float = 1.0
    """Above 1.0, tokens among the last 64 are made less likely (breaks repetition loops)."""


@dataclass(frozen=True, slots=True)
class DecodeResult:
    text: str
    completion_tokens: int
    finish_reason: str


def _chain(params: SamplingParams, n_vocab: int) -> Any:
    from llama_cpp import _internals

    chain: Any = cast(Any, _internals).LlamaSampler()
    if params.repeat_penalty != 1.0:
        chain.add_penalties(n_vocab, 64, params.repeat_penalty, 0.0, 0.0)
    if params.temperature <= 0:
        chain.add_greedy()
    else:
        chain.add_top_k(params.top_k)
        chain.add_typical(1.0, 1)
        chain.add_top_p(params.top_p, 1)
        chain.add_min_p(params.min_p, 1)
        chain.add_temp(params.temperature)
        chain.add_dist(params.seed & 0xFFFFFFFF)
    return chain


def _eval_prompt(llm: Any, prompt: Sequence[int]) -> None:
    """Evaluate ``prompt``, reusing the longest prefix already in the KV cache."""
    import numpy as np

    cached = int(llm.n_tokens)
    prefix = 0
    if cached > 0:
        limit = min(cached, len(prompt))
        differs = np.nonzero(llm.input_ids[:limit] != np.asarray(prompt[:limit], dtype=np.intc))[0]
        prefix = int(differs[0]) if len(differs) else limit
    prefix = min(prefix, len(prompt) - 1)  # the last prompt token is re-run for fresh logits
    if prefix > 0 and not llm._ctx.kv_cache_seq_rm(-1, prefix, -1):
        prefix = 0
    if prefix == 0:
        llm.reset()
    llm.n_tokens = prefix
    llm.eval(list(prompt[prefix:]))


def _holdback(text: str, stops: Sequence[str]) -> int:
    """Length of the longest end of ``text`` that could begin a stop string."""
    best = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), best, -1):
            if text.endswith(stop[:size]):
                best = size
                break
    return best


class _Grammar:
    """A llama.cpp grammar sampler checked one token at a time."""

    def __init__(self, llm: Any, grammar: str) -> None:
        from llama_cpp import llama_cpp as C

        self._c = C
        self._sampler = C.llama_sampler_init_grammar(
            llm._model.vocab, grammar.encode("utf-8"), b"root"
        )
        if not self._sampler:
            raise ModelError(
                "llama.cpp cannot use the grammar built from this JSON Schema; simplify the schema"
            )
        self._one: Any = C.llama_token_data(0, 0.0, 0.0)
        self._single = C.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False
        )

    def allows(self, token: int) -> bool:
        self._one.id = token
        self._one.logit = 1.0
        self._single.size = 1
        self._single.selected = -1
        self._c.llama_sampler_apply(self._sampler, ctypes.byref(self._single))
        return bool(self._one.logit != -math.inf)

    def restrict(self, candidates: Any) -> None:
        self._c.llama_sampler_apply(self._sampler, ctypes.byref(candidates))

    def accept(self, token: int) -> None:
        self._c.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        self._c.llama_sampler_free(self._sampler)


def decode(
    llm: Any,
    prompt: Sequence[int],
    params: SamplingParams,
    *,
    grammar: str | None,
    cancel: threading.Event,
    on_text: Callable[[str], None] | None = None,
    candidates: Any = None,
) -> DecodeResult:
    """Generate from ``prompt`` on ``llm`` (a ``llama_cpp.Llama``); blocking."""
    import numpy as np
    from llama_cpp import llama_cpp as C
    from llama_cpp._internals import LlamaTokenDataArray

    n_vocab = int(llm.n_vocab())
    chain = _chain(params, n_vocab)
    constraint = _Grammar(llm, grammar) if grammar else None
    pool: Any = candidates
    if constraint is not None and pool is None:
        pool = LlamaTokenDataArray(n_vocab=n_vocab)
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    vocab = llm._model.vocab
    text = ""
    emitted = 0
    count = 0
    finish = "length"
    try:
        _eval_prompt(llm, prompt)
        while count < params.max_tokens:
            if cancel.is_set():
                raise GenerationCancelled()
            token = int(chain.sample(llm._ctx, -1))
            if constraint is not None:
                if not constraint.allows(token):
                    logits = np.ctypeslib.as_array(
                        C.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(n_vocab,)
                    )
                    pool.copy_logits(logits)
                    constraint.restrict(pool.candidates)
                    C.llama_sampler_apply(chain.sampler, ctypes.byref(pool.candidates))
                    selected = int(pool.candidates.selected)
                    if selected < 0 or pool.candidates_data.logit[selected] == -math.inf:
                        raise ModelError(
                            "the grammar allows no next token; the schema may be contradictory"
                        )
                    token = int(pool.candidates_data.id[selected])
                constraint.accept(token)
            if C.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            count += 1
            before = len(text)
            text += utf8.decode(llm.detokenize([token]))
            cut = _first_stop(text, params.stop, before)
            if cut is not None:
                text = text[:cut]
                finish = "stop"
                break
            if on_text is not None:
                safe = len(text) - _holdback(text, params.stop)
                if safe > emitted:
                    on_text(text[emitted:safe])
                    emitted = safe
            if count < params.max_tokens:
                llm.eval([token])
        text += utf8.decode(b"", final=True)
        if on_text is not None and len(text) > emitted:
            on_text(text[emitted:])
        return DecodeResult(text=text, completion_tokens=count, finish_reason=finish)
    finally:
        chain.close()
        if constraint is not None:
            constraint.close()


def _first_stop(text: str, stops: Sequence[str], start: int) -> int | None:
    found: int | None = None
    for stop in stops:
        index = text.find(stop, max(0, start - len(stop)))
        if index != -1 and (found is None or index < found):
            found = index
    return found
