"""Round trips and statements of the PostgreSQL connections a block makes, counted from libpq's
trace of the messages each sends: a simple query or a pipeline's (or a single statement's) sync
waits for the server, a simple query or a bind runs a statement."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import psycopg
from psycopg.pq import Trace


class Traced:
    """The connections made in ``traced()``, traced to one file."""

    def __init__(self, out: IO[str], path: Path) -> None:
        self.out, self.path = out, path
        self.made: list[Any] = []
        self._counted = 0

    def follow(self, conn: Any) -> None:
        conn.pgconn.trace(self.out.fileno())
        conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)

    def count(self) -> dict[str, int]:
        """Round trips and statements since the last count (tracing goes on)."""
        for conn in self.made:
            if not conn.closed:
                conn.pgconn.untrace()  # flushes what libpq buffered
        sent = [
            line.split("\t")
            for line in self.path.read_text().splitlines()[self._counted :]
            if line.startswith("F\t")
        ]
        self._counted = len(self.path.read_text().splitlines())
        for conn in self.made:
            if not conn.closed:
                self.follow(conn)
        return {
            "round_trips": sum(1 for m in sent if m[2] in ("Query", "Sync")),
            "statements": sum(1 for m in sent if m[2] in ("Query", "Bind")),
        }


@contextmanager
def traced(path: Path) -> Iterator[Traced]:
    """Trace every connection ``psycopg.connect`` makes in the block."""
    connect = psycopg.connect
    with path.open("w") as out:
        tracer = Traced(out, path)

        def traced_connect(*args: Any, **kwargs: Any) -> Any:
            conn = connect(*args, **kwargs)
            tracer.follow(conn)
            tracer.made.append(conn)
            return conn

        psycopg.connect = traced_connect  # type: ignore[assignment]
        try:
            yield tracer
        finally:
            psycopg.connect = connect  # type: ignore[assignment]
            for conn in tracer.made:
                if not conn.closed:
                    conn.pgconn.untrace()
