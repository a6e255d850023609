"""The in-memory run log, for tests and throwaway runs; same semantics as the SQLite one."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from kforge.errors import (
    InvalidRunStateError,
    RunLeasedError,
    RunNotFoundError,
    StoreError,
    WriteConflictError,
)
from kforge.frames import Frame, frame_from_json, frame_to_json, utc_now
from kforge.jsoncodec import dumps, loads
from kforge.store.base import (
    UPDATABLE_RUN_FIELDS,
    RunRecord,
    RunStatus,
    Snapshot,
    StepRecord,
    run_with_snapshot,
)
from kforge.store.lease import Lease, owner_alive
from kforge.store.memory_documents import MemoryDocuments

__all__ = ["MemoryRunLog"]


class MemoryRunLog(MemoryDocuments):
    """``RunLog`` in dictionaries. Values are copied through JSON, as a real store would."""

    def __init__(self) -> None:
        super().__init__()
        self._runs: dict[str, RunRecord] = {}
        self._frames: dict[str, list[str]] = {}
        self._steps: dict[str, list[StepRecord]] = {}
        self._snapshots: dict[str, str] = {}
        self._lock = threading.RLock()

    def create_run(
        self, run: RunRecord, frames: Sequence[Frame] = (), *, step: StepRecord | None = None
    ) -> None:
        with self._lock:
            if run.id in self._runs:
                raise StoreError(f"run '{run.id}' already exists")
            stored = copy.deepcopy(run)
            stored.last_seq = 0
            self._runs[run.id] = stored
            self._frames[run.id] = []
            self._steps[run.id] = []
            if frames:
                self._append(run.id, frames)
            if step is not None:
                self._put_step(run.id, step)
            run.last_seq = stored.last_seq

    def get_run(self, run_id: str) -> RunRecord:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                raise RunNotFoundError(run_id)
            return copy.deepcopy(run)

    def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        parent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[RunRecord]:
        with self._lock:
            runs = [
                r
                for r in self._runs.values()
                if (status is None or r.status == status)
                and (parent_id is None or r.parent_id == parent_id)
                and (session_id is None or r.session_id == session_id)
            ]
            ordered = list(reversed(runs))
            ordered.sort(key=lambda r: r.created_at, reverse=True)
            return [copy.deepcopy(r) for r in ordered[:limit]]

    def _put_step(self, run_id: str, step: StepRecord) -> None:
        steps = [s for s in self._steps[run_id] if s.step != step.step]
        steps.append(StepRecord(step.step, step.seq, loads(dumps(step.delta))))
        self._steps[run_id] = steps

    def commit(
        self,
        run_id: str,
        frames: Sequence[Frame],
        *,
        step: StepRecord | None = None,
        snapshot: Snapshot | None = None,
        run_fields: dict[str, Any] | None = None,
        lease: Lease | None = None,
        repeatable: bool = False,
    ) -> None:
        del repeatable  # nothing here waits for a disk
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                raise RunNotFoundError(run_id)
            now = time.time()
            if lease is not None:
                holder, expires = run.lease_owner, run.lease_expires_at
                if (
                    holder is not None
                    and holder not in (lease.owner, lease.takeover)
                    and expires is not None
                    and expires >= now
                    and owner_alive(holder)
                ):
                    raise RunLeasedError(run_id, holder, expires)
            if run_fields and set(run_fields) - UPDATABLE_RUN_FIELDS:
                raise StoreError(
                    f"cannot update run fields {sorted(set(run_fields) - UPDATABLE_RUN_FIELDS)}"
                )
            self._check_seqs(run, frames)
            if frames:
                self._append(run_id, frames)
            if step is not None:
                self._put_step(run_id, step)
            if snapshot is not None:
                self._snapshots[run_id] = dumps(
                    {"step": snapshot.step, "seq": snapshot.seq, "state": snapshot.state}
                )
            if run_fields:
                for key, value in run_fields.items():
                    setattr(run, key, copy.deepcopy(value))
                run.updated_at = utc_now()
            if lease is not None:
                run.lease_owner = None if lease.release else lease.owner
                run.lease_expires_at = None if lease.release else now + lease.ttl_s
                run.heartbeat_at = now

    def renew_lease(self, run_id: str, lease: Lease) -> bool:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or run.lease_owner != lease.owner:
                return False
            now = time.time()
            run.heartbeat_at = now
            if lease.release:
                run.lease_owner = run.lease_expires_at = None
            else:
                run.lease_expires_at = now + lease.ttl_s
            return True

    def _check_seqs(self, run: RunRecord, frames: Sequence[Frame]) -> None:
        for offset, frame in enumerate(frames):
            if frame.seq != run.last_seq + 1 + offset or frame.run_id != run.id:
                raise WriteConflictError(
                    f"run '{run.id}': frame seq {frame.seq} does not continue the log "
                    f"(expected {run.last_seq + 1 + offset}); another writer may be running this run"
                )

    def _append(self, run_id: str, frames: Sequence[Frame]) -> None:
        run = self._runs[run_id]
        self._check_seqs(run, frames)
        self._frames[run_id].extend(frame_to_json(f) for f in frames)
        run.last_seq = frames[-1].seq

    def read_frames(
        self, run_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[Frame]:
        with self._lock:
            if run_id not in self._frames:
                return []
            rows = self._frames[run_id][after_seq:]
            if limit is not None:
                rows = rows[:limit]
        return [frame_from_json(r) for r in rows]

    def read_steps(
        self, run_id: str, *, after_step: int = 0, limit: int | None = None
    ) -> list[StepRecord]:
        with self._lock:
            steps = sorted(self._steps.get(run_id, []), key=lambda s: s.step)
            chosen = [s for s in steps if s.step > after_step]
            return [copy.deepcopy(s) for s in chosen[:limit]]

    def get_run_with_snapshot(self, run_id: str) -> tuple[RunRecord, Snapshot | None]:
        with self._lock:  # one moment: no commit between the two reads
            return run_with_snapshot(self, run_id)

    def latest_snapshot(self, run_id: str) -> Snapshot | None:
        with self._lock:
            raw = self._snapshots.get(run_id)
        if raw is None:
            return None
        data = loads(raw)
        return Snapshot(data["step"], data["seq"], data["state"])

    def corrupt_snapshot(self, run_id: str, text: str = "{not json") -> None:
        """Overwrite a snapshot with unreadable bytes (for recovery tests)."""
        with self._lock:
            self._snapshots[run_id] = text

    def fork_run(self, source_id: str, new_run: RunRecord, *, upto_seq: int) -> None:
        with self._lock:
            source = self._runs.get(source_id)
            if source is None:
                raise RunNotFoundError(source_id)
            if upto_seq < 0 or upto_seq > source.last_seq:
                raise InvalidRunStateError(
                    f"run '{source_id}' has frames 1..{source.last_seq}; "
                    f"cannot fork at seq {upto_seq}"
                )
            self.create_run(new_run)
            copied = [
                replace(f, run_id=new_run.id) for f in self.read_frames(source_id, limit=upto_seq)
            ]
            if copied:
                self._append(new_run.id, copied)
            self._steps[new_run.id] = [
                copy.deepcopy(s) for s in self._steps[source_id] if s.seq <= upto_seq
            ]
            new_run.last_seq = upto_seq

    def run_ids_with_prefix(self, prefix: str, *, limit: int = 10) -> list[str]:
        with self._lock:
            return sorted(r for r in self._runs if r.startswith(prefix))[:limit]

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        with self._lock:
            for run_id in list(run_ids):
                for table in (self._runs, self._frames, self._steps, self._snapshots):
                    table.pop(run_id, None)

    def close(self) -> None:
        pass
