"""State deltas: what a step changed, small enough that storage grows with the work, not its square.

A delta is a list of operations on a JSON object: ``["s", path, value]`` sets, ``["d", path]``
deletes, ``["a", path, items]`` appends to a list.

Unchanged parts are found with Python's equality, so values it calls equal (``1``, ``1.0`` and
``True``) are one value to a delta: replacing one by another in place is not a change, in a list
as in an object. Every new or replaced value is recorded exactly as it is. An
``AppendOnlyList`` is diffed by what was appended to it since the baseline, without comparing
the items before (they are frozen): see :mod:`kforge.engine.append_only`.
"""

from __future__ import annotations

import copy
import marshal
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from kforge.engine.append_only import AppendOnlyList, FrozenDict, FrozenList
from kforge.errors import StateCorruptionError
from kforge.jsoncodec import dumps, loads

__all__ = ["Baseline", "Grown", "apply_delta", "copy_value", "diff_state", "rebuild_state"]

Path = list[str | int]

_LEAVES = frozenset({str, int, float, bool, type(None)})

_FIXED = frozenset({FrozenDict, FrozenList, AppendOnlyList})
"""Containers a baseline may share with the agent (they refuse changes): a delta replaces them
whole, never changes them inside."""

Grown = tuple[AppendOnlyList, Path, int]
"""An append-only list the diff met: the list, where it is in the state, its length then."""


def copy_value(value: Any) -> Any:
    """A deep copy of a JSON-like value: dicts, lists, strings, numbers, booleans, None.

    ``marshal`` copies those in C, several times faster than ``copy.deepcopy``; anything it
    cannot take (an agent's own objects, dict subclasses) falls back to ``copy.deepcopy``.
    """
    if type(value) in _LEAVES:
        return value  # immutable: nothing to copy
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


def fresh_containers(value: Any) -> Any:
    """A copy of a JSON-like value's dicts and lists that shares its strings and numbers.

    Those cannot change, and sharing them lets the next comparison with the live state find
    most of its leaves identical instead of comparing their contents. Used for what a step
    appends (a few items each step, compared again at every step after); a value that is set
    whole is copied by :func:`copy_value`, faster for large values.
    """
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is dict:
        return {key: fresh_containers(item) for key, item in value.items()}
    if kind is list:
        return [fresh_containers(item) for item in value]
    return copy_value(value)


def diff_state(
    old: Any,
    new: Any,
    *,
    grown: list[Grown] | None = None,
    synced: AbstractSet[int] | None = None,
) -> list[list[Any]]:
    """The delta that turns ``old`` into ``new``. ``grown`` collects the append-only lists met;
    ``synced`` (a :class:`Baseline`'s) names the lists of ``old`` that append-only lists are
    known to extend, so their committed items need no comparison."""
    ops: list[list[Any]] = []
    _diff(old, new, [], ops, grown, synced)
    return ops


def _diff(
    old: Any,
    new: Any,
    path: Path,
    ops: list[list[Any]],
    grown: list[Grown] | None,
    synced: AbstractSet[int] | None,
) -> None:
    if type(new) is AppendOnlyList:
        _diff_grown(old, new, path, ops, grown, synced)
        return
    if type(old) is type(new) and old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and type(old) not in _FIXED:
        for key in old:
            if key not in new:
                ops.append(["d", [*path, key]])
        for key, value in new.items():
            if key in old:
                before = old[key]
                if type(value) in _LEAVES:  # what _diff does with a leaf, without the call
                    if type(before) is not type(value) or before != value:
                        ops.append(["s", [*path, key], value])
                else:
                    _diff(before, value, [*path, key], ops, grown, synced)
            elif type(value) is AppendOnlyList:
                _diff_grown(None, value, [*path, key], ops, grown, synced)
            else:
                ops.append(["s", [*path, key], copy_value(value)])
        return
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and len(new) >= len(old)
        and type(old) not in _FIXED
    ):
        if old == new[: len(old)]:  # one comparison in C, however long the history
            ops.append(["a", path, fresh_containers(new[len(old) :])])
            return
        # a list an append-only list was synced with is replaced, never changed inside: a
        # change that kept its length would leave that list trusting what it no longer holds
        if len(new) == len(old) and not (synced and id(old) in synced):
            for index, (a, b) in enumerate(zip(old, new, strict=True)):
                _diff(a, b, [*path, index], ops, grown, synced)
            return
    ops.append(["s", path, copy_value(new)])


def _diff_grown(
    old: Any,
    new: AppendOnlyList,
    path: Path,
    ops: list[list[Any]],
    grown: list[Grown] | None,
    synced: AbstractSet[int] | None,
) -> None:
    """An append-only list: what was appended since ``old``. Its items are frozen, so once the
    baseline is known to hold its first items (``synced_with``), they are not compared again;
    the new ones enter the delta and the baseline as they are, shared rather than copied."""
    size = len(old) if isinstance(old, list) else -1
    known = synced is not None and id(old) in synced and new.synced_with(old)
    if 0 <= size <= len(new) and (known or old == new[:size]):
        if len(new) > size:
            ops.append(["a", path, new[size:]])
    else:
        ops.append(["s", path, new[:]])
    if grown is not None:
        grown.append((new, path, len(new)))


