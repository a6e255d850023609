"""Lists in an agent's state that only grow (a conversation, a log of findings): a step's delta
holds their new items, found without looking at the items committed before.

An ``AppendOnlyList`` takes new items with ``append``, ``extend`` and ``+=`` and refuses every
other change. Its items are frozen as they enter: dicts and lists become ``FrozenDict`` and
``FrozenList``, equal to the plain values and written as the same JSON, which refuse to change.
So an item committed once stays what was committed, and the runner never needs to compare it
again; an edit in place is an ``AppendOnlyError`` saying what to do, never a change lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from kforge.errors import AppendOnlyError
from kforge.frozen import FrozenDict, FrozenList, freeze, thaw

__all__ = ["AppendOnlyList", "FrozenDict", "FrozenList", "freeze", "thaw"]


def _refuse_list_change(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise AppendOnlyError(
        "an AppendOnlyList only grows: add items with append or extend; to change or remove "
        "items, keep them in a plain list in the agent's state instead"
    )


class AppendOnlyList(list[Any]):
    """A list in an agent's state that only grows, as a conversation does.

    Declaring a list this way (``get_state`` returns it, ``restore_state`` wraps what it gets
    back in one) makes each step's state delta cost what the step appended, not the length of
    the list. Items are JSON values, frozen as they are added. A resumed run's
    ``restore_state`` gets the list back as an ``AppendOnlyList`` of frozen items (once a step
    has committed it), which wrapping again does not copy item by item.
    """

    __slots__ = ("_synced",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        if type(items) is AppendOnlyList:
            # a restored list (see kforge.engine.restore) wrapped again by restore_state: its
            # items are frozen already, and what its baseline knows holds for the copy too
            super().__init__(items)
            self._synced: tuple[list[Any], int] | None = items._synced
            return
        super().__init__(map(freeze, items))
        self._synced = None
        """A list the runner's baseline holds and how many of this list's first items it
        equals: set by the baseline once a step's delta is applied, trusted while that list
        still has that length."""

    def append(self, item: Any) -> None:
        super().append(freeze(item))

    def extend(self, items: Iterable[Any]) -> None:
        super().extend(list(map(freeze, items)))

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
