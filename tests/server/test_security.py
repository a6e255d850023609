"""Security defaults and bad requests: each gets a clear 4xx problem and changes nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kforge.cli import main
from kforge.errors import ConfigurationError
from kforge.server import ServerSettings, is_loopback
from tests.server.conftest import make_runtime
from tests.server.helpers import LiveServer, iter_events

TOKEN = "s3cret-token-for-tests-only"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[LiveServer]:
    # Listens on 127.0.0.1 for the test, with the settings of a server on every interface.
    settings = ServerSettings(host="0.0.0.0", token=TOKEN, max_streams_per_client=2)
    with LiveServer(make_runtime(tmp_path), settings, model="test") as live:
        yield live


def run_count(client: httpx.Client, headers: dict[str, str] | None = None) -> int:
    return len(client.get("/runs", headers=headers or {}).json()["runs"])


def test_a_server_off_loopback_refuses_to_start_without_a_token(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    with pytest.raises(ConfigurationError, match="--token"):
        ServerSettings(host="0.0.0.0").check()
    with pytest.raises(ConfigurationError, match="at least 16"):
        ServerSettings(host="0.0.0.0", token="short").check()
    assert main(["serve", "--host", "0.0.0.0", "--no-samples"]) == 1
    assert "refusing to listen on 0.0.0.0 without an API token" in capsys.readouterr().err


def test_every_route_and_stream_checks_the_token(guarded: LiveServer) -> None:
    good = {"Authorization": f"Bearer {TOKEN}"}
    with guarded.client() as client:
        before = run_count(client, good)
        for method, path in [
            ("GET", "/health"),
            ("GET", "/runs"),
            ("POST", "/runs"),
            ("GET", "/runs/x/stream"),
            ("GET", "/agent/tree"),
            ("GET", "/openapi.json"),
            ("GET", "/corpora"),
            ("POST", "/mcp"),
        ]:
            missing = client.request(method, path, json={"agent": "test.paced"})
            assert missing.status_code == 401, path
            assert missing.headers["content-type"] == "application/problem+json"
            assert missing.json()["code"] == "missing-token"
            assert "Authorization: Bearer TOKEN" in missing.json()["detail"]
            wrong = client.request(
                method, path, json={"agent": "test.paced"}, headers={"Authorization": "Bearer no"}
            )
            assert wrong.status_code == 401 and wrong.json()["code"] == "invalid-token"
        assert run_count(client, good) == before
        assert client.get("/ui/").status_code == 200  # the page itself holds no data
        run = client.post("/runs", json={"agent": "test.paced", "args": {"steps": 1}}, headers=good)
        assert run.status_code == 201
        with client.stream("GET", f"/runs/{run.json()['id']}/stream", headers=good) as response:
            assert [e.event for e in iter_events(response)][-1] == "end"


def test_streams_per_client_are_bounded(guarded: LiveServer) -> None:
    good = {"Authorization": f"Bearer {TOKEN}"}
    with guarded.client(headers=good) as client:
        run = client.post("/runs", json={"agent": "test.paced", "args": {"ask_at": 1}}).json()
        url = f"/runs/{run['id']}/stream"
        with client.stream("GET", url) as one, client.stream("GET", url) as two:
            held = [iter_events(one), iter_events(two)]  # closing an iterator closes its stream
            assert [next(events).id for events in held] == ["1", "1"]
            third = client.get(url)
            assert third.status_code == 429 and "close one" in third.json()["detail"]


@pytest.mark.parametrize(
    ("content", "headers", "status", "code", "says"),
    [
        (
            '{"agent": "test.paced",',
            {"Content-Type": "application/json"},
            400,
            "invalid-json",
            "not valid JSON",
        ),
        (
            '{"agent": 5}',
            {"Content-Type": "application/json"},
            422,
            "invalid-request",
            "'agent': Input should be a valid string",
        ),
        (
            '{"agent": "test.paced", "args": []}',
            {"Content-Type": "application/json"},
            422,
            "invalid-request",
            "'args'",
        ),
        (
            '{"agent": "nope"}',
            {"Content-Type": "application/json"},
            422,
            "unknown-agent",
            "GET /agents",
        ),
        (
            '{"agent": "test.paced", "bogus": 1}',
            {"Content-Type": "application/json"},
            422,
            "invalid-request",
            "'bogus': Extra inputs are not permitted",
        ),
        (
            '{"agent": "test.paced", "args": {"x": "' + "y" * 20_000 + '"}}',
            {"Content-Type": "application/json"},
            413,
            "body-too-large",
            "10000 bytes",
        ),
        ("", {"Content-Type": "application/json"}, 422, "invalid-request", "body is required"),
    ],
)
def test_bad_start_requests_are_refused_and_change_nothing(
    server: LiveServer, content: str, headers: dict[str, str], status: int, code: str, says: str
) -> None:
    with server.client() as client:
        before = run_count(client)
        response = client.post("/runs", content=content, headers=headers)
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == "application/problem+json"
        problem = response.json()
        assert problem["code"] == code and problem["status"] == status
        assert says in problem["detail"]
        assert run_count(client) == before


def test_bad_requests_about_runs_are_refused_and_change_nothing(server: LiveServer) -> None:
    with server.client() as client:
        run = client.post("/runs", json={"agent": "test.paced", "args": {"ask_at": 1}}).json()
        with client.stream("GET", f"/runs/{run['id']}/stream") as response:
            for event in iter_events(response):
                if event.event == "interaction.requested":
                    break
        before = client.get(f"/runs/{run['id']}").json()
        cases = [
            (client.get("/runs/nope"), 404, "run-not-found"),
            (client.get("/runs/nope/stream"), 404, "run-not-found"),
            (client.post("/runs/nope/answer", json={"action": "approve"}), 404, "run-not-found"),
            (client.get("/nowhere"), 404, "not-found"),
            (client.put("/runs"), 405, "method-not-allowed"),
            (client.post(f"/runs/{run['id']}/answer", json={}), 422, "invalid-request"),
            (
                client.post(f"/runs/{run['id']}/answer", json={"action": "approve", "text": "y"}),
                422,
                "invalid-request",
            ),
            (
                client.post(f"/runs/{run['id']}/answer", json={"action": "maybe"}),
                422,
                "invalid-request",
            ),
            (
                client.post(f"/runs/{run['id']}/answer", json={"text": "   "}),
                422,
                "invalid-request",
            ),
            (client.post(f"/runs/{run['id']}/answer", json={"text": "sure"}), 422, "invalid-input"),
            (
                client.post(
                    f"/runs/{run['id']}/answer",
                    content=b"approve",
                    headers={"Content-Type": "application/json"},
                ),
                400,
                "invalid-json",
            ),
            (
                client.get(f"/runs/{run['id']}/stream", headers={"Last-Event-ID": "abc"}),
                400,
                "invalid-last-event-id",
            ),
            (client.get(f"/runs/{run['id']}/frames", params={"limit": 0}), 422, "invalid-request"),
            (
                client.post(f"/runs/{run['id']}/fork", json={"at_seq": "three"}),
                422,
                "invalid-request",
            ),
            (client.post(f"/runs/{run['id']}/resume"), 409, "invalid-run-state"),
        ]
        for response, status, code in cases:
            assert response.status_code == status, (response.request.url, response.text)
            problem = response.json()
            assert problem["code"] == code, problem
            assert problem["detail"] and problem["title"]
        after = client.get(f"/runs/{run['id']}").json()
        assert after == before


def test_cors_is_closed_unless_an_origin_is_configured(server: LiveServer, tmp_path: Path) -> None:
    preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    with server.client() as client:
        response = client.options("/runs", headers=preflight)
        assert "access-control-allow-origin" not in response.headers
    settings = ServerSettings(host="0.0.0.0", token=TOKEN, cors_origins=("https://app.example",))
    other = LiveServer(make_runtime(tmp_path / "b"), settings, model="test")
    with other, other.client() as client:
        ok = client.options("/runs", headers={**preflight, "Origin": "https://app.example"})
        assert ok.headers["access-control-allow-origin"] == "https://app.example"
        no = client.options("/runs", headers=preflight)
        assert "access-control-allow-origin" not in no.headers
        good = {"Origin": "https://app.example", "Authorization": f"Bearer {TOKEN}"}
        assert client.get("/health", headers=good).headers["access-control-allow-origin"]
        assert client.get("/health", headers={"Origin": "https://app.example"}).status_code == 401


def test_model_listing_shows_no_credentials(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KFORGE_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("KFORGE_BASE_URL", "http://alice:s3cret@llm.internal:8000/v1")
    monkeypatch.setenv("KFORGE_API_KEY", "sk-do-not-leak")
    with server.client() as client:
        response = client.get("/models")
    assert response.status_code == 200
    assert "openai:gpt-4o-mini" in response.text and "llm.internal:8000" in response.text
    assert "s3cret" not in response.text and "sk-do-not-leak" not in response.text


def test_a_web_page_elsewhere_can_neither_rebind_nor_change_anything(server: LiveServer) -> None:
    with server.client() as client:
        before = run_count(client)
        rebound = client.get("/runs", headers={"Host": f"attacker.example:{server.port}"})
        assert rebound.status_code == 403 and rebound.json()["code"] == "host-not-allowed"
        body = {"agent": "test.paced", "args": {"steps": 1}}
        foreign = client.post("/runs", json=body, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and foreign.json()["code"] == "origin-not-allowed"
        assert "--cors-origin" in foreign.json()["detail"]
        assert run_count(client) == before
        own = client.post("/runs", json=body, headers={"Origin": server.url})
        assert own.status_code == 201  # the server's own page, e.g. the web UI
        assert client.get("/health", headers={"Host": f"localhost:{server.port}"}).is_success


def test_a_burst_of_streams_from_one_client_gets_exactly_the_bound(server: LiveServer) -> None:
    bound, burst = server.settings.max_streams_per_client, 60
    with server.client() as client:
        run = client.post("/runs", json={"agent": "test.paced", "args": {"ask_at": 1}}).json()
        url = f"{server.url}/runs/{run['id']}/stream"
        with client.stream("GET", url) as waiting:  # the run waits: its streams stay open
            assert any(e.event == "interaction.requested" for e in iter_events(waiting))

    async def burst_of_streams() -> list[int]:
        statuses: list[int] = []
        all_in = asyncio.Event()
        limits = httpx.Limits(max_connections=burst, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            started = asyncio.Barrier(burst)

            async def open_one() -> None:
                await started.wait()  # every request leaves at once
                async with http.stream("GET", url) as response:
                    statuses.append(response.status_code)
                    if len(statuses) == burst:
                        all_in.set()
                    await all_in.wait()  # held open until every answer is in

            await asyncio.gather(*(open_one() for _ in range(burst)))
        return statuses

    statuses = asyncio.run(burst_of_streams())
    assert statuses.count(200) == bound and statuses.count(429) == burst - bound
    # each slot is given back when its stream closes, however it closed
    streams = server.app.state.kforge.streams
    for _ in range(600):
        if streams.open_streams == 0:
            break
        threading.Event().wait(0.05)
    assert streams.open_streams == 0
