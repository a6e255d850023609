"""Plane and Zulip tools against local servers that speak the subset of their REST APIs we use."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs

import pytest

from kforge.tools.builtin.plane import PlaneClient, PlaneCreateTaskTool, PlaneQueryTasksTool
from kforge.tools.builtin.zulip import ZulipSendTool

from .conftest import LocalServer, Reply, Request

KEY = "plane-secret-key"
WS = "/api/v1/workspaces/acme"
PROJECTS = [
    {"id": "p-1", "name": "Mobile App", "identifier": "MOB"},
    {"id": "p-2", "name": "Website", "identifier": "WEB"},
]


class FakePlane:
    def __init__(self, server: LocalServer) -> None:
        self.issues: list[dict[str, object]] = [
            {"id": "i-1", "name": "Login crash", "sequence_id": 1, "priority": "urgent"},
            {"id": "i-2", "name": "Dark mode", "sequence_id": 2, "priority": "low"},
        ]
        self.project_lists = 0
        server.route("GET", f"{WS}/projects/", self.projects)
        server.route("GET", f"{WS}/members/", self.members)
        server.route("POST", f"{WS}/projects/p-1/issues/", self.create)
        server.route("GET", f"{WS}/projects/p-1/issues/", self.list)

    def authorised(self, request: Request) -> bool:
        return request.headers.get("x-api-key") == KEY

    def projects(self, request: Request) -> Reply:
        if not self.authorised(request):
            return Reply(401, '{"error": "bad key"}')
        self.project_lists += 1
        page = request.query.get("cursor", ["0"])[0]
        body = {
            "results": PROJECTS[:1] if page == "0" else PROJECTS[1:],
            "next_cursor": "1" if page == "0" else None,
            "next_page_results": page == "0",
        }
        return Reply(200, json.dumps(body), {"Content-Type": "application/json"})

    def members(self, request: Request) -> Reply:
        people = [
            {"id": "u-1", "display_name": "ana", "email": "ana@acme.test", "first_name": "Ana"}
        ]
        return Reply(200, json.dumps(people), {"Content-Type": "application/json"})

    def create(self, request: Request) -> Reply:
        body = json.loads(request.body)
        issue = {"id": f"i-{len(self.issues) + 1}", "sequence_id": len(self.issues) + 1, **body}
        self.issues.append(issue)
        return Reply(201, json.dumps(issue), {"Content-Type": "application/json"})

    def list(self, request: Request) -> Reply:
        return Reply(200, json.dumps({"results": self.issues, "next_page_results": False}))


@pytest.fixture
def plane(server: LocalServer) -> tuple[FakePlane, PlaneClient]:
    return FakePlane(server), PlaneClient(server.url, KEY, "acme")


async def test_create_task_resolves_project_and_maps_fields(
    plane: tuple[FakePlane, PlaneClient],
) -> None:
    fake, client = plane
    tool = PlaneCreateTaskTool(client)
    result = await tool.execute(
        {"name": "Fix sync", "project": "mobile app", "priority": "high",
         "description": "Sync <fails>", "assignee": "ana@acme.test"}
    )  # fmt: skip
    assert not result.is_error, result.text
    created = fake.issues[-1]
    assert created["name"] == "Fix sync" and created["priority"] == "high"
    assert created["description_html"] == "<p>Sync &lt;fails&gt;</p>"
    assert created["assignees"] == ["u-1"]
    assert result.structured_content == {
        "task_id": "i-3", "task_name": "Fix sync", "project_id": "p-1",
        "sequence_id": 3, "priority": "high",
    }  # fmt: skip
    assert "Created task 'Fix sync' in Mobile App (MOB)" in result.text


async def test_project_list_is_cached(plane: tuple[FakePlane, PlaneClient]) -> None:
    fake, client = plane
    tool = PlaneCreateTaskTool(client)
    await tool.execute({"name": "a", "project": "MOB"})
    await tool.execute({"name": "b", "project": "Mobile App"})
    assert fake.project_lists == 2  # two pages, listed once


async def test_unknown_project_lists_valid_ones(plane: tuple[FakePlane, PlaneClient]) -> None:
    _, client = plane
    result = await PlaneCreateTaskTool(client).execute({"name": "x", "project": "Mobil"})
    assert result.is_error and result.error_kind == "unknown_project"
    assert (
        "unknown Plane project 'Mobil'; valid projects: Mobile App (MOB), Website (WEB)"
        in result.text
    )


async def test_invalid_priority_is_rejected_by_the_schema(
    plane: tuple[FakePlane, PlaneClient],
) -> None:
    _, client = plane
    tool = PlaneCreateTaskTool(client)
    problems = tool.check_arguments({"name": "x", "project": "MOB", "priority": "asap"})
    assert tool.validator.message(problems) == (
        "tool 'plane_create_task': argument 'priority' must be one of urgent, high, medium, "
        "low, none (got 'asap')"
    )


async def test_query_tasks_filters(plane: tuple[FakePlane, PlaneClient]) -> None:
    _, client = plane
    result = await PlaneQueryTasksTool(client).execute({"project": "MOB", "priority": "urgent"})
    assert result.structured_content == {
        "tasks": [{"id": "i-1", "name": "Login crash", "sequence_id": 1, "priority": "urgent"}]
    }
    assert "MOB-1 Login crash [urgent]" in result.text
    none = await PlaneQueryTasksTool(client).execute({"project": "MOB", "search": "nothing"})
    assert not none.is_error and none.structured_content == {"tasks": []}


async def test_bad_key_is_a_clear_error_without_the_key(server: LocalServer) -> None:
    FakePlane(server)
    client = PlaneClient(server.url, "wrong-key-123", "acme")
    with pytest.raises(Exception, match="Plane refused the API key") as info:
        await client.projects()
    assert "wrong-key-123" not in str(info.value) and "wrong-key-123" not in repr(client)


def zulip_server(server: LocalServer) -> list[dict[str, list[str]]]:
    sent: list[dict[str, list[str]]] = []

    def messages(request: Request) -> Reply:
        auth = request.headers.get("authorization", "")
        if auth != "Basic " + base64.b64encode(b"bot@acme.test:zulip-key").decode():
            return Reply(401, '{"result": "error", "msg": "Invalid API key"}')
        form = parse_qs(request.body.decode())
        if form.get("to") == ["nowhere"]:
            body = {
                "result": "error",
                "msg": "Stream 'nowhere' does not exist",
                "code": "STREAM_DOES_NOT_EXIST",
            }
            return Reply(400, json.dumps(body))
        sent.append(form)
        return Reply(200, json.dumps({"result": "success", "msg": "", "id": 40 + len(sent)}))

    server.route("POST", "/api/v1/messages", messages)
    return sent


async def test_zulip_stream_and_direct_messages(server: LocalServer) -> None:
    sent = zulip_server(server)
    tool = ZulipSendTool(server.url, "bot@acme.test", "zulip-key")
    result = await tool.execute({"stream": "dev", "topic": "builds", "content": "Build **green**"})
    assert result.text == "Sent message 41 to #dev > builds"
    assert sent[0] == {
        "type": ["stream"],
        "to": ["dev"],
        "topic": ["builds"],
        "content": ["Build **green**"],
    }
    direct = await tool.execute({"to": ["ana@acme.test"], "content": "hi"})
    assert not direct.is_error
    assert json.loads(sent[1]["to"][0]) == ["ana@acme.test"] and sent[1]["type"] == ["direct"]


async def test_zulip_errors_are_clear(server: LocalServer) -> None:
    zulip_server(server)
    tool = ZulipSendTool(server.url, "bot@acme.test", "zulip-key")
    missing = await tool.execute({"stream": "nowhere", "content": "x"})
    assert missing.is_error and "Stream 'nowhere' does not exist" in missing.text
    bad = ZulipSendTool(server.url, "bot@acme.test", "nope")
    refused = await bad.execute({"stream": "dev", "content": "x"})
    assert refused.is_error and refused.error_kind == "unauthorized" and "nope" not in refused.text


def test_zulip_asks_before_sending_by_default() -> None:
    assert ZulipSendTool("https://z.test", "b@z.test", "k").needs_approval()
    assert not ZulipSendTool(
        "https://z.test", "b@z.test", "k", ask_before_sending=False
    ).needs_approval()
    tool = ZulipSendTool("https://z.test", "b@z.test", "k")
    assert tool.check_arguments({"content": "x"})  # needs a stream or recipients
