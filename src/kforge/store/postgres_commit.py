"""The step commit of the PostgreSQL run log as a statement of its own, prepared once on each
connection and sent with parameters encoded here.

A step commits through ``kforge_commit`` (``postgres_schema``) with nineteen parameters, three
of them arrays. The driver's general path (a cursor, its adapters looking at each value's type,
arrays element by element, the result through its row makers) costs a step's process more than
the rest of the commit; here the values go as the server reads them (arrays in its binary
layout, the rest as text) and the one result row is read as text. A connection prepares the
statement at its first commit (one round trip), and again if the server no longer has it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg import errors, generators
from psycopg.pq import DiagnosticField, ExecStatus, TransactionStatus

__all__ = [
    "CommitValues",
    "commit_values",
    "mark_prepared",
    "prepare_if_missing",
    "run_prepared",
    "send_commit",
]

_TYPE_NAMES = (
    "text, integer[], text[], bytea[], integer, integer, bytea, bigint, integer, integer, text, "
    "bigint, jsonb, timestamptz, text, text, double precision, boolean, double precision"
)
_PARAMETER_TYPES = [25, 1007, 1009, 1001, 23, 23, 17, 20, 23, 23, 25, 20, 3802, 1184, 25, 25]
_PARAMETER_TYPES += [701, 16, 701]
"""The types of ``kforge_commit``'s parameters (``_TYPE_NAMES``) by their PostgreSQL ids."""
_CALL = "kforge_commit(" + ", ".join(f"${n}" for n in range(1, 20)) + ")"
_STATEMENTS = {
    False: (b"kforge_commit_1", f"SELECT * FROM {_CALL}"),
    True: (
        b"kforge_commit_lazy_1",
        f"SELECT c.* FROM set_config('synchronous_commit', 'off', true), {_CALL} c",
    ),
}
"""The statement's name and text, by whether it waits for the WAL flush (``lazy``: it does
not; the WAL is written in order, so the next commit that waits flushes it too)."""