def apply_delta(
    state: dict[str, Any], delta: Iterable[list[Any]], *, take: bool = False
) -> dict[str, Any]:
    """Apply ``delta`` to ``state`` in place and return it.

    The values set or appended are copies, unless ``take`` says the delta is the caller's to
    give away (decoded from a record, or made by :func:`diff_state`, which already copies): its
    values then become part of ``state`` as they are.
    """
    own = _same if take else copy_value
    root: Any = state
    for op in delta:
        kind, path = op[0], op[1]
        if not path:
            if kind != "s" or not isinstance(op[2], dict):
                raise StateCorruptionError(f"invalid root operation {op!r:.120}")
            root = own(op[2])
            continue
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        if kind == "s":
            if isinstance(parent, list) and last == len(parent):
                parent.append(own(op[2]))
            else:
                parent[last] = own(op[2])
        elif kind == "d":
            del parent[last]
        elif kind == "a":
            parent[last].extend(own(op[2]))
        else:
            raise StateCorruptionError(f"unknown delta operation {kind!r}")
    if root is not state:
        state.clear()
        state.update(root)
    return state


def _same(value: Any) -> Any:
    return value


def rebuild_state(
    base: dict[str, Any], deltas: Iterable[Iterable[list[Any]]], *, copy_base: bool = True
) -> dict[str, Any]:
    """Apply step deltas in order to ``base`` (to a copy of it unless ``copy_base`` is False).

    With ``copy_base`` False the deltas' values are taken too: pass deltas nobody else holds."""
    state = copy_value(base) if copy_base else base
    try:
        for delta in deltas:
            apply_delta(state, delta, take=not copy_base)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise StateCorruptionError(f"a step delta does not apply: {exc!r}") from exc
    return state


class Baseline:
    """The state as of the last committed step: what the runner diffs the next step against.

    Right after a restore it shares its objects with the agent, so that resuming a run with a
    long history does not copy that history before the first step. While it does, it is trusted
    only if its JSON encoding is still the one it had when the agent received it (one encode,
    about 10 µs per 20 KB); if the agent changed restored objects in place, the state is decoded
    again from that text. Advancing past the first committed step makes it private, and from then
    on deltas carry copies, so it never aliases what the agent mutates.
    """

    def __init__(
        self, state: dict[str, Any], *, shared: bool = False, text: str | None = None
    ) -> None:
        """``text``: the JSON ``state`` was decoded from, if at hand (else it is encoded)."""
        self.state = state
        self.synced: set[int] = set()
        """The ids of this state's lists that append-only lists are synced with
        (:meth:`advance`): a diff replaces them rather than change them inside."""
        self._text: str | None = None
        if shared:
            self._text = text if text is not None else dumps(state)

    @property
    def shared(self) -> bool:
        return self._text is not None

    def trusted(self) -> dict[str, Any]:
        """The state exactly as committed, whatever the agent did to objects it shares."""
        if self._text is not None:
            try:
                same = dumps(self.state) == self._text
            except TypeError:
                same = False
            if not same:
                self.state = loads(self._text)
                self._text = None
                self.synced.clear()
        return self.state

    def advance(self, delta: Iterable[list[Any]], grown: Iterable[Grown] = ()) -> dict[str, Any]:
        """Apply a step's delta (from :func:`diff_state`, whose values become the baseline's);
        call it after :meth:`trusted` with no agent code in between. ``grown``: what that diff
        collected; each append-only list learns which baseline list now holds its items."""
        grown = list(grown)
        if self._text is not None:
            self.synced.clear()
            if grown:
                self.state = _private_copy(self.state, {tuple(g[1]): g[0] for g in grown}, ())
            else:
                # trusted() found the state still encodes to the text: decoding it again gives
                # a private copy, faster than copying the objects (which orjson made key by key)
                self.state = loads(self._text)
            self._text = None
        state = apply_delta(self.state, delta, take=True)
        self._sync(grown)
        return state

    @classmethod
    def restored(
        cls, state: dict[str, Any], logs: dict[tuple[str | int, ...], AppendOnlyList]
    ) -> Baseline:
        """The baseline of a state just restored, whose lists at ``logs``' paths the agent
        receives as those append-only lists: a private copy of the rest, which shares their
        frozen items and is known to equal them, so the first diff compares nothing of them
        and no check of shared objects is needed."""
        baseline = cls(_private_copy(state, logs, ()))
        baseline._sync([(log, list(path), len(log)) for path, log in logs.items()])
        return baseline

    def _sync(self, grown: Iterable[Grown]) -> None:
        """Tell each append-only list which list of this state now holds its items."""
        for log, path, size in grown:
            target: Any = self.state
            try:
                for key in path:
                    target = target[key]
            except (KeyError, IndexError, TypeError):
                continue
            if isinstance(target, list):
                log.sync(target, size)
                self.synced.add(id(target))


def _private_copy(
    value: Any, logs: dict[tuple[str | int, ...], AppendOnlyList], at: tuple[str | int, ...]
) -> Any:
    """A copy of the shared state ``value`` in which the append-only lists the diff met hold
    their own frozen items instead of copies of the restored ones: the diff found those equal
    (or its delta replaces the list whole), and they cannot change, so sharing them saves
    decoding a whole history again."""
    log = logs.get(at)
    if log is not None:
        if isinstance(value, list) and len(value) <= len(log):
            return log[: len(value)]  # a plain list, even of the log itself
        return copy_value(value)
    depth = len(at)
    if type(value) is dict and any(len(p) > depth and p[:depth] == at for p in logs):
        return {key: _private_copy(item, logs, (*at, key)) for key, item in value.items()}
    return copy_value(value)
