"""Input no client should send: seqs past a 64-bit integer, arguments nested hundreds of levels,
bodies nested past the parser; each answered with a problem document, none stored, and a stored
value no response can carry never breaks a listing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kforge.server import ServerSettings
from tests.server.conftest import make_runtime
from tests.server.helpers import LiveServer, iter_events


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def finished_run(client: httpx.Client) -> str:
    run = client.post("/runs", json={"agent": "test.paced", "args": {"steps": 1}}).json()
    with client.stream("GET", f"/runs/{run['id']}/stream") as response:
        events = list(iter_events(response))
    assert events[-1].event == "end"
    return str(run["id"])


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["code"] == code and problem["status"] == status
    return problem


def test_seqs_past_a_64_bit_integer_are_refused_with_400(server: LiveServer) -> None:
    with server.client() as client:
        run_id = finished_run(client)
        for seq in (2**63, 2**64 + 5, 10**30):
            frames = client.get(f"/runs/{run_id}/frames", params={"after_seq": seq})
            assert "largest seq" in assert_problem(frames, 400, "invalid-seq")["detail"]
            by_query = client.get(f"/runs/{run_id}/stream", params={"after_seq": seq})
            assert_problem(by_query, 400, "invalid-seq")
            by_header = client.get(f"/runs/{run_id}/stream", headers={"Last-Event-ID": str(seq)})
            assert "Last-Event-ID" in assert_problem(by_header, 400, "invalid-seq")["detail"]
        # the largest seq a store holds is still a seq: nothing after it, and the stream ends
        last = client.get(f"/runs/{run_id}/frames", params={"after_seq": 2**63 - 1}).json()
        assert last["frames"] == [] and last["next_after_seq"] is None
        headers = {"Last-Event-ID": str(2**63 - 1)}
        with client.stream("GET", f"/runs/{run_id}/stream", headers=headers) as response:
            events = list(iter_events(response))
        assert [e.event for e in events] == ["status", "end"]


def test_arguments_nested_too_deep_are_refused_before_anything_is_stored(
    server: LiveServer,
) -> None:
    with server.client() as client:
        before = client.get("/runs").json()["runs"]
        for levels in (65, 300, 900):
            response = client.post(
                "/runs", json={"agent": "test.paced", "args": {"x": nested(levels)}}
            )
            problem = assert_problem(response, 422, "invalid-request")
            assert "more than 64 levels" in problem["detail"]
        assert client.get("/runs").json()["runs"] == before
        fine = client.post("/runs", json={"agent": "test.paced", "args": {"x": nested(60)}})
        assert fine.status_code == 201, fine.text


@pytest.fixture
def roomy(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose body limit lets larger bodies through to the parser and validation."""
    settings = ServerSettings(max_body_bytes=2_000_000)
    with LiveServer(make_runtime(tmp_path), settings, model="test") as live:
        yield live


def test_arguments_too_large_are_refused_where_the_body_limit_allows_them(
    roomy: LiveServer,
) -> None:
    with roomy.client() as client:
        args = {"x": ["y" * 90] * 6000}  # about 560 kB
        huge = client.post("/runs", json={"agent": "test.paced", "args": args})
        assert "bytes" in assert_problem(huge, 422, "invalid-request")["detail"]
        answer = {"action": "modify", "modifications": args}
        run = client.post("/runs", json={"agent": "test.paced", "args": {"ask_at": 1}}).json()
        refused = client.post(f"/runs/{run['id']}/answer", json=answer)
        assert "modifications" in assert_problem(refused, 422, "invalid-request")["detail"]
        assert [r["id"] for r in client.get("/runs").json()["runs"]] == [run["id"]]


