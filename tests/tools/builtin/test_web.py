"""fetch_page and summarize_page_content against a local server; the SSRF guard."""

from __future__ import annotations

import pytest

from kforge.llm.testing.scripted import ScriptedModel
from kforge.tools import ToolContext
from kforge.tools.builtin import network
from kforge.tools.builtin.network import (
    BlockedAddressError,
    FetchedPage,
    NetworkPolicy,
    check_url,
    fetch,
)
from kforge.tools.builtin.web import (
    FetchPageTool,
    SummarizePageTool,
    extractive_summary,
    page_text,
)

from .conftest import LocalServer, Reply

PAGE = """<html><head><title>Solar power &amp; you</title><script>track()</script></head>
<body><nav>Home | About</nav><h1>Solar power</h1>
<p>Solar panels turn sunlight into electricity.</p><p>They work best facing the sun.</p>
<ul><li>Cheap</li><li>Clean</li></ul><footer>(c) 2024</footer></body></html>"""
LOCAL = NetworkPolicy(allow_private=True)


def html(body: str) -> Reply:
    return Reply(200, body, {"Content-Type": "text/html; charset=utf-8"})


def _page(html: str) -> FetchedPage:
    return FetchedPage("http://x/", 200, "text/html", html, truncated=False)


def test_page_text_keeps_content_and_drops_chrome() -> None:
    assert page_text(_page(PAGE)) == (
        "Solar power & you",
        "# Solar power\nSolar panels turn sunlight into electricity.\n"
        "They work best facing the sun.\nCheap\nClean",
    )


def test_page_text_of_an_unclosed_head_keeps_the_body() -> None:
    html = "<html><head><title>Broken</title>\n<body><h1>Results</h1><p>First.</p>"
    assert page_text(_page(html)) == ("Broken", "# Results\nFirst.")


def test_page_title_is_the_head_title_not_an_icon_title() -> None:
    html = "<title>News</title><p>Text.</p><svg><title>icon</title></svg>"
    assert page_text(_page(html)) == ("News", "Text.")


async def test_fetch_page_returns_readable_text(server: LocalServer) -> None:
    server.route("GET", "/solar", html(PAGE))
    result = await FetchPageTool(LOCAL).execute({"url": f"{server.url}/solar"})
    assert not result.is_error
    assert result.text.startswith("Solar power & you\n")
    assert "Solar panels turn sunlight into electricity." in result.text
    assert "track()" not in result.text and "Home | About" not in result.text


async def test_fetch_page_follows_redirects_and_limits_size(server: LocalServer) -> None:
    server.route("GET", "/old", Reply(302, b"", {"Location": "/big"}))
    server.route("GET", "/big", Reply(200, "word " * 10_000, {"Content-Type": "text/plain"}))
    policy = NetworkPolicy(allow_private=True, max_bytes=1_000)
    result = await FetchPageTool(policy).execute({"url": f"{server.url}/old", "max_chars": 500})
    assert result.structured_content is not None
    assert result.structured_content["url"] == f"{server.url}/big"
    assert result.structured_content["truncated"] is True
    assert len(result.structured_content["text"]) == 500


async def test_fetch_page_errors_are_clear(server: LocalServer) -> None:
    server.route("GET", "/img", Reply(200, b"\x89PNG", {"Content-Type": "image/png"}))
    tool = FetchPageTool(LOCAL)
    missing = await tool.execute({"url": f"{server.url}/missing"})
    assert missing.is_error and "answered HTTP 404" in missing.text
    image = await tool.execute({"url": f"{server.url}/img"})
    assert image.is_error and "image/png, not a web page" in image.text


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost:8080/admin",
        "http://10.0.0.5/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
    ],
)
async def test_ssrf_guard_refuses_non_public_addresses(url: str) -> None:
    with pytest.raises(BlockedAddressError, match="server-side request forgery"):
        await check_url(url, NetworkPolicy())


async def test_ssrf_guard_applies_to_the_tool_and_can_be_configured(server: LocalServer) -> None:
    server.route("GET", "/solar", html(PAGE))
    blocked = await FetchPageTool().execute({"url": f"{server.url}/solar"})
    assert blocked.is_error and blocked.error_kind == "blocked"
    assert server.requests == []
    allowed = FetchPageTool(NetworkPolicy(allowed_hosts=frozenset({"127.0.0.1"})))
    assert not (await allowed.execute({"url": f"{server.url}/solar"})).is_error
    with pytest.raises(BlockedAddressError, match="only http and https"):
        await check_url("file:///etc/passwd", NetworkPolicy())


async def test_redirect_to_a_private_address_is_refused(server: LocalServer) -> None:
    server.route("GET", "/hop", Reply(302, b"", {"Location": "http://169.254.169.254/"}))
    policy = NetworkPolicy(allowed_hosts=frozenset({"127.0.0.1"}))
    result = await FetchPageTool(policy).execute({"url": f"{server.url}/hop"})
    assert result.is_error and "169.254.169.254" in result.text


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy from the environment: connections are made, and pinned, here."""
    for name in network._PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("direct")
async def test_the_connection_goes_to_the_address_that_was_checked(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name nobody can resolve here reaches the local server only through the pinned
    address: the guard's own resolution is what the connection uses."""
    real = network.resolve

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if host == "pinned.test" else await real(host, port)

    monkeypatch.setattr(network, "resolve", resolve)
    server.route("GET", "/solar", html(PAGE))
    port = server.url.rsplit(":", 1)[1]
    policy = NetworkPolicy(allowed_hosts=frozenset({"127.0.0.1"}))
    page = await fetch(f"http://pinned.test:{port}/solar", policy)
    assert page.status == 200 and "Solar panels" in page.text
    assert server.requests[-1].headers["host"] == f"pinned.test:{port}"


