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

__all__ = ["AppendOnlyList", "FrozenDict", "FrozenList", "freeze", "thaw"]

_LEAVES = frozenset({str, int, float, bool, type(None)})


def _refuse_item_change(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    kind = "dict" if isinstance(self, dict) else "list"
    raise AppendOnlyError(
        f"this {kind} is (part of) an item of an AppendOnlyList (a list in the agent's state "
        "that only grows), so it cannot change in place: append a changed copy instead "
        "(copy.deepcopy(item) gives one you may change), or keep the list a plain list if "
        "its items must change"
    )


class FrozenDict(dict[str, Any]):
    """A dict that refuses to change: an item (or part of one) of an ``AppendOnlyList``."""

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refuse_item_change
    clear = pop = popitem = setdefault = update = _refuse_item_change

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (freeze, (thaw(self),))


class FrozenList(list[Any]):
    """A list that refuses to change: part of an item of an ``AppendOnlyList``."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse_item_change
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse_item_change

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (freeze, (thaw(self),))


def freeze(value: Any) -> Any:
    """``value`` (a JSON value) with its dicts and lists frozen; frozen parts are kept as they
    are. ``TypeError`` for anything JSON cannot hold."""
    kind = type(value)
    if kind is dict:  # the usual cases first: a restore freezes a whole history
        frozen = FrozenDict(value)  # one copy in C; nested containers are replaced below
        for key, item in value.items():
            if type(item) not in _LEAVES:
                dict.__setitem__(frozen, key, freeze(item))
        return frozen
    if kind in _LEAVES or kind is FrozenDict or kind is FrozenList:
        return value
    if kind is list:
        return FrozenList(map(freeze, value))
    if isinstance(value, dict):
        return freeze(dict(value))
    if isinstance(value, list | tuple):
        return FrozenList(map(freeze, value))
    raise TypeError(
        f"an AppendOnlyList holds JSON values (dicts, lists, strings, numbers, booleans, "
        f"None), not {kind.__name__}: append its JSON form (e.g. message.to_dict())"
    )


def thaw(value: Any) -> Any:
    """A plain copy of ``value``'s dicts and lists (frozen or not) that you may change."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


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
