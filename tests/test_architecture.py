"""The package's shape: no import circles between modules, and no import pointing up a layer.

Every ``import`` and ``from ... import`` of a ``kforge`` module in ``src/kforge`` counts, at
module level, inside functions and under ``TYPE_CHECKING`` alike: a lazy import still makes the
two modules depend on each other. Importing ``a.b.c`` also loads the packages ``a.b`` and ``a``
(their ``__init__``), so it depends on them too, unless they are packages of the importing
module itself (already loaded before it).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kforge"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "record",
        (
            "errors",
            "extras",
            "lazy",
            "jsoncodec",
            "frozen",
            "frames",
            "effects",
            "store",
            "telemetry",
        ),
    ),
    ("capabilities", ("llm", "tools", "rag", "memory", "prompts")),
    ("engine", ("engine",)),
    ("agents", ("agents",)),
    ("runtime", ("runtime", "explain")),
    ("interfaces", ("cli", "server", "mcp", "mcp_catalog", "__main__")),
]
"""Lowest first: a module may import its own layer and those listed before it."""


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name, with whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the kforge modules it imports (``from kforge import __version__`` aside)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, (path, package) in known.items():
        here = name if package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                if base == "kforge" and all(a.name == "__version__" for a in node.names):
                    continue  # the package itself is loaded before any of its modules
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in known else base)
        found = {t for t in targets if t in known}
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        for target in list(found):
            parts = target.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts)))
        graph[name] = {t for t in found if t in known and t not in own}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def layer_of(module: str) -> int:
    if module == "kforge":
        return len(LAYERS) - 1  # the lazy facade: ``kforge.X`` may load any layer
    top = module.split(".")[1]
    for rank, (_, roots) in enumerate(LAYERS):
        if top in roots:
            return rank
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS in {__file__}")


def test_the_import_graph_has_no_circles() -> None:
    assert circles(import_graph()) == []


def test_an_import_depends_on_the_packages_it_loads() -> None:
    graph = import_graph()
    assert "kforge.rag.extract" not in graph["kforge.rag.extract.html"]  # its own package
    assert "kforge.llm" in graph["kforge.rag.grading"]


def test_imports_under_type_checking_and_inside_functions_count() -> None:
    graph = import_graph()
    assert "kforge.tools.cache" in graph["kforge.engine.services"]  # under TYPE_CHECKING only
    assert "kforge.rag.catalog" in graph["kforge.runtime.runtime"]  # inside __init__ only


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{source} ({LAYERS[layer_of(source)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for source, targets in sorted(import_graph().items())
        if source != "kforge"
        for target in sorted(targets)
        if layer_of(target) > layer_of(source)
    ]
    assert upward == []


RUN_LOG = "kforge.store.base"
"""The run log's protocol: the runs, frames, steps, snapshots and leases the runtime keeps."""
PASSAGE_STORE = "kforge.store.passages"
"""The passage store's protocol: the corpora, passages and postings retrieval keeps."""
OPENER = "kforge.store.open"
"""Opens both halves from one ``--db``: the one store module the runtime may name that also
loads the passage store."""
SCHEMA = frozenset({"kforge.store.migrations", "kforge.store.postgres_schema"})
"""One migration sequence for both halves' tables (so a database written before they were
apart opens as it is). The schema owns every table's definition: the stores import it, and it
imports no store module."""


def store_closure(graph: dict[str, set[str]], module: str) -> set[str]:
    """``module`` and the store modules it loads, directly or through other store modules."""
    seen = {module}
    todo = [module]
    while todo:
        module = todo.pop()
        for target in graph.get(module, ()):
            if target.startswith("kforge.store.") and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_schema_owns_its_tables_and_imports_no_store_module() -> None:
    """A store depends on the schema that defines its tables, never the schema on a store: the
    migrations load nothing of the run log or the passage store (their postings, say)."""
    graph = import_graph()
    assert graph.keys() >= SCHEMA
    reaching = sorted(
        f"{module} imports {target}"
        for module in SCHEMA
        for target in graph[module]
        if target.startswith("kforge.store.")
    )
    assert reaching == []
    assert "kforge.store.postgres_schema" in graph["kforge.store.postgres_postings"]


