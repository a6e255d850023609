"""JSON values that refuse to change: the items of an ``AppendOnlyList`` and what is read from
them. ``FrozenDict`` and ``FrozenList`` equal the plain dicts and lists they were made from and
are written as the same JSON; every change in place raises ``AppendOnlyError``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from kforge.errors import AppendOnlyError

__all__ = ["FrozenDict", "FrozenList", "freeze", "freeze_decoded", "thaw"]

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


def freeze_decoded(value: Any) -> Any:
    """``freeze(value)`` for a value just decoded from JSON (plain dicts, lists, strings,
    numbers, booleans, None) that nothing else holds: its containers take their frozen
    children in place before each is copied once, which saves a tenth of the work of
    ``freeze`` (a restore freezes a whole history)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            inner = type(item)
            if inner is dict or inner is list:
                value[key] = freeze_decoded(item)
        return FrozenDict(value)
    if kind is list:
        for index, item in enumerate(value):
            inner = type(item)
            if inner is dict or inner is list:
                value[index] = freeze_decoded(item)
        return FrozenList(value)
    return freeze(value)


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
