"""Values that flow through the model layer: messages, tool calls, usage, settings, responses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kforge.frames.slots import built_by_slots
from kforge.frozen import FrozenDict, FrozenList, freeze, freeze_decoded
from kforge.jsoncodec import Record, strict_decoder, written_form

__all__ = [
    "Message",
    "MessageRecord",
    "ModelResponse",
    "ModelSettings",
    "StreamEvent",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "frozen_message",
    "messages_from_json",
    "messages_from_records",
    "records_of",
    "word_deltas",
]

Role = Literal["system", "user", "assistant", "tool"]


@built_by_slots
@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    """Provider call id, echoed back in the tool message."""


class _ReadFrom:
    """A slot beside a message's fields (not a field: equality, copies and JSON ignore it)."""

    __slots__ = ("_record",)


@built_by_slots
@dataclass(frozen=True, slots=True)
class Message(_ReadFrom):
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    """For role 'tool': the id of the call this message answers."""
    name: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls("assistant", content, tool_calls)

    @classmethod
    def tool(cls, content: str, tool_call_id: str, name: str | None = None) -> Message:
        return cls("tool", content, tool_call_id=tool_call_id, name=name)

    # Messages keep their own JSON form, measured against jsoncodec's: a history holds hundreds,
    # and this form leaves out the fields at their defaults (smaller records), writes them in
    # 0.6 of the time and reads them in 0.85 of it.
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [
                {"name": c.name, "arguments": c.arguments, "id": c.id} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls.from_dicts((data,))[0]

    @classmethod
    def from_dicts(cls, items: Iterable[dict[str, Any]]) -> list[Message]:
        """``[Message.from_dict(item) for item in items]`` in one loop: a restored history is
        hundreds of messages, and a call for each costs a fifth of rebuilding them."""
        if cls is not Message:  # a subclass may have fields of its own
            return [
                cls(
                    data["role"],
                    data.get("content") or "",
                    tuple(
                        ToolCall(c["name"], dict(c.get("arguments") or ()), c.get("id", ""))
                        for c in data.get("tool_calls") or ()
                    ),
                    data.get("tool_call_id"),
                    data.get("name"),
                )
                for data in items
            ]
        return _build(items, decoded=False)

    @classmethod
    def from_records(cls, items: Iterable[dict[str, Any]]) -> list[Message]:
        """Messages read from their JSON forms just decoded from a run's record, which
        nothing else holds: their tool calls' arguments frozen in place (a history of
        messages in an ``AppendOnlyList``, restored)."""
        return _build(items, decoded=True)


def _build(items: Iterable[dict[str, Any]], *, decoded: bool) -> list[Message]:
    """``Message.from_dicts``; with ``decoded``, arguments frozen in place, not copied."""
    messages: list[Message] = []
    append = messages.append
    for data in items:
        get = data.get
        message: Any = _new(_DraftMessage)
        message.role = data["role"]
        content = message.content = get("content") or ""
        calls = get("tool_calls")
        if calls:
            built = []
            for item in calls:
                call: Any = _new(_DraftCall)
                call.name = item["name"]
                arguments = item.get("arguments")
                if decoded:
                    call.arguments = freeze_decoded(arguments) if arguments else _NO_ARGUMENTS
                elif type(arguments) is FrozenDict:
                    # frozen arguments (a restored record's) cannot change: shared, not copied
                    call.arguments = arguments
                else:
                    call.arguments = dict(arguments or ())
                call.id = item.get("id", "")
                call.__class__ = ToolCall
                built.append(call)
            message.tool_calls = tuple(built)
        else:
            message.tool_calls = ()
        message.tool_call_id = get("tool_call_id")
        message.name = get("name")
        if (
            type(data) is FrozenDict
            and type(content) is str
            and (content.isascii() or _utf8_can_store(content))
        ):
            # a record that cannot change is this message's JSON as it was stored: a
            # resumed run's first model call records its restored history without
            # writing it again
            message._record = data
        message.__class__ = Message
        append(message)
    return messages


class _CallRecord(Record, gc=False):
    """A tool call's JSON as ``Message.to_dict`` writes it, read as ``_build`` reads it."""

    name: Any
    arguments: Any = None
    id: Any = ""


class MessageRecord(Record, gc=False):
    """A message's JSON as ``Message.to_dict`` writes it, read as ``_build`` reads it."""

    role: Any
    content: Any = None
    tool_calls: list[_CallRecord] | None = None
    tool_call_id: Any = None
    name: Any = None


def messages_from_json(data: bytes | memoryview) -> list[Message]:
    """``Message.from_records(loads(data))`` for the JSON of a list of messages (a history in
    a run's snapshot), read straight into messages: their fields, never dicts of them, are
    decoded. ``ValueError`` when ``data`` is JSON of another shape or that only the general
    reader reads (``Message.from_records`` then says what)."""
    try:
        records = _MESSAGE_RECORDS(data)
    except ValueError as exc:
        raise ValueError(f"not a list of messages: {exc}") from None
    return messages_from_records(records)


def messages_from_records(records: Iterable[MessageRecord]) -> list[Message]:
    """The messages ``MessageRecord``s just decoded hold (``messages_from_json`` after its
    decode, for a reader that decoded the records along with other JSON)."""
    messages: list[Message] = []
    append = messages.append
    for record in records:
        message: Any = _new(_DraftMessage)
        message.role = record.role
        message.content = record.content or ""
        calls = record.tool_calls
        if not calls:
            message.tool_calls = ()
        elif len(calls) == 1:
            # the usual case (one call a turn): its tuple made at once, with no list between
            message.tool_calls = (_call_from_record(calls[0]),)
        else:
            message.tool_calls = tuple(map(_call_from_record, calls))
        message.tool_call_id = record.tool_call_id
        message.name = record.name
        message.__class__ = Message
        append(message)
    return messages


def _call_from_record(item: _CallRecord) -> ToolCall:
    """The tool call a ``_CallRecord`` just decoded holds, its arguments frozen."""
    call: Any = _new(_DraftCall)
    call.name = item.name
    arguments = item.arguments
    if not arguments:
        call.arguments = _NO_ARGUMENTS
    elif type(arguments) is dict:
        # arguments of scalars (the usual case) are frozen by one copy, without
        # freeze_decoded's call and walk
        for value in arguments.values():
            kind = type(value)
            if kind is dict or kind is list:
                call.arguments = freeze_decoded(arguments)
                break
        else:
            call.arguments = FrozenDict(arguments)
    else:
        call.arguments = freeze_decoded(arguments)
    call.id = item.id
    call.__class__ = ToolCall
    return call  # type: ignore[no-any-return]


def frozen_message(message: Message) -> Message:
    """``message`` with its tool calls' arguments frozen (``FrozenDict``), so that nothing in
    it can change: the message itself when they are, else a copy; its JSON is kept beside it
    as a frozen record (``records_of``), written for it wherever it is recorded. What an
    ``AppendOnlyList`` holds of a message appended to it."""
    content = message.content
    calls = message.tool_calls
    frozen = all(type(call.arguments) is FrozenDict for call in calls)
    if frozen and getattr(message, "_record", None) is not None:
        return message
    record: dict[str, Any] = {"role": message.role, "content": content}
    if calls and not frozen:
        built = []
        for old in calls:  # built as from_dicts builds them: a step appends one or two
            call: Any = _new(_DraftCall)
            call.name, call.arguments, call.id = old.name, freeze(old.arguments), old.id
            call.__class__ = ToolCall
            built.append(call)
        copy: Any = _new(_DraftMessage)
        copy.role, copy.content, copy.tool_calls = message.role, content, tuple(built)
        copy.tool_call_id, copy.name = message.tool_call_id, message.name
        copy.__class__ = Message
        message = copy
    if calls:
        record["tool_calls"] = FrozenList(
            [FrozenDict(name=c.name, arguments=c.arguments, id=c.id) for c in message.tool_calls]
        )
    if message.tool_call_id is not None:
        record["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        record["name"] = message.name
    if type(content) is str and (content.isascii() or _utf8_can_store(content)):
        # a cache of what cannot change (the message and its frozen arguments)
        object.__setattr__(message, "_record", FrozenDict(record))
    return message


def _written_message(message: Message) -> dict[str, Any]:
    """A message's JSON in a run's record: the record it was read from, else ``to_dict``."""
    record: dict[str, Any] | None = getattr(message, "_record", None)
    return record if record is not None else message.to_dict()


def records_of(messages: Sequence[Message]) -> list[dict[str, Any] | None]:
    """For each message, the frozen record ``Message.from_dict`` read it from (it cannot
    change, reading it again gives the same message, and its content is text UTF-8 can
    store), else None."""
    return [getattr(message, "_record", None) for message in messages]


def _utf8_can_store(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (which only a record frozen in this process
    may hold: JSON decoders refuse one)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


# Restoring a run rebuilds its whole message history, hundreds of objects at a time. The
# generated __init__ of a frozen dataclass sets each field through object.__setattr__; a
# message is built instead as a plain object with the same slots, whose attributes are set at
# the interpreter's own speed, then given its class (a third less than setting each slot
# through its descriptor, itself twice as fast as __init__). For from_dict only: the values
# are already in their final form.
_new = object.__new__
_DraftMessage = type("_DraftMessage", (_ReadFrom,), {"__slots__": Message.__slots__})
_DraftCall = type("_DraftCall", (), {"__slots__": ToolCall.__slots__})
_NO_ARGUMENTS = FrozenDict()
_MESSAGE_RECORDS = strict_decoder(list[MessageRecord])
written_form(Message, _written_message)


@built_by_slots
@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 1

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )

    def to_dict(self) -> dict[str, int]:
        """``jsoncodec.to_builtins(self)``, in a quarter of the time: saved with every step."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "requests": self.requests,
        }


@dataclass(frozen=True, slots=True)
class ModelSettings:
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    timeout_s: float | None = None
    """Per-call timeout; None uses the provider's default."""
    seed: int | None = None
    repetition_penalty: float | None = None
    """Above 1 discourages repeating earlier tokens (a local model's repeat penalty; an
    OpenAI-compatible endpoint's ``frequency_penalty`` of ``penalty - 1``)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model needs to know about a tool to call it."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@built_by_slots
@dataclass(frozen=True, slots=True)
class ModelResponse:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    parsed: Any = None
    """The structured output (a JSON value) when an output schema was given."""
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str = "stop"

    def to_dict(self) -> dict[str, Any]:
        """``jsoncodec.to_builtins(self)`` (read back by ``jsoncodec.convert``) in a third of
        the time, with lists for tuples: every model call records one."""
        return {
            "text": self.text,
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments, "id": c.id} for c in self.tool_calls
            ],
            "parsed": self.parsed,
            "usage": self.usage.to_dict(),
            "model": self.model,
            "finish_reason": self.finish_reason,
        }


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of a streamed completion: a text delta, or the final response."""

    delta: str = ""
    response: ModelResponse | None = None
    """Set on the last event only."""


def word_deltas(response: ModelResponse) -> list[StreamEvent]:
    """A finished response as stream events: one per word, then the response itself
    (how test models stream)."""
    words = response.text.split(" ") if response.text else []
    events = [StreamEvent(delta=word if i == 0 else " " + word) for i, word in enumerate(words)]
    events.append(StreamEvent(response=response))
    return events
