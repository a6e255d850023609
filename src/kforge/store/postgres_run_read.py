"""A resume's read of its run and snapshot as a statement of its own, prepared once on each
connection (by its warm-up) and read in binary.

A resume reads one row: the run's twenty columns and its snapshot, whose state is the whole
agent state as JSON (tens of kilobytes for a long history). Through the driver's cursor the
state arrives as text to be encoded again for its checksum, and every column goes through the
driver's loaders; here each column is read from its binary form by its type, and the state
stays the bytes that came (its checksum and the resume's own reader want them so)."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from kforge.store.postgres_commit import run_prepared
from kforge.store.records import RUN_COLUMNS

__all__ = ["RUN_READ", "RUN_READ_NAME", "RUN_READ_TYPES", "read_run_row"]

RUN_READ_NAME = b"kforge_run_1"
RUN_READ_TYPES = "text"
RUN_READ = (
    f"SELECT {RUN_COLUMNS}, s.step, s.seq, s.state, s.checksum FROM runs "
    "LEFT JOIN snapshots s ON s.run_id = runs.id WHERE runs.id = $1"
)
"""A run and its snapshot in one round trip (their column names do not overlap)."""

_STATE_COLUMN = 22
"""The snapshot's state, left as the bytes read."""

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""What a binary ``timestamptz`` counts microseconds from."""
_FLOAT8 = struct.Struct("!d")


def _integer(data: bytes) -> int:
    return int.from_bytes(data, "big", signed=True)


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _moment(data: bytes) -> datetime:
    return _EPOCH + timedelta(microseconds=_integer(data))


def _double(data: bytes) -> float:
    return float(_FLOAT8.unpack(data)[0])


_READERS = {
    25: _text,  # text
    1043: _text,  # varchar
    21: _integer,  # smallint
    23: _integer,  # integer
    20: _integer,  # bigint
    701: _double,  # double precision
    1184: _moment,  # timestamptz
}
"""How a binary column of each type (by its PostgreSQL id) reads."""


def read_run_row(conn: Any, run_id: str) -> tuple[Any, ...] | None:
    """The run's row with its snapshot's four columns (the state as UTF-8 bytes) on ``conn``, a
    psycopg connection nothing else is using; None when there is no such run."""
    result = run_prepared(conn, RUN_READ_NAME, RUN_READ, [25], [run_id.encode()], [0], binary=True)
    if result.ntuples == 0:
        return None
    row: list[Any] = []
    for column in range(result.nfields):
        data = result.get_value(0, column)
        if data is None:
            row.append(None)
        elif column == _STATE_COLUMN:
            row.append(bytes(data))
        else:
            row.append(_READERS[result.ftype(column)](data))
    return tuple(row)
