"""Fixtures for model tests: a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kforge.llm.config import ProviderSettings
from kforge.llm.openai.compat import OpenAICompatibleModel
from kforge.llm.retry import RetryPolicy
from tests.llm.fake_openai import FakeOpenAI


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI().start()
    try:
        yield fake
    finally:
        fake.stop()


class SleepRecorder:
    """Stands in for asyncio.sleep so retry delays are checked without waiting for them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def make_model(
    server: FakeOpenAI,
    sleeps: SleepRecorder | None = None,
    *,
    max_attempts: int = 3,
    native_tools: bool = True,
    json_schema: bool = True,
    repair_attempts: int = 2,
    timeout_s: float = 10.0,
) -> OpenAICompatibleModel:
    settings = ProviderSettings(
        name="compat",
        kind="openai",
        base_url=server.base_url,
        api_key="sk-test",
        native_tools=native_tools,
        json_schema=json_schema,
        repair_attempts=repair_attempts,
        timeout_s=timeout_s,
    )
    policy = RetryPolicy(max_attempts=max_attempts, base_delay_s=0.25, max_delay_s=1.0)
    return OpenAICompatibleModel("fake-model", settings, retry=policy, sleep=sleeps)
