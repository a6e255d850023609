"""A model call's prompt recorded as what changed since an earlier prompt, so that a run's log
grows with the new messages of each call instead of with its whole conversation.

A delta is a list of operations that build the prompt from the earlier one (its *base*):

- ``[start, stop]``: the base's messages ``start`` to ``stop - 1``, unchanged;
- ``{"edit": i, "head": a, "tail": b, "content": text}``: the base's message ``i`` with its
  first ``a`` and last ``b`` characters kept around ``text`` (a system prompt whose grounding
  gained a line, an assistant turn that merged with the next);
- a message as ``Message.to_dict`` writes it (or the frozen record ``Message.from_dict`` read
  it from): a message the base does not have.

A prompt with no base is a delta of new messages only, but for the first call of a resumed
stretch: its base is then the list of message records the stretch restored (``RestoredBase``),
so the history it sends again is copied, not written again. Copies refer to any part of the
base, so a compaction that drops or summarises messages is recorded as the copies of what it
kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kforge.llm.types import Message, records_of

__all__ = ["PromptLog", "RestoredBase", "apply_prompt_delta", "delta_fresh", "prompt_delta"]

_WORTH_EDITING = 64
"""Characters of a base message an edit must keep; below it the message is recorded whole."""


def prompt_delta(base: Sequence[Message], prompt: Sequence[Message]) -> tuple[Any, ...]:
    """The operations that build ``prompt`` from ``base`` (JSON values)."""
    size = len(base)
    if not size:
        # the first call of a stretch (a resumed run's, say) holds its whole conversation:
        # nothing to look up, and the general loop costs three times the messages' encoding.
        # A message with a frozen record (a restored history's) is written as that record.
        return tuple(map(_written, prompt))
    if len(prompt) >= size and _starts_with(prompt, base):
        # a conversation that only grew (the usual case) is found by one comparison in C,
        # which sees the same message objects of the last call and does not compare them
        return ([0, size], *map(_written, prompt[size:]))
    ops: list[Any] = []
    where: dict[tuple[str, str], list[int]] | None = None
    expected = 0  # the base message that would come next if the prompt followed the base
    i = 0
    while i < len(prompt):
        message = prompt[i]
        if expected < len(base) and _same(base[expected], message):
            start: int | None = expected
        else:
            if where is None:
                where = {}
                for j, known in enumerate(base):
                    where.setdefault((known.role, known.content), []).append(j)
            start = _found(where.get((message.role, message.content), ()), base, message, expected)
        if start is not None:
            stop = start
            while i < len(prompt) and stop < len(base) and _same(prompt[i], base[stop]):
                i += 1
                stop += 1
            ops.append([start, stop])
            expected = stop
            continue
        edit = _edit(base[expected], message) if expected < len(base) else None
        if edit is not None:
            ops.append({"edit": expected, **edit})
            expected += 1
        else:
            ops.append(_storable(message.to_dict()))
        i += 1
    return tuple(ops)


def _starts_with(prompt: Sequence[Message], base: Sequence[Message]) -> bool:
    """Whether ``prompt`` begins with ``base``'s messages: the slice is compared as it comes
    (a list with a list, a tuple with a tuple), without copying either side a second time."""
    head = prompt[: len(base)]
    if type(head) is not type(base):
        head = list(head) if isinstance(base, list) else tuple(head)
    return bool(head == base)


def _same(a: Message, b: Message) -> bool:
    return a is b or a == b


def _found(
    indices: Sequence[int], base: Sequence[Message], message: Message, expected: int
) -> int | None:
    """The base message equal to ``message``, preferring the first at or after ``expected``."""
    equal = [j for j in indices if base[j] == message]
    later = [j for j in equal if j >= expected]
    chosen = later or equal
    return chosen[0] if chosen else None


def _edit(before: Message, after: Message) -> dict[str, Any] | None:
    """``after`` as ``before`` with its middle replaced, when only the content differs and the
    edit keeps enough of ``before`` to be worth it."""
    if replace(before, content=after.content) != after:
        return None
    old, new = before.content, after.content
    head = _common_length(old, new, len(old), len(new))
    room = min(len(old), len(new)) - head
    tail = _common_length(old[::-1], new[::-1], room, room) if room else 0
    if head + tail < _WORTH_EDITING:
        return None
    return {"head": head, "tail": tail, "content": _text(new[head : len(new) - tail])}


def _common_length(a: str, b: str, a_len: int, b_len: int) -> int:
    """How many leading characters ``a`` and ``b`` share (at most the shorter length); slices
    compared in C, a binary search rather than a character loop in Python."""
    low, high = 0, min(a_len, b_len)
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _text(value: str) -> str:
    """``value`` as the record can keep it: a lone surrogate (which JSON cannot encode) becomes
    ``?``, one character for one, so the offsets of later edits stay right."""
    if value.isascii():
        return value  # no surrogate, and no copy to find out (a whole history is recorded)
    try:
        value.encode()
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode()
    return value


def _storable(data: dict[str, Any]) -> dict[str, Any]:
    data["content"] = _text(data["content"])
    return data


def apply_prompt_delta(base: Sequence[Message], ops: Sequence[Any]) -> list[Message]:
    """The prompt ``ops`` build from ``base``; ``ValueError`` naming the operation when they do
    not fit it (a base that is not the one they were written against)."""
    prompt: list[Message] = []
    for n, op in enumerate(ops):
        if isinstance(op, list | tuple):
            start, stop = op
            if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop):
                raise ValueError(f"prompt delta operation {n}: bad copy range {op!r}")
            if stop > len(base):
                raise ValueError(
                    f"prompt delta operation {n} copies messages {start}-{stop - 1} of a base "
                    f"prompt of {len(base)} messages"
                )
            prompt.extend(base[start:stop])
        elif isinstance(op, dict) and "edit" in op:
            index, head, tail = op["edit"], op["head"], op["tail"]
            if not 0 <= index < len(base):
                raise ValueError(
                    f"prompt delta operation {n} edits message {index} of a base prompt of "
                    f"{len(base)} messages"
                )
            old = base[index].content
            if head + tail > len(old):
                raise ValueError(
                    f"prompt delta operation {n} keeps {head + tail} characters of a message "
                    f"of {len(old)}"
                )
            content = old[:head] + str(op["content"]) + old[len(old) - tail :]
            prompt.append(replace(base[index], content=content))
        elif isinstance(op, dict) and "role" in op:
            prompt.append(Message.from_dict(op))
        else:
            raise ValueError(f"prompt delta operation {n} is not a copy, an edit or a message")
    return prompt


def delta_fresh(ops: Sequence[Any]) -> list[bool]:
    """For each message the delta builds: True when the delta holds it (new or edited), False
    when it is copied from the base unchanged."""
    fresh: list[bool] = []
    for op in ops:
        if isinstance(op, list | tuple):
            fresh.extend([False] * (op[1] - op[0]))
        else:
            fresh.append(True)
    return fresh


class PromptLog:
    """The last prompt of each conversation (a call ``purpose``) a run sent while this process
    runs it, with the seq of the frame that recorded it: the base of the next call's delta.

    A new stretch starts with the lists of message records its state restored (``restored``):
    the first call of each purpose is recorded as copies of the records it sends again (a
    resumed run's whole history) and the messages it adds, against the list as the state of
    the restored step holds it (``RestoredBase``), or whole when it sends none of them. A
    re-executed step rebuilds the prompts its recorded calls were sent (they may differ from
    what the step would send now) from their deltas.
    """

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, Sequence[Message], int]] = {}
        """Each purpose's last prompt: its frame's seq, a list whose first ``size`` messages
        it was, and ``size`` (the list itself when it only grows, else a copy)."""
        self._restored: list[RestoredBase] = []

    def restored(
        self, step: int, lists: Sequence[tuple[Sequence[str | int], Sequence[Any]]]
    ) -> None:
        """The lists of records at ``path`` in the state of ``step`` that this stretch
        restored (an agent's messages, read back with ``Message.from_dicts``)."""
        self._restored = [
            RestoredBase(step, tuple(path), items, len(items)) for path, items in lists
        ]

    def delta(
        self, purpose: str, prompt: Sequence[Message]
    ) -> tuple[int, tuple[Any, ...], dict[str, Any] | None]:
        """The seq of the base (0: none), the delta from it to ``prompt``, and the restored
        list the delta copies from instead (``RestoredBase.reference``), if any."""
        last = self._last.get(purpose)
        if last is not None:
            seq, held, size = last
            if held is prompt and size and len(prompt) >= size:
                # the list sent last time, which only grows: it begins with that prompt
                return seq, ([0, size], *map(_written, prompt[size:])), None
            return seq, prompt_delta(held if len(held) == size else held[:size], prompt), None
        for base in self._restored:
            ops = base.delta(prompt)
            if ops is not None:
                return 0, ops, base.reference()
        return 0, prompt_delta((), prompt), None

    def sent(
        self, purpose: str, seq: int, prompt: Sequence[Message], *, grows: bool = False
    ) -> None:
        """``prompt`` was sent and recorded by frame ``seq``; ``grows``: it is a list that
        only grows (an ``AppendOnlyList``), kept as it is, not copied."""
        if grows:
            self._last[purpose] = (seq, prompt, len(prompt))
            return
        # a copy of the caller's list (it grows), of the same type as the next call's slice
        held = prompt[:] if isinstance(prompt, list) else tuple(prompt)
        self._last[purpose] = (seq, held, len(held))

    def replayed(
        self,
        purpose: str,
        seq: int,
        base: int,
        ops: Sequence[Any] | None,
        state: dict[str, Any] | None = None,
    ) -> None:
        """Frame ``seq`` recorded a call with this delta: its prompt becomes the base when it
        can be rebuilt, else the purpose starts over."""
        last = self._last.pop(purpose, None)
        if ops is None or (base and (last is None or last[0] != base)):
            return
        start: Sequence[Message] = last[1][: last[2]] if base and last else ()
        if state is not None:
            known = next((r for r in self._restored if r.reference() == state), None)
            if known is None:  # copies of a list this stretch did not restore
                return
            start = known.messages()
        try:
            prompt = apply_prompt_delta(start, ops)
        except (ValueError, KeyError, TypeError):
            return
        self._last[purpose] = (seq, tuple(prompt), len(prompt))


class RestoredBase:
    """A list of message records a stretch restored: ``path`` in the state after ``step``,
    its first ``size`` items (the list grows as the stretch runs)."""

    __slots__ = ("items", "path", "size", "step")

    def __init__(self, step: int, path: tuple[str | int, ...], items: Sequence[Any], size: int):
        self.step, self.path, self.items, self.size = step, path, items, size

    def reference(self) -> dict[str, Any]:
        """How a frame names this list: ``{"step": S, "path": [...]}``."""
        return {"step": self.step, "path": list(self.path)}

    def messages(self) -> list[Message]:
        items = self.items[: self.size]
        return list(items) if _typed(items) else Message.from_dicts(items)

    def delta(self, prompt: Sequence[Message]) -> tuple[Any, ...] | None:
        """``prompt`` as copies of this list's records (found by identity: a message read
        from one holds it as ``_record``) and the messages it does not hold; None when the
        prompt sends none of them."""
        items, size = self.items, self.size
        if not size:
            return None
        # a restored list of messages is found by the messages themselves, one of records
        # by the record each message was read from
        records: list[Any] = list(prompt) if _typed(items) else records_of(prompt)
        first = items[0]
        start = next((n for n, r in enumerate(records) if r is first), -1)
        if start >= 0 and records[start : start + size] == items[:size]:
            # the usual case, the history sent again in order: one comparison in C, which
            # sees the same objects and does not compare them
            return (
                *map(_written, prompt[:start]),
                [0, size],
                *map(_written, prompt[start + size :]),
            )
        where: dict[int, int] | None = None
        ops: list[Any] = []
        expected = -1  # the item that would continue the last copy
        copied = False
        for message, record in zip(prompt, records, strict=True):
            at = -1
            if record is not None:
                if 0 <= expected < size and items[expected] is record:
                    at = expected
                else:
                    if where is None:
                        where = {id(item): n for n, item in enumerate(items[:size])}
                    found = where.get(id(record), -1)
                    at = found if found >= 0 and items[found] is record else -1
            if at < 0:
                ops.append(_written(message))
                expected = -1
                continue
            copied = True
            last = ops[-1] if ops else None
            if at == expected and isinstance(last, list):
                last[1] = at + 1
            else:
                ops.append([at, at + 1])
            expected = at + 1
        return tuple(ops) if copied else None


def _typed(items: Sequence[Any]) -> bool:
    """Whether a restored list holds messages (else the records of messages)."""
    return bool(items) and type(items[0]) is Message


def _written(message: Message) -> Any:
    """A message as a delta writes it: the frozen record it was read from, else its JSON."""
    record = getattr(message, "_record", None)
    return record if record is not None else _storable(message.to_dict())
