"""Commit notices from PostgreSQL: a thread that LISTENs on the frames channel and reports each
``RUN_ID SEQ`` notice, so subscribers learn of frames that other processes committed."""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Callable
from typing import Any

from kforge.errors import StoreError
from kforge.store.postgres_schema import FRAMES_CHANNEL

__all__ = ["CommitNotices"]

OnNotice = Callable[[str | None, int], None]
"""Called with a run id and its last committed seq; with ``(None, 0)`` after the connection was
lost and made again (notices may have been missed: every subscriber should look again)."""


class CommitNotices:
    """Listens on its own connection until :meth:`stop`; reconnects when the connection drops.

    The thread waits on the connection's socket and on a wake-up socket together, so
    :meth:`stop` ends it at once (a one-shot command does not wait out a polling interval)."""

    def __init__(
        self, url: str, on_notice: OnNotice, *, retry_s: float = 1.0, poll_s: float = 5.0
    ) -> None:
        import psycopg

        self._psycopg = psycopg
        self.url = url
        self.on_notice = on_notice
        self.retry_s = retry_s
        self.poll_s = poll_s
        """The longest wait without looking at the connection (notices that a TLS layer read
        ahead of the socket are taken then)."""
        self._wake, self._woken = socket.socketpair()
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._conn: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._listen, name="kforge-notices", daemon=True)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start listening; returns once LISTEN is in force, so no later commit goes unseen."""
        self._thread.start()
        if not self._listening.wait(timeout_s) or self._error is not None:
            self.stop()
            raise StoreError(
                f"cannot listen for commits on PostgreSQL ({self._error or 'timed out'}); "
                "check that the server is up"
            )

    def _listen(self) -> None:
        psycopg = self._psycopg
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {FRAMES_CHANNEL}")
                    self._listening.set()
                    if not first:
                        self.on_notice(None, 0)
                    first = False
                    while not self._stop.is_set():
                        select.select([conn.fileno(), self._woken], [], [], self.poll_s)
                        for notice in conn.notifies(timeout=0):
                            run_id, _, seq = notice.payload.rpartition(" ")
                            self.on_notice(run_id, int(seq))
            except psycopg.Error as exc:
                if first:
                    self._error = exc
                    self._listening.set()
                    return
                self._stop.wait(self.retry_s)
            finally:
                self._conn = None

    def stop(self) -> None:
        self._stop.set()
        try:
            self._wake.send(b"x")
        except OSError:  # stopped before: the socket is closed
            pass
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if not self._thread.is_alive():
            self._wake.close()
            self._woken.close()
