"""State deltas: what a step changed, small enough that storage grows with the work, not its square.

A delta is a list of operations on a JSON object: ``["s", path, value]`` sets, ``["d", path]``
deletes, ``["a", path, items]`` appends to a list.
"""

from __future__ import annotations

import copy
import marshal
from collections.abc import Iterable
from typing import Any

from kforge.errors import StateCorruptionError
from kforge.jsoncodec import dumps, loads

__all__ = ["Baseline", "apply_delta", "copy_value", "diff_state", "rebuild_state"]

Path = list[str | int]


def copy_value(value: Any) -> Any:
    """A deep copy of a JSON-like value: dicts, lists, strings, numbers, booleans, None.

    ``marshal`` copies those in C, several times faster than ``copy.deepcopy``; anything it
    cannot take (an agent's own objects, dict subclasses) falls back to ``copy.deepcopy``.
    """
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


def diff_state(old: Any, new: Any) -> list[list[Any]]:
    ops: list[list[Any]] = []
    _diff(old, new, [], ops)
    return ops


def _diff(old: Any, new: Any, path: Path, ops: list[list[Any]]) -> None:
    if type(old) is type(new) and old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append(["d", [*path, key]])
        for key, value in new.items():
            if key in old:
                _diff(old[key], value, [*path, key], ops)
            else:
                ops.append(["s", [*path, key], copy_value(value)])
        return
    if isinstance(old, list) and isinstance(new, list) and len(new) >= len(old):
        head = new[: len(old)]
        # equality in C first; the type check keeps 1, 1.0 and True apart as JSON does
        if old == head and list(map(type, old)) == list(map(type, head)):
            ops.append(["a", path, copy_value(new[len(old) :])])
            return
        if len(new) == len(old):
            for index, (a, b) in enumerate(zip(old, new, strict=True)):
                _diff(a, b, [*path, index], ops)
            return
    ops.append(["s", path, copy_value(new)])


def apply_delta(state: dict[str, Any], delta: Iterable[list[Any]]) -> dict[str, Any]:
    """Apply ``delta`` to ``state`` in place and return it."""
    root: Any = state
    for op in delta:
        kind, path = op[0], op[1]
        if not path:
            if kind != "s" or not isinstance(op[2], dict):
                raise StateCorruptionError(f"invalid root operation {op!r:.120}")
            root = copy_value(op[2])
            continue
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        if kind == "s":
            if isinstance(parent, list) and last == len(parent):
                parent.append(copy_value(op[2]))
            else:
                parent[last] = copy_value(op[2])
        elif kind == "d":
            del parent[last]
        elif kind == "a":
            parent[last].extend(copy_value(op[2]))
        else:
            raise StateCorruptionError(f"unknown delta operation {kind!r}")
    if root is not state:
        state.clear()
        state.update(root)
    return state


def rebuild_state(
    base: dict[str, Any], deltas: Iterable[Iterable[list[Any]]], *, copy_base: bool = True
) -> dict[str, Any]:
    """Apply step deltas in order to ``base`` (to a copy of it unless ``copy_base`` is False)."""
    state = copy_value(base) if copy_base else base
    try:
        for delta in deltas:
            apply_delta(state, delta)
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
        return self.state

    def advance(self, delta: Iterable[list[Any]]) -> dict[str, Any]:
        """Apply a step's delta; call it after :meth:`trusted` with no agent code in between."""
        if self._text is not None:
            # trusted() found the state still encodes to the text: decoding it again gives a
            # private copy, faster than copying the objects (which orjson made key by key)
            self.state = loads(self._text)
            self._text = None
        return apply_delta(self.state, delta)
