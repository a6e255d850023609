"""How model calls meet errors, against a real HTTP server: retry what is transient,
fail fast and clearly on the rest, honour Retry-After, time out, and stop on cancellation."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kforge.errors import (
    ModelAuthError,
    ModelError,
    ModelNotFoundError,
    ModelResponseError,
    ModelUnavailableError,
)
from kforge.llm import get_model
from kforge.llm.types import Message, ModelSettings
from tests.llm.conftest import SleepRecorder, make_model
from tests.llm.fake_openai import FakeOpenAI, Reply, chunk, completion

HI = [Message.user("hi")]


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body={"error": {"message": message}}, headers=headers or {})


async def test_429_waits_exactly_as_long_as_retry_after_says(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(error(429, "slow down", {"Retry-After": "2"}), completion("done"))
    response = await make_model(server, sleeps).complete(HI)
    assert response.text == "done"
    assert sleeps.delays == [2.0]
    assert len(server.requests) == 2


async def test_retry_after_ms_is_preferred(server: FakeOpenAI, sleeps: SleepRecorder) -> None:
    server.push(
        error(429, "slow down", {"retry-after-ms": "150", "Retry-After": "9"}), completion("ok")
    )
    await make_model(server, sleeps).complete(HI)
    assert sleeps.delays == [0.15]


async def test_429_asking_for_too_long_a_wait_fails_at_once(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(error(429, "quota exhausted", {"Retry-After": "3600"}))
    with pytest.raises(ModelUnavailableError, match="asked to wait 3600 s") as info:
        await make_model(server, sleeps).complete(HI)
    assert "HTTP 429" in str(info.value)
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_500_then_success_backs_off_with_jitter(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(error(500, "boom"), error(503, "busy"), completion("recovered"))
    response = await make_model(server, sleeps, max_attempts=3).complete(HI)
    assert response.text == "recovered"
    assert len(sleeps.delays) == 2
    first, second = sleeps.delays
    assert 0.125 <= first <= 0.25  # base 0.25 s, jitter takes up to half off
    assert 0.25 <= second <= 0.5  # doubled


async def test_persistent_5xx_gives_up_after_max_attempts(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(*[error(502, "bad gateway") for _ in range(3)])
    with pytest.raises(ModelUnavailableError, match=r"HTTP 502.*3 attempts"):
        await make_model(server, sleeps, max_attempts=3).complete(HI)
    assert len(server.requests) == 3


async def test_401_is_a_clear_auth_error_and_never_retried(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(error(401, "Incorrect API key provided"))
    with pytest.raises(ModelAuthError) as info:
        await make_model(server, sleeps).complete(HI)
    message = str(info.value)
    assert "HTTP 401" in message and "Incorrect API key" in message and "KFORGE_API_KEY" in message
    assert "sk-test" not in message
    assert len(server.requests) == 1 and sleeps.delays == []


async def test_404_names_the_unknown_model(server: FakeOpenAI, sleeps: SleepRecorder) -> None:
    server.push(error(404, "model 'fake-model' not found"))
    with pytest.raises(ModelNotFoundError, match="does not serve model 'fake-model'"):
        await make_model(server, sleeps).complete(HI)
    assert len(server.requests) == 1


async def test_other_4xx_fails_without_retry(server: FakeOpenAI, sleeps: SleepRecorder) -> None:
    server.push(error(400, "context length exceeded"))
    with pytest.raises(ModelError, match="context length exceeded"):
        await make_model(server, sleeps).complete(HI)
    assert len(server.requests) == 1


async def test_malformed_json_is_retried_then_succeeds(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(Reply(raw=b'{"choices": [{"message": '), completion("fine"))
    response = await make_model(server, sleeps).complete(HI)
    assert response.text == "fine"
    assert len(sleeps.delays) == 1


async def test_malformed_json_every_time_is_a_response_error(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(Reply(raw=b"<html>gateway</html>"), Reply(raw=b"{oops"))
    with pytest.raises(ModelResponseError, match="malformed JSON"):
        await make_model(server, sleeps, max_attempts=2).complete(HI)
    assert len(server.requests) == 2


async def test_json_that_is_not_a_completion_is_a_response_error(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(*[Reply(body={"result": "hello"}) for _ in range(2)])
    with pytest.raises(ModelResponseError, match="without choices"):
        await make_model(server, sleeps, max_attempts=2).complete(HI)


async def test_malformed_stream_chunk_is_a_response_error(server: FakeOpenAI) -> None:
    server.push(Reply(sse=[chunk("partial"), "{not json"]))
    events = []
    with pytest.raises(ModelResponseError, match="malformed JSON"):
        async for event in make_model(server).stream(HI):
            events.append(event)
    assert [e.delta for e in events] == ["partial"]


async def test_timeout_is_retried_then_reported(server: FakeOpenAI, sleeps: SleepRecorder) -> None:
    server.push(
        Reply(body=completion("late"), delay_s=1.5), Reply(body=completion("late"), delay_s=1.5)
    )
    model = make_model(server, sleeps, max_attempts=2)
    with pytest.raises(
        ModelUnavailableError, match=r"cannot reach .* no answer within 0.2 s \(2 attempts\)"
    ):
        await model.complete(HI, ModelSettings(timeout_s=0.2))
    assert len(server.requests) == 2


async def test_cancellation_stops_the_call_without_retrying(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(Reply(body=completion("never read"), hold=True), completion("unused"))
    task = asyncio.create_task(make_model(server, sleeps).complete(HI))
    assert await asyncio.to_thread(server.received.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    server.release.set()
    # the cancelled task is finished: any retry would have been sent before ``await task`` ended
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_closing_a_stream_early_disconnects_from_the_server(server: FakeOpenAI) -> None:
    server.push(Reply(sse=[chunk(f"w{i} ") for i in range(200)], event_delay_s=0.02))
    stream = make_model(server).stream(HI)
    first = await anext(stream)
    assert first.delta == "w0 "
    await stream.aclose()
    assert await asyncio.to_thread(server.disconnected.wait, 5)


async def test_unreachable_server_is_reported_with_its_url(sleeps: SleepRecorder) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    from kforge.llm.config import ProviderSettings
    from kforge.llm.openai.compat import OpenAICompatibleModel
    from kforge.llm.retry import RetryPolicy

    settings = ProviderSettings(
        name="ollama", kind="openai", base_url=f"http://127.0.0.1:{port}/v1"
    )
    model = OpenAICompatibleModel(
        "llama3", settings, retry=RetryPolicy(max_attempts=2), sleep=sleeps
    )
    with pytest.raises(
        ModelUnavailableError, match=rf"cannot reach ollama:llama3 at http://127.0.0.1:{port}/v1"
    ):
        await model.complete(HI)
    assert len(sleeps.delays) == 1


async def test_missing_key_for_a_hosted_provider_says_which_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("OPENAI_API_KEY", "KFORGE_API_KEY", "KFORGE_BASE_URL", "KFORGE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    model = get_model("openai:gpt-4o-mini")
    with pytest.raises(ModelAuthError, match="set KFORGE_API_KEY or OPENAI_API_KEY"):
        await model.complete(HI)