@pytest.mark.usefixtures("direct")
async def test_dns_rebinding_between_check_and_connect_is_refused(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name passes the check with a public address, then resolves to loopback when the
    connection is made: the connection is refused and nothing reaches the local server."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])

    async def resolve(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])

    monkeypatch.setattr(network, "resolve", resolve)
    port = server.url.rsplit(":", 1)[1]
    with pytest.raises(BlockedAddressError, match=r"resolves to 127\.0\.0\.1, a loopback address"):
        await fetch(f"http://rebind.test:{port}/", NetworkPolicy())
    assert server.requests == []
    result = await FetchPageTool().execute({"url": f"http://rebind.test:{port}/"})
    assert result.is_error and result.error_kind == "blocked"


@pytest.mark.usefixtures("direct")
async def test_a_proxy_in_the_environment_keeps_the_per_url_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    direct = network.guarded_client(NetworkPolicy())
    assert not direct.trust_env  # pinned connections, no proxy from the environment
    await direct.aclose()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    proxied = network.guarded_client(NetworkPolicy())
    assert proxied.trust_env  # the proxy resolves names; the URL check still runs first
    await proxied.aclose()
    with pytest.raises(BlockedAddressError):
        await fetch("http://169.254.169.254/latest/", NetworkPolicy())


def test_extractive_summary_keeps_order_and_honours_focus() -> None:
    text = (
        "Solar panels convert sunlight into electricity. The weather was nice yesterday. "
        "Panels made of silicon convert light efficiently. My cat likes boxes. "
        "Electricity from panels can be stored in batteries."
    )
    summary = extractive_summary(text, 2, focus="batteries")
    assert summary.count(".") == 2
    assert "batteries" in summary
    assert extractive_summary("One sentence only.", 3) == "One sentence only."


async def test_summarize_uses_the_model_when_available(server: LocalServer) -> None:
    server.route("GET", "/solar", html(PAGE))
    model = ScriptedModel(["Solar panels turn sunlight into electricity [1]."])
    tool = SummarizePageTool(LOCAL)
    result = await tool.execute({"url": f"{server.url}/solar"}, ToolContext(model=model))
    assert result.text == "Solar panels turn sunlight into electricity."
    assert result.structured_content is not None
    assert result.structured_content["method"] == "model"
    prompt = model.calls[0].messages[-1].content
    assert "Solar panels turn sunlight into electricity." in prompt
    model.assert_consumed()


MEMORY = (
    "The runtime allocates objects in regions. A region is freed at once when its last object "
    "dies. Regions keep the heap compact on servers with little memory. The collector runs "
    "when a region fills up."
)


@pytest.mark.parametrize(
    "reply",
    [
        "Fast memory management for mobile devices. " * 7,  # a loop
        "It gives fast memory management on mobile devices and cuts battery use by half.",
    ],
)
async def test_a_summary_that_loops_or_invents_is_replaced_by_the_texts_sentences(
    reply: str,
) -> None:
    model = ScriptedModel([reply, reply])  # the first reply and the retry both fail the checks
    result = await SummarizePageTool(model=model).execute({"text": MEMORY, "max_sentences": 2})
    assert result.structured_content is not None
    assert result.structured_content["method"] == "extractive"
    summary = result.structured_content["summary"]
    assert summary == extractive_summary(MEMORY, 2)
    assert "mobile" not in result.text and result.text.count("memory") <= 1
    assert "not supported by the text" in result.text
    model.assert_consumed()


async def test_a_summary_keeps_only_the_sentences_the_text_supports() -> None:
    model = ScriptedModel(
        [
            "A region is freed at once when its last object dies [1]. Regions keep the heap "
            "compact [1]. The collector runs when a region fills up [1]. It was invented at "
            "Bell Labs in 1972."
        ]
    )
    result = await SummarizePageTool(model=model).execute({"text": MEMORY})
    assert result.structured_content is not None
    assert result.structured_content["method"] == "model"
    assert "Bell Labs" not in result.text
    assert result.text.startswith("A region is freed at once when its last object dies.")


async def test_the_small_model_is_not_asked_to_summarize() -> None:
    model = ScriptedModel([])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    result = await SummarizePageTool(model=model).execute({"text": MEMORY, "max_sentences": 2})
    assert result.text == extractive_summary(MEMORY, 2)
    assert not model.calls


async def test_summarize_without_model_is_extractive() -> None:
    result = await SummarizePageTool().execute({"text": "A b c. D e f. G h i.", "max_sentences": 5})
    assert result.text == "A b c. D e f. G h i."
    assert result.structured_content is not None
    assert result.structured_content["method"] == "extractive"