def test_the_store_closure_tells_the_halves_apart() -> None:
    graph = import_graph()
    assert PASSAGE_STORE not in store_closure(graph, "kforge.store.sqlite_runs")
    assert RUN_LOG not in store_closure(graph, "kforge.store.postgres_passages")
    assert {RUN_LOG, PASSAGE_STORE} <= store_closure(graph, "kforge.store.sqlite")


def test_the_runtime_loads_only_the_run_log_and_retrieval_only_the_passage_store() -> None:
    """The runtime and the engine name no module of the passage store (nor one that loads it,
    but the opener of both), and ``kforge.rag`` none of the run log: a store of one's own may
    be either half."""
    graph = import_graph()
    crossing = []
    for source, targets in sorted(graph.items()):
        part = source.split(".")[1] if "." in source else ""
        if part in ("runtime", "engine"):
            forbidden = PASSAGE_STORE
        elif part == "rag":
            forbidden = RUN_LOG
        else:
            continue
        for target in sorted(targets):
            if not target.startswith("kforge.store.") or (target == OPENER and part != "rag"):
                continue
            if forbidden in store_closure(graph, target):
                crossing.append(f"{source} imports {target}, which loads {forbidden}")
    assert crossing == []


def test_no_agent_package_imports_another_s() -> None:
    """Code several agents use lives in ``kforge.agents.common`` (or a module of
    ``kforge.agents`` itself), never in one agent's package that the others reach into."""
    packages = {
        path.parent.name
        for path in (SRC / "agents").glob("*/__init__.py")
        if path.parent.name != "common"
    }

    def package(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[2] in packages else None

    crossing = [
        f"{source} imports {target}"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if package(source) and package(target) and package(source) != package(target)
    ]
    assert crossing == []


def test_each_agent_keeps_its_typed_replies_and_prompts_in_one_module_name() -> None:
    packages = [
        path.parent
        for path in sorted((SRC / "agents").glob("*/__init__.py"))
        if path.parent.name != "common"
    ]
    assert packages
    for package in packages:
        assert (package / "prompts.py").is_file(), f"{package.name} has no prompts.py"
        assert not (package / "schema.py").exists() and not (package / "decisions.py").exists()


STILL_OVER_500: set[str] = set()
"""Modules not yet split along their seams; the list only shrinks."""


def test_modules_stay_under_five_hundred_lines() -> None:
    root = SRC
    over = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > 500
    }
    assert over <= STILL_OVER_500, f"split these along their seams: {sorted(over - STILL_OVER_500)}"


JSON_LIBRARIES = frozenset({"json", "orjson", "msgspec"})
JSON_MODULE = "kforge.jsoncodec"
STANDALONE = {"kforge.tools.builtin.sandbox_child": "runs alone in the sandbox, stdlib only"}
"""Modules run as scripts outside the package, which cannot import ``kforge.jsoncodec``."""


def json_imports() -> dict[str, set[str]]:
    """Module -> the JSON libraries it imports itself, anywhere in the file."""
    found: dict[str, set[str]] = {}
    for name, (path, _) in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            if used := roots & JSON_LIBRARIES:
                found.setdefault(name, set()).update(used)
    return found


def test_json_goes_through_one_module() -> None:
    elsewhere = {
        f"{module} imports {', '.join(sorted(libraries))}: use kforge.jsoncodec"
        for module, libraries in json_imports().items()
        if module != JSON_MODULE and module not in STANDALONE
    }
    assert elsewhere == set()


def test_a_json_import_is_found() -> None:
    assert json_imports()[JSON_MODULE] == JSON_LIBRARIES
