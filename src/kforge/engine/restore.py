"""Rebuilding a run's state from its records: the latest snapshot plus the step deltas after
it, or the deltas alone when the snapshot is unreadable."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kforge.engine.append_only import AppendOnlyList, holds_messages
from kforge.engine.state import Baseline, Grown, diff_state, rebuild_state
from kforge.errors import StateCorruptionError
from kforge.frames import UsageFrame
from kforge.frozen import freeze_decoded
from kforge.jsoncodec import Raw, Record, loads, strict_decoder
from kforge.llm.types import Message, MessageRecord, messages_from_json, messages_from_records
from kforge.store.base import RunLog, Snapshot

__all__ = [
    "APPEND_ONLY",
    "RestorePoint",
    "append_only_entries",
    "initial_delta",
    "load_state",
    "restore_point",
    "restored_baseline",
    "restored_lists",
    "session_usage",
    "stored_state",
]

APPEND_ONLY = "append_only"
"""The key of the runtime state naming where the agent's state holds append-only lists: those
the last committed step's diff met, each as its path (a list of JSON values) or as
``{"path": path, "items": "messages"}`` (a list of ``Message``s, written as their JSON)."""

_MESSAGES = "messages"


def append_only_entries(grown: list[Grown]) -> list[Any]:
    """What the runtime state records under ``APPEND_ONLY`` of the lists a diff met."""
    return [
        {"path": list(path), "items": _MESSAGES} if holds_messages(log) else list(path)
        for log, path, _ in grown
    ]


def initial_delta(state: dict[str, Any]) -> list[list[Any]]:
    """The delta that records ``state`` as a run's step 0, with where it holds append-only
    lists: the first stretch restores them as the lists they are (of messages, say)."""
    grown: list[Grown] = []
    delta = diff_state({}, state, grown=grown)
    if grown:
        delta.append(["s", ["runtime", APPEND_ONLY], append_only_entries(grown)])
    return delta


def _entry(entry: Any) -> tuple[Any, bool]:
    """The path an ``APPEND_ONLY`` entry names, and whether its list holds messages."""
    if isinstance(entry, dict):
        return entry.get("path"), entry.get("items") == _MESSAGES
    return entry, False


@dataclass(frozen=True, slots=True)
class RestorePoint:
    """A run's state as of its last committed step."""

    state: dict[str, Any]
    step: int
    seq: int
    """The last frame seq committed with that step."""
    text: str | None = None
    """The state's JSON as stored, when the state is exactly a stored snapshot."""


def restore_point(
    store: RunLog,
    run_id: str,
    *,
    last_step: int | None = None,
    use_snapshot: bool = True,
    snapshot: Snapshot | None = None,
    messages: bool = False,
) -> RestorePoint:
    """Rebuild a run's state from its latest snapshot and the step deltas after it.

    ``last_step`` is the run record's iteration: when the snapshot is that step, no delta can
    follow it and they are not read. Falls back from an unreadable snapshot (or with
    ``use_snapshot=False``) to replaying every step delta. ``snapshot``: the latest snapshot,
    if already read (with the run record that ``last_step`` comes from). ``messages``: the
    histories of messages a snapshot's JSON holds are read as lists of ``Message``s
    (``stored_state``), for ``restored_baseline``.
    """
    base: dict[str, Any] = {}
    step_no, seq = -1, 0
    if not use_snapshot:
        snapshot = None
    elif snapshot is None:
        try:
            snapshot = store.latest_snapshot(run_id)
        except StateCorruptionError:
            snapshot = None
    if snapshot is None:
        steps = store.read_steps(run_id, after_step=-1)
    else:
        step_no, seq = snapshot.step, snapshot.seq
        is_last = last_step is not None and snapshot.step == last_step
        steps = [] if is_last else store.read_steps(run_id, after_step=snapshot.step)
        typed = None
        if messages and not steps and snapshot.data is not None:
            typed = _kept_old(stored_state, snapshot.data)
        base = snapshot.state if typed is None else typed
    state = rebuild_state(base, (s.delta for s in steps), copy_base=False)
    if steps:
        step_no, seq = steps[-1].step, steps[-1].seq
    if step_no < 0:
        raise StateCorruptionError(f"run '{run_id}' has no recorded state to resume from")
    text = snapshot.text if snapshot is not None and not steps else None
    return RestorePoint(state, step_no, seq, text)


T = TypeVar("T")


def _kept_old(build: Callable[[bytes], T], data: bytes) -> T:
    """``build(data)`` for a resume's state, whose objects (a history of hundreds of messages)
    live as long as the run's stretch: made with the cyclic collector off and then moved to its
    oldest generation, so that no collection of young objects walks them on the way (one every
    700 objects made, each walking all the young objects there are). The collector is left as
    it was; it does nothing of this when it is off, or when the application keeps objects out
    of it (``gc.freeze``)."""
    if not gc.isenabled() or gc.get_freeze_count():
        return build(data)
    gc.disable()
    try:
        return build(data)
    finally:
        gc.freeze()  # every tracked object to the permanent generation, the young count to 0
        gc.unfreeze()  # and all of them back, into the oldest generation
        gc.enable()


_BY_FIELD = strict_decoder(dict[str, dict[str, Raw]])


class _AgentAndRuntime(Record, forbid_unknown_fields=True):
    """A state of the usual shape, read in one pass: the agent's fields, each list of them read
    as message records (a field that holds a list of anything else fails the read), and the
    runtime state."""

    agent: dict[str, list[MessageRecord] | dict[str, Any] | str | int | float | bool | None]
    runtime: dict[str, Any]


_IN_ONE_PASS = strict_decoder(_AgentAndRuntime)


