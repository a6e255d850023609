"""Plane (project management) tools: ``plane_create_task`` and ``plane_query_tasks``.

Speaks the subset of Plane's REST API v1 they need: list projects and members, create and list
work items (``/api/v1/workspaces/{slug}/projects/{id}/issues/``), authenticated with
``X-API-Key``. Project names resolve through a cached project list.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kforge.errors import ToolError
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

if TYPE_CHECKING:
    import httpx

__all__ = [
    "PRIORITIES",
    "PlaneClient",
    "PlaneCreateTaskTool",
    "PlaneProject",
    "PlaneQueryTasksTool",
]

PRIORITIES = ("urgent", "high", "medium", "low", "none")
_PLANE_PRIORITY = {p: p for p in PRIORITIES}
"""Our priority -> Plane's ``priority`` field value."""


@dataclass(frozen=True, slots=True)
class PlaneProject:
    id: str
    name: str
    identifier: str

    def label(self) -> str:
        return f"{self.name} ({self.identifier})" if self.identifier else self.name


class PlaneClient:
    """A thin async client for one Plane workspace, with a cached project and member list."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace_slug: str,
        *,
        cache_ttl_s: float = 300.0,
        timeout_s: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.workspace_slug = workspace_slug
        self.cache_ttl_s = cache_ttl_s
        self.timeout_s = timeout_s
        self._transport = transport
        self._projects: tuple[float, list[PlaneProject]] | None = None
        self._members: tuple[float, list[dict[str, Any]]] | None = None

    def __repr__(self) -> str:
        return f"PlaneClient({self.base_url!r}, workspace={self.workspace_slug!r})"

    @property
    def _workspace(self) -> str:
        return f"{self.base_url}/api/v1/workspaces/{self.workspace_slug}"

    async def _request(self, method: str, url: str, **kwargs: Any) -> Any:
        import httpx

        try:
            async with httpx.AsyncClient(
                timeout=self.timeout_s,
                headers={"X-API-Key": self._api_key, "Accept": "application/json"},
                transport=self._transport,
            ) as client:
                response = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ToolError(
                f"Plane at {self.base_url} is unreachable: {type(exc).__name__}"
            ) from exc
        if response.status_code in (401, 403):
            raise ToolError(
                f"Plane refused the API key (HTTP {response.status_code}); check the key and "
                "its workspace access"
            )
        if response.status_code >= 400:
            detail = response.text[:300].strip()
            raise ToolError(
                f"Plane answered HTTP {response.status_code} for {method} {url}: {detail}"
            )
        return response.json() if response.content else None

    async def _paged(self, url: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        query = dict(params or {})
        for _ in range(100):
            data = await self._request("GET", url, params=query)
            if isinstance(data, list):
                return items + data
            items.extend(data.get("results") or [])
            cursor = data.get("next_cursor")
            if not data.get("next_page_results") or not cursor:
                return items
            query["cursor"] = cursor
        return items

    async def projects(self, *, refresh: bool = False) -> list[PlaneProject]:
        now = time.monotonic()
        if not refresh and self._projects and now - self._projects[0] < self.cache_ttl_s:
            return self._projects[1]
        rows = await self._paged(f"{self._workspace}/projects/")
        projects = [
            PlaneProject(str(r["id"]), str(r.get("name", "")), str(r.get("identifier", "")))
            for r in rows
        ]
        self._projects = (now, projects)
        return projects

    async def resolve_project(self, name: str) -> PlaneProject:
        """The project named ``name`` (by name, identifier or id, ignoring case)."""
        wanted = name.strip().lower()
        for refresh in (False, True):
            for project in await self.projects(refresh=refresh):
                if wanted in (project.name.lower(), project.identifier.lower(), project.id.lower()):
                    return project
        valid = ", ".join(p.label() for p in await self.projects()) or "none"
        raise ToolError(f"unknown Plane project '{name}'; valid projects: {valid}")

    async def resolve_member(self, who: str) -> str:
        now = time.monotonic()
        if not self._members or now - self._members[0] >= self.cache_ttl_s:
            self._members = (now, await self._paged(f"{self._workspace}/members/"))
        wanted = who.strip().lower()
        for member in self._members[1]:
            names = {
                str(member.get(k, "")).lower()
                for k in ("email", "display_name", "first_name", "id")
            }
            full = f"{member.get('first_name', '')} {member.get('last_name', '')}".strip().lower()
            if wanted in names or wanted == full:
                return str(member["id"])
        valid = ", ".join(str(m.get("display_name") or m.get("email")) for m in self._members[1])
        raise ToolError(f"unknown Plane member '{who}'; workspace members: {valid or 'none'}")

    async def create_issue(self, project: PlaneProject, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self._workspace}/projects/{project.id}/issues/"
        result: dict[str, Any] = await self._request("POST", url, json=body)
        return result

    async def list_issues(self, project: PlaneProject, limit: int) -> list[dict[str, Any]]:
        url = f"{self._workspace}/projects/{project.id}/issues/"
        return (await self._paged(url, {"per_page": min(max(limit, 1), 100)}))[: max(limit, 1) * 5]


class PlaneCreateTaskTool(Tool):
    def __init__(self, client: PlaneClient) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return "plane_create_task"

    @property
    def description(self) -> str:
        return (
            "Create a new task in Plane project management. Use this when the user wants to "
            "create a task, issue, or work item."
        )

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "Task title"},
                "description": {"type": "string", "default": "", "description": "Task details"},
                "project": {"type": "string", "description": "Project name or identifier"},
                "priority": {"type": "string", "enum": list(PRIORITIES), "default": "medium"},
                "assignee": {"type": "string", "default": "", "description": "Name or email"},
            },
            "required": ["name", "project"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Create Plane Task", read_only_hint=False, destructive_hint=False,
            idempotent_hint=False, open_world_hint=True,
        )  # fmt: skip

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        try:
            project = await self.client.resolve_project(arguments["project"])
        except ToolError as exc:
            return ToolResult.error(str(exc), kind="unknown_project")
        body: dict[str, Any] = {
            "name": arguments["name"],
            "priority": _PLANE_PRIORITY[arguments.get("priority", "medium")],
        }
        if arguments.get("description"):
            body["description_html"] = f"<p>{html.escape(arguments['description'])}</p>"
        if arguments.get("assignee"):
            try:
                body["assignees"] = [await self.client.resolve_member(arguments["assignee"])]
            except ToolError as exc:
                return ToolResult.error(str(exc), kind="unknown_member")
        issue = await self.client.create_issue(project, body)
        return ToolResult.success(
            f"Created task '{issue.get('name')}' in {project.label()} "
            f"(#{issue.get('sequence_id')}, ID: {issue.get('id')})",
            {
                "task_id": issue.get("id"),
                "task_name": issue.get("name"),
                "project_id": project.id,
                "sequence_id": issue.get("sequence_id"),
                "priority": issue.get("priority", body["priority"]),
            },
        )


class PlaneQueryTasksTool(Tool):
    def __init__(self, client: PlaneClient) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return "plane_query_tasks"

    @property
    def description(self) -> str:
        return "List tasks of a Plane project, optionally filtered by text and priority."

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Project name or identifier"},
                "search": {"type": "string", "description": "Text the task name must contain"},
                "priority": {"type": "string", "enum": list(PRIORITIES)},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            },
            "required": ["project"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations.read_only(title="Query Plane Tasks", open_world=True)

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        try:
            project = await self.client.resolve_project(arguments["project"])
        except ToolError as exc:
            return ToolResult.error(str(exc), kind="unknown_project")
        limit = int(arguments.get("limit", 20))
        search = str(arguments.get("search", "")).lower()
        priority = arguments.get("priority")
        tasks = [
            {
                "id": i.get("id"),
                "name": i.get("name", ""),
                "sequence_id": i.get("sequence_id"),
                "priority": i.get("priority"),
            }
            for i in await self.client.list_issues(project, limit)
            if search in str(i.get("name", "")).lower()
            and (priority is None or i.get("priority") == _PLANE_PRIORITY[priority])
        ][:limit]
        if not tasks:
            return ToolResult.success(f"No matching tasks in {project.label()}.", {"tasks": []})
        lines = [
            f"- {project.identifier}-{t['sequence_id']} {t['name']} [{t['priority']}]"
            for t in tasks
        ]
        return ToolResult.success(
            f"{len(tasks)} task(s) in {project.label()}:\n" + "\n".join(lines), {"tasks": tasks}
        )
