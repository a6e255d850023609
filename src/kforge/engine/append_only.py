"""Lists in an agent's state that only grow (a conversation, a log of findings): a step's delta
holds their new items, found without looking at the items committed before.

An ``AppendOnlyList`` takes new items with ``append``, ``extend`` and ``+=`` and refuses every
other change. Its items are frozen as they enter: dicts and lists become ``FrozenDict`` and
``FrozenList``, equal to the plain values and written as the same JSON, which refuse to change.
So an item committed once stays what was committed, and the runner never needs to compare it
again; an edit in place is an ``AppendOnlyError`` saying what to do, never a change lost.

A list holds JSON values or ``Message``s, not both: a conversation kept as messages is written
as their JSON forms and restored as messages (their tool calls' arguments frozen), read
straight from the record without a dict per message in between.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from kforge.errors import AppendOnlyError
from kforge.frozen import FrozenDict, FrozenList, freeze, thaw
from kforge.llm.types import Message, frozen_message

__all__ = ["AppendOnlyList", "FrozenDict", "FrozenList", "freeze", "holds_messages", "thaw"]


def _refuse_list_change(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise AppendOnlyError(
        "an AppendOnlyList only grows: add items with append or extend; to change or remove "
        "items, keep them in a plain list in the agent's state instead"
    )


def _frozen(item: Any) -> Any:
    return frozen_message(item) if type(item) is Message else freeze(item)


def holds_messages(items: list[Any]) -> bool:
    """Whether ``items`` (an ``AppendOnlyList``'s) are ``Message``s rather than JSON values."""
    return bool(items) and type(items[0]) is Message


def _refuse_mixing(log: list[Any], items: list[Any]) -> None:
    if not items:
        return
    messages = holds_messages(log) if log else type(items[0]) is Message
    if any((type(item) is Message) is not messages for item in items):
        raise TypeError(
            "an AppendOnlyList holds Messages or JSON values, not both: append "
            + ("Messages (Message.from_dict reads one)" if messages else "message.to_dict()")
        )


class AppendOnlyList(list[Any]):
    """A list in an agent's state that only grows, as a conversation does.

    Declaring a list this way (``get_state`` returns it, ``restore_state`` wraps what it gets
    back in one) makes each step's state delta cost what the step appended, not the length of
    the list. Items are JSON values, frozen as they are added, or ``Message``s (with their
    tool calls' arguments frozen). A resumed run's ``restore_state`` gets the list back as an
    ``AppendOnlyList`` of frozen items, which wrapping again does not copy item by item.
    """

    __slots__ = ("_synced",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        if type(items) is AppendOnlyList:
            # a restored list (see kforge.engine.restore) wrapped again by restore_state: its
            # items are frozen already, and what its baseline knows holds for the copy too
            super().__init__(items)
            self._synced: tuple[list[Any], int] | None = items._synced
            return
        frozen = list(map(_frozen, items))
        _refuse_mixing(frozen, frozen)
        super().__init__(frozen)
        self._synced = None
        """A list the runner's baseline holds and how many of this list's first items it
        equals: set by the baseline once a step's delta is applied, trusted while that list
        still has that length."""

    @classmethod
    def of_messages(cls, items: Iterable[Any]) -> AppendOnlyList:
        """A history of ``Message``s from what ``restore_state`` received: the list itself
        when it holds messages, else the messages its dicts are the JSON forms of (a run
        recorded while the history held dicts)."""
        if type(items) is not AppendOnlyList:
            items = list(items)
        if not items or holds_messages(items):
            return cls(items)
        return cls(Message.from_dicts(items))

    def append(self, item: Any) -> None:
        item = _frozen(item)
        if self and (type(item) is Message) is not (type(self[0]) is Message):
            _refuse_mixing(self, [item])
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        frozen = list(map(_frozen, items))
        _refuse_mixing(self, frozen)
        super().extend(frozen)

    def __iadd__(self, items: Iterable[Any]) -> AppendOnlyList:  # type: ignore[misc]
        self.extend(items)
        return self

    __setitem__ = __delitem__ = __imul__ = _refuse_list_change
    insert = pop = remove = clear = sort = reverse = _refuse_list_change

    def __copy__(self) -> AppendOnlyList:
        return AppendOnlyList(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> AppendOnlyList:
        return AppendOnlyList(self)  # the items are frozen: shared, not copied

    def __reduce__(self) -> tuple[Any, ...]:
        return (AppendOnlyList, (thaw(self),))

    def synced_with(self, baseline: list[Any]) -> bool:
        """Whether ``baseline`` is known to equal this list's first ``len(baseline)`` items."""
        synced = self._synced
        return synced is not None and synced[0] is baseline and synced[1] == len(baseline)

    def sync(self, baseline: list[Any], size: int) -> None:
        """``baseline`` now equals this list's first ``size`` items (the runner's baseline,
        right after it applied the delta that made it so)."""
        self._synced = (baseline, size) if len(baseline) == size else None