def stored_state(data: bytes) -> dict[str, Any] | None:
    """The state a snapshot's JSON ``data`` holds, with each history of messages that its
    runtime state names as a field of a part of it (``["agent", "messages"]``) read straight
    into a list of ``Message``s; None when the state's parts are not all objects or the JSON
    is of a kind only the general reader reads.

    A state of the usual shape (an agent whose lists are its histories of messages, and the
    runtime state) is read in one pass; any other in two, each field found first."""
    try:
        usual = _IN_ONE_PASS(data)
    except ValueError:
        pass
    else:
        read = _read_in_one_pass(usual)
        if read is not None:
            return read
    try:
        parts = _BY_FIELD(data)
    except ValueError:
        return None
    runtime = {name: loads(bytes(raw)) for name, raw in parts.get("runtime", {}).items()}
    typed = _histories(runtime)
    state: dict[str, Any] = {}
    for key, fields in parts.items():
        if key == "runtime":
            state[key] = runtime
            continue
        state[key] = value = {}
        for name, raw in fields.items():
            if (key, name) in typed:
                try:
                    value[name] = messages_from_json(raw)
                    continue
                except ValueError:  # the general reader reads it, restored_baseline says why
                    pass
            value[name] = loads(bytes(raw))
    return state


def _histories(runtime: dict[str, Any]) -> set[tuple[Any, Any]]:
    """The fields (``("agent", "messages")``) the runtime state names as histories of
    messages."""
    entries = runtime.get(APPEND_ONLY)
    typed = set()
    for entry in entries if isinstance(entries, list) else ():
        path, messages = _entry(entry)
        if messages and isinstance(path, list) and len(path) == 2:
            typed.add((path[0], path[1]))
    return typed


def _read_in_one_pass(usual: _AgentAndRuntime) -> dict[str, Any] | None:
    """The state ``_IN_ONE_PASS`` read, each of its histories built into messages; None when
    a list it read as message records is not one of them (the two-pass read then reads it
    as what it is)."""
    typed = _histories(usual.runtime)
    agent: dict[str, Any] = {}
    for name, value in usual.agent.items():
        if type(value) is list and value:
            if ("agent", name) not in typed:
                return None
            agent[name] = messages_from_records(value)
        else:
            agent[name] = value
    return {"agent": agent, "runtime": usual.runtime}


def restored_baseline(point: RestorePoint) -> Baseline:
    """The baseline a stretch resuming from ``point`` diffs its first step against.

    The lists the runtime state names append-only become ``AppendOnlyList``s in ``point``'s
    state, their items frozen (or read as messages) once, here: the agent's ``restore_state`` receives them so (and
    wrapping one again copies no item), and the baseline shares their items and knows it
    holds them, so the first step compares none of the restored history. Without such lists
    the baseline shares the restored state with the agent and checks it at the first diff.
    """
    state = point.state
    runtime = state.get("runtime")
    paths = runtime.get(APPEND_ONLY) if isinstance(runtime, dict) else None
    logs: dict[tuple[str | int, ...], AppendOnlyList] = {}
    for entry in paths if isinstance(paths, list) else ():
        path, messages = _entry(entry)
        log = _adopt(state, path, messages)
        if log is not None:
            logs[tuple(path)] = log
    if not logs:
        return Baseline(state, shared=True, text=point.text)
    return Baseline.restored(state, logs)


def restored_lists(
    state: dict[str, Any], paths: Any
) -> list[tuple[list[str | int], AppendOnlyList]]:
    """The ``AppendOnlyList``s ``restored_baseline`` made at ``paths`` of ``state``, with their
    paths: the histories a resumed stretch holds as frozen records."""
    found: list[tuple[list[str | int], AppendOnlyList]] = []
    for entry in paths if isinstance(paths, list) else ():
        path = _entry(entry)[0]
        value: Any = state
        for key in path if isinstance(path, list) else ():
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                value = None
                break
        if type(value) is AppendOnlyList:
            found.append((list(path), value))
    return found


def _adopt(state: dict[str, Any], path: Any, messages: bool) -> AppendOnlyList | None:
    """The list at ``path`` of ``state`` made an ``AppendOnlyList`` in place, of ``Message``s
    when ``messages`` says it holds their JSON; None (and the state left alone) when ``path``
    names no list."""
    if not isinstance(path, list) or not path:
        return None
    parent: Any = state
    try:
        for key in path[:-1]:
            parent = parent[key]
        value = parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return None
    if type(value) is not list or type(parent) not in (dict, list):
        return None
    # the restored state is this stretch's own, decoded from the record: its items are
    # frozen in place, then taken as they are
    log = AppendOnlyList()
    if messages and holds_messages(value):  # read as messages (stored_state): taken as they are
        list.extend(log, value)
    elif messages:
        try:
            list.extend(log, Message.from_records(value))
        except (KeyError, TypeError, AttributeError) as exc:
            raise StateCorruptionError(f"a history of messages does not read: {exc!r}") from exc
    else:
        list.extend(log, map(freeze_decoded, value))
    parent[path[-1]] = log
    return log


def load_state(store: RunLog, run_id: str) -> tuple[dict[str, Any], int, int]:
    """Rebuild a run's state: returns (state, last committed step, that step's seq)."""
    point = restore_point(store, run_id)
    return point.state, point.step, point.seq


def session_usage(store: RunLog, session_id: str, *, but: str = "") -> int:
    """Tokens the runs of ``session_id`` (except ``but``) used, from their last usage frames."""
    total = 0
    for run in store.list_runs(session_id=session_id, limit=1_000_000):
        if run.id == but:
            continue
        usage = [f for f in store.read_frames(run.id) if isinstance(f, UsageFrame)]
        if usage:
            total += usage[-1].run_input_tokens + usage[-1].run_output_tokens
    return total