_TYPE_OIDS = {"int4": 23, "text": 25, "bytea": 17}
_FORMATS = (0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
"""Binary for the arrays and the delta, text for the rest."""
_ARRAY_HEAD = struct.Struct("!iiiii")
_UNDEFINED_STATEMENT = b"26000"

CommitValues = list[bytes | None]


def prepare_if_missing(others: Sequence[tuple[bytes, str, str]] = ()) -> str:
    """PL/pgSQL statements that prepare the commit statements, and ``others`` (each its name,
    parameter types and text), in the session unless it has them (a connection's warm-up;
    ``mark_prepared`` then)."""
    statements = [(name, _TYPE_NAMES, text) for name, text in _STATEMENTS.values()]
    return "".join(
        f"IF NOT EXISTS (SELECT FROM pg_prepared_statements WHERE name = '{name.decode()}') "
        f"THEN EXECUTE $p$PREPARE {name.decode()} ({types}) AS {text}$p$; END IF;\n"
        for name, types, text in [*statements, *others]
    )


def mark_prepared(conn: Any, others: Sequence[bytes] = ()) -> None:
    """Note that ``conn``'s session has the commit statements and ``others`` (named as given
    to ``prepare_if_missing``, which ran)."""
    conn.__dict__["_kforge_prepared"] = {name for name, _ in _STATEMENTS.values()} | set(others)


def _array(kind: str, items: Sequence[bytes]) -> bytes:
    """A one-dimensional array of ``kind`` in PostgreSQL's binary layout."""
    head = _ARRAY_HEAD.pack(1, 0, _TYPE_OIDS[kind], len(items), 1)
    return head + b"".join(len(item).to_bytes(4, "big") + item for item in items)


def _int_array(values: Sequence[int]) -> bytes:
    head = _ARRAY_HEAD.pack(1, 0, _TYPE_OIDS["int4"], len(values), 1)
    return head + struct.pack(f"!{2 * len(values)}i", *[x for v in values for x in (4, v)])


def _text(value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, datetime):
        return value.isoformat().encode()
    return str(value).encode()


def commit_values(
    run_id: str,
    seqs: Sequence[int],
    types: Sequence[str],
    bodies: Sequence[bytes],
    step: tuple[int, int, bytes, int] | None,
    snapshot: tuple[int, int, str, int] | None,
    fields: str,
    updated: datetime | None,
    lease: tuple[str, str | None, float, bool] | None,
    now: float,
) -> CommitValues:
    """The parameters of ``kforge_commit``, encoded: ``step`` is (step, seq, packed delta, its
    checksum), ``snapshot`` (step, seq, state JSON, its checksum), ``lease`` (owner, takeover,
    ttl, release)."""
    step_values = [_text(step[0]), _text(step[1]), step[2], _text(step[3])] if step else [None] * 4
    snapshot_values = (
        [_text(snapshot[0]), _text(snapshot[1]), snapshot[2].encode(), _text(snapshot[3])]
        if snapshot
        else [None] * 4
    )
    lease_values = (
        [lease[0].encode(), _text(lease[1]), _text(float(lease[2])), _text(lease[3])]
        if lease
        else [None, None, None, b"f"]
    )
    return [
        run_id.encode(),
        _int_array(seqs),
        _array("text", [t.encode() for t in types]),
        _array("bytea", bodies),
        *step_values,
        *snapshot_values,
        fields.encode(),
        _text(updated),
        *lease_values,
        _text(float(now)),
    ]


def send_commit(
    conn: Any, values: CommitValues, *, lazy: bool
) -> tuple[str, int | None, str | None, float | None]:
    """Run the commit on ``conn`` (a psycopg connection that nothing else is using): its
    ``(outcome, last seq, lease holder, lease expiry)``. The server's errors are raised as the
    driver raises them (``psycopg.errors``)."""
    name, text = _STATEMENTS[lazy]
    result = run_prepared(conn, name, text, _PARAMETER_TYPES, values, _FORMATS)
    outcome, last, holder, expires = (result.get_value(0, column) for column in range(4))
    return (
        bytes(outcome or b"").decode(),
        int(last) if last is not None else None,
        bytes(holder).decode() if holder is not None else None,
        float(expires) if expires is not None else None,
    )


def run_prepared(
    conn: Any,
    name: bytes,
    text: str,
    types: Sequence[int],
    values: CommitValues,
    formats: Sequence[int],
    *,
    binary: bool = False,
) -> Any:
    """The result (libpq's) of the statement ``name`` run on ``conn`` with ``values`` (each in
    its format of ``formats``), its rows in binary with ``binary``; prepared first (``text``,
    its parameters of the types ``types``) when the session does not have it yet. The server's
    errors are raised as the driver raises them."""
    prepared: set[bytes] = conn.__dict__.setdefault("_kforge_prepared", set())
    if name not in prepared:
        _prepare(conn, name, text, types)
        prepared.add(name)
    result = _execute(conn, name, values, formats, binary)
    if (
        result.status != ExecStatus.TUPLES_OK
        and result.error_field(DiagnosticField.SQLSTATE) == _UNDEFINED_STATEMENT
        and conn.pgconn.transaction_status == TransactionStatus.IDLE
    ):
        # the session lost it (``DISCARD ALL`` by a pool in between): prepared again (not
        # inside a transaction, which the failure has aborted)
        _prepare(conn, name, text, types)
        result = _execute(conn, name, values, formats, binary)
    if result.status != ExecStatus.TUPLES_OK:
        raise errors.error_from_result(result, encoding=conn.info.encoding)
    return result


def _prepare(conn: Any, name: bytes, text: str, types: Sequence[int]) -> None:
    pgconn = conn.pgconn
    pgconn.send_prepare(name, text.encode(), types)
    result = conn.wait(generators.execute(pgconn))[-1]
    if result.status != ExecStatus.COMMAND_OK:
        raise errors.error_from_result(result, encoding=conn.info.encoding)


def _execute(
    conn: Any, name: bytes, values: CommitValues, formats: Sequence[int], binary: bool
) -> Any:
    pgconn = conn.pgconn
    pgconn.send_query_prepared(name, values, formats, 1 if binary else 0)
    return conn.wait(generators.execute(pgconn))[-1]
