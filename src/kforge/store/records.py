"""How stored rows become records, for the SQL stores: frames, step deltas and snapshots checked
against their checksums, and run rows (in ``RUN_COLUMNS`` order) as ``RunRecord``."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kforge.errors import StateCorruptionError
from kforge.frames import Frame, frame_from_body
from kforge.jsoncodec import dumps, loads
from kforge.store.base import RunRecord, RunStatus, Snapshot, StepRecord
from kforge.store.packing import unpack

__all__ = [
    "JSON_RUN_FIELDS",
    "RUN_COLUMNS",
    "checksum",
    "decode_frames",
    "decode_snapshot",
    "decode_steps",
    "run_filter",
    "run_from_row",
    "run_row",
    "verified",
]

RUN_COLUMNS = (
    "id, agent_type, status, created_at, updated_at, input, session_id, parent_id, iteration, "
    "max_iterations, pause_reason, pending_interaction, result, error, forked_from, "
    "forked_at_seq, last_seq, lease_owner, lease_expires_at, heartbeat_at"
)
"""The runs table's columns in ``RunRecord``'s field order."""

JSON_RUN_FIELDS = frozenset({"input", "pending_interaction", "result"})
"""Run fields stored as JSON text."""

_STATUS = {status.value: status for status in RunStatus}


def checksum(text: str) -> int:
    """CRC-32 of the UTF-8 text: what a stored delta or snapshot must still hash to."""
    return zlib.crc32(text.encode("utf-8"))


def verified(run_id: str, what: str, data: bytes | str, crc: int | None) -> str:
    """The stored text, or StateCorruptionError when it is not UTF-8 or fails its checksum."""
    if isinstance(data, str):
        raw, text = data.encode("utf-8"), data
    else:
        raw = data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StateCorruptionError(f"run '{run_id}': {what} is not UTF-8 ({exc})") from exc
    if crc is not None and zlib.crc32(raw) != crc:
        raise StateCorruptionError(f"run '{run_id}': {what} does not match its checksum")
    return text


def decode_frames(run_id: str, rows: Sequence[tuple[int, str, bytes | str]]) -> list[Frame]:
    """Rows of (seq, type, body JSON) as frames; a damaged one names how to save the rest."""
    frames = []
    for seq, type_name, data in rows:
        try:
            frames.append(frame_from_body(type_name, unpack(data), run_id, seq))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise StateCorruptionError(
                f"run '{run_id}': frame seq {seq} is damaged ({exc}); `kforge runs export "
                f"{run_id}` saves the readable frames, `kforge runs fork {run_id} --at "
                f"{seq - 1}` continues from before it"
            ) from exc
    return frames


def decode_steps(
    run_id: str, rows: Sequence[tuple[int, int, bytes | str, int | None]]
) -> list[StepRecord]:
    """Rows of (step, seq, delta JSON, checksum) as step records."""
    steps = []
    for step, seq, stored, crc in rows:
        try:
            data = unpack(stored)
        except ValueError as exc:
            raise StateCorruptionError(f"run '{run_id}': step {step}'s delta {exc}") from exc
        verified(run_id, f"step {step}'s delta", data, crc)
        try:
            steps.append(StepRecord(step, seq, loads(data)))
        except (ValueError, TypeError) as exc:
            raise StateCorruptionError(
                f"run '{run_id}': step {step}'s delta is unreadable: {exc}"
            ) from exc
    return steps


def decode_snapshot(
    run_id: str, row: tuple[int, int, bytes | str, int | None] | None, *, lazy: bool = False
) -> Snapshot | None:
    """A row of (step, seq, state JSON, checksum) as a snapshot (None for no row); ``lazy``
    checks its checksum but leaves its state to be decoded when first used
    (``Snapshot.from_json``), or read another way by a resume."""
    if row is None:
        return None
    text = verified(run_id, "snapshot", row[2], row[3])
    if lazy:
        data = row[2]
        return Snapshot.from_json(
            row[0], row[1], data if isinstance(data, bytes) else text.encode(), text
        )
    try:
        state = loads(row[2])  # the bytes as read, if they are bytes: no second encoding
    except (ValueError, TypeError) as exc:
        raise StateCorruptionError(f"run '{run_id}': snapshot unreadable: {exc}") from exc
    if not isinstance(state, dict):
        raise StateCorruptionError(f"run '{run_id}': snapshot is not an object")
    return Snapshot(row[0], row[1], state, text)


def run_filter(
    mark: str, status: RunStatus | None, parent_id: str | None, session_id: str | None
) -> tuple[str, list[Any]]:
    """The WHERE clause (or "") of a runs listing and its parameters; ``mark`` is the driver's
    placeholder."""
    clauses, params = [], []
    for column, value in (
        ("status", status.value if status else None),
        ("parent_id", parent_id),
        ("session_id", session_id),
    ):
        if value is not None:
            clauses.append(f"{column} = {mark}")
            params.append(value)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def run_from_row(row: Sequence[Any]) -> RunRecord:
    """A runs row in ``RUN_COLUMNS`` order; StateCorruptionError when it cannot be read."""
    try:
        values = list(row)
        values[2] = _STATUS.get(values[2]) or RunStatus(values[2])
        values[3], values[4] = _moment(values[3]), _moment(values[4])
        values[5] = loads(values[5])
        for index in (11, 12):  # pending_interaction, result
            values[index] = loads(values[index]) if values[index] else None
        return RunRecord(*values)
    except (ValueError, TypeError) as exc:
        raise StateCorruptionError(
            f"run '{row[0]}': its record is damaged ({exc}); `kforge runs export {row[0]}` "
            "saves its frames"
        ) from exc


def run_row(run: RunRecord, *, text_times: bool = False) -> tuple[Any, ...]:
    """The values of a new run's row in ``RUN_COLUMNS`` order: no frames yet, no lease; with
    ``text_times`` its timestamps as ISO 8601 text."""
    created: datetime | str = run.created_at
    updated: datetime | str = run.updated_at
    if text_times:
        created, updated = run.created_at.isoformat(), run.updated_at.isoformat()
    return (
        run.id,
        run.agent_type,
        run.status.value,
        created,
        updated,
        dumps(run.input),
        run.session_id,
        run.parent_id,
        run.iteration,
        run.max_iterations,
        run.pause_reason,
        dumps(run.pending_interaction) if run.pending_interaction else None,
        dumps(run.result) if run.result is not None else None,
        run.error,
        run.forked_from,
        run.forked_at_seq,
        0,
        None,
        None,
        None,
    )