def test_a_stored_value_too_deep_to_send_is_shown_cut_and_breaks_no_listing(
    server: LiveServer,
) -> None:
    runtime = server.app.state.kforge.runtime
    with server.client() as client:
        ok_id = finished_run(client)
        # the Python API stores what the HTTP API now refuses (and older servers stored)
        deep_id = server.call(runtime.start("test.paced", {"steps": 1, "x": nested(300)}))
        listing = client.get("/runs")
        assert listing.status_code == 200, listing.text
        runs = {r["id"]: r for r in listing.json()["runs"]}
        assert runs[deep_id]["unreadable"] == ["args"]
        assert "unreadable" not in runs[ok_id]
        assert runs[deep_id]["args"]["steps"] == 1  # what can be shown still is
        one = client.get(f"/runs/{deep_id}")
        assert one.status_code == 200 and one.json()["unreadable"] == ["args"]
        tree = client.get("/agent/tree")
        assert tree.status_code == 200 and deep_id in tree.json()["roots"]
        assert client.get(f"/agent/{deep_id}").status_code == 200
        deleted = client.delete(f"/runs/{deep_id}")
        assert deleted.status_code == 200 and deleted.json()["status"] == "deleted"


def test_a_body_nested_past_the_parser_is_invalid_json(roomy: LiveServer) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with roomy.client() as client:
        before = len(client.get("/runs").json()["runs"])
        for path in ("/runs", "/corpora/samples/search"):
            response = client.post(path, content=deep, headers={"Content-Type": "application/json"})
            problem = assert_problem(response, 400, "invalid-json")
            assert "nested too deeply" in problem["detail"]
        latin = client.post(
            "/runs",
            content='{"agent": "caf\xe9"}'.encode("latin-1"),
            headers={"Content-Type": "application/json"},
        )
        assert_problem(latin, 400, "invalid-json")
        assert len(client.get("/runs").json()["runs"]) == before


def test_the_api_takes_whole_run_ids_and_names_the_run_a_prefix_fits(server: LiveServer) -> None:
    with server.client() as client:
        run_id = finished_run(client)
        for path in (f"/runs/{run_id[:8]}", f"/runs/{run_id[:8]}/frames", f"/agent/{run_id[:8]}"):
            problem = assert_problem(client.get(path), 404, "run-not-found")
            assert f"did you mean '{run_id}'" in problem["detail"]
            assert "kforge" not in problem["detail"]  # no CLI advice from the HTTP API
        nothing = assert_problem(client.get("/runs/zz-none"), 404, "run-not-found")
        assert "GET /runs lists them" in nothing["detail"]
        assert client.get(f"/runs/{run_id}").status_code == 200


def test_a_listing_that_meets_a_damaged_record_shows_the_others_and_marks_it(
    server: LiveServer, tmp_path: Path
) -> None:
    with server.client() as client:
        ids = [finished_run(client) for _ in range(3)]
        with sqlite3.connect(tmp_path / "k.db") as db:  # damaged outside kforge
            db.execute("UPDATE runs SET input = '{oops' WHERE id = ?", (ids[1],))
        listing = client.get("/runs")
        assert listing.status_code == 200, listing.text
        runs = listing.json()["runs"]
        assert [r["id"] for r in runs if "unreadable" not in r] == [ids[2], ids[0]]
        [marked] = [r for r in runs if r.get("unreadable")]
        assert marked["id"] == ids[1] and marked["status"] == "unreadable"
        assert "damaged" in marked["error"]
        done = client.get("/runs", params={"status": "completed"}).json()["runs"]
        assert {r["id"] for r in done} == set(ids)
        assert client.get(f"/runs/{ids[0]}").status_code == 200


def test_a_server_starts_over_a_store_with_a_damaged_record(tmp_path: Path) -> None:
    first = LiveServer(make_runtime(tmp_path), ServerSettings(), model="test")
    with first, first.client() as client:
        ids = [finished_run(client) for _ in range(2)]
    with sqlite3.connect(tmp_path / "k.db") as db:
        db.execute("UPDATE runs SET input = '{oops', status = 'running' WHERE id = ?", (ids[0],))
    again = LiveServer(make_runtime(tmp_path), ServerSettings(), model="test")
    with again, again.client() as client:
        assert client.get(f"/runs/{ids[1]}").json()["status"] == "completed"
        listed = {r["id"]: r["status"] for r in client.get("/runs").json()["runs"]}
        assert listed == {ids[1]: "completed", ids[0]: "unreadable"}
