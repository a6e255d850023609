"""benchmarks/render_tables.py: the documentation's benchmark tables are the render of the kept
result files, so a figure cannot drift from its measurement."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from render_tables import RENDERERS, add, load_results, render_text  # noqa: E402


@pytest.mark.parametrize("page", ["docs/benchmarks.md", "README.md"])
def test_the_committed_tables_equal_the_render_of_the_committed_results(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "<!-- table:" in text
    assert render_text(text, load_results(), page) == text, (
        f"{page} is out of date: run `python benchmarks/render_tables.py`"
    )


def test_every_kept_result_names_its_date_and_machine_and_has_a_table() -> None:
    results = load_results()
    assert {"server_load", "mcp_conformance"} <= set(results)
    pages = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for name, report in results.items():
        assert report["date"] and report["machine"]
        assert name in RENDERERS and f"<!-- table:{name} -->" in pages


def test_a_changed_figure_changes_the_render() -> None:
    results = load_results()
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    changed = copy.deepcopy(results)
    changed["server_load"]["capacity"]["events_per_s"] += 1000
    assert render_text(text, changed) != text


def test_a_table_without_a_result_file_is_an_error_saying_what_to_do() -> None:
    text = "before\n<!-- table:server_load -->\nold\n<!-- /table -->\nafter\n"
    with pytest.raises(SystemExit, match=r"render_tables\.py add server_load"):
        render_text(text, {}, "page.md")
    rendered = render_text(text, load_results(), "page.md")
    assert rendered.startswith("before\n<!-- table:server_load -->\n| measure |")
    assert rendered.endswith("<!-- /table -->\nafter\n") and "old" not in rendered


def test_adding_a_result_without_a_date_records_when_the_benchmark_wrote_it(
    tmp_path: Path,
) -> None:
    source = tmp_path / "out.json"
    source.write_text(json.dumps({"machine": {"cpus": 2}, "samples": {}}))
    os.utime(source, (1_700_000_000, 1_700_000_000))
    kept = json.loads(add("answer_quality_samples", source, tmp_path / "results").read_text())
    assert kept["date"] == "2023-11-14T22:13:20+00:00"
    assert kept["date_source"] == "when the benchmark wrote its JSON"


def test_the_check_option_finds_the_committed_pages_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "render_tables.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_result_without_a_machine_is_kept_only_when_it_ran_here(tmp_path: Path) -> None:
    source = tmp_path / "out.json"
    source.write_text(json.dumps({"date": "2026-01-01", "ingest": {}}))
    with pytest.raises(SystemExit, match="--this-machine"):
        add("ingest_quality", source, tmp_path / "results")
    kept = json.loads(add("ingest_quality", source, tmp_path / "results", here=True).read_text())
    assert kept["machine"]["cpus"] and kept["date"] == "2026-01-01"


def test_doc_set_runs_are_kept_as_one_table_with_each_sets_role(tmp_path: Path) -> None:
    from render_tables import add_docsets, answer_quality_docsets

    kept = json.loads((BENCHMARKS / "results" / "answer_quality_docsets.json").read_text())
    runs = []
    for s in kept["sets"][:2]:
        run = {"model": kept["model"], "machine": kept["machine"],
               s["name"]: {"docset": s["docset"], "totals": s["totals"]}}  # fmt: skip
        path = tmp_path / f"{s['name']}.json"
        path.write_text(json.dumps(run))
        runs.append((path, f"role of {s['name']}"))
    target = add_docsets("abc1234", runs, folder=tmp_path / "results")
    report = json.loads(target.read_text())
    assert [s["role"] for s in report["sets"]] == [r for _, r in runs]
    table = answer_quality_docsets(report)
    assert "role of " + kept["sets"][0]["name"] in table and "`abc1234`" in table
    with pytest.raises(SystemExit):
        add_docsets("abc1234", [(tmp_path / "results" / "answer_quality_docsets.json", "x")])


def test_the_hotpot_table_says_what_its_questions_are_beside_the_papers_baseline() -> None:
    report = load_results()["answer_quality_hotpotqa"]
    table = RENDERERS["answer_quality_hotpotqa"](report)
    totals = report["hotpotqa"]["answers"]["totals"]
    n = totals["questions"]
    assert f"designed on all {n} (no held-out split)" in table
    assert f"| {totals['answer_em']:.1f} | {totals['answer_f1']:.1f} |" in table
    assert "| 44.4 | 58.3 |" in table and "full dev set" in table


def test_the_runtime_table_shows_every_step_count_the_run_measured() -> None:
    kept = load_results()["runtime_vs_langgraph"]
    run = {key: value for key, value in kept.items() if not key.endswith("_k100")}
    for key, value in kept.items():
        if key.endswith("_k100"):
            run[key.replace("_k100", "_k10")] = run[key.replace("_k100", "_k50")] = value
    run["settings"] = {**kept["settings"], "k": [10, 50, 200]}
    table = RENDERERS["runtime_vs_langgraph"](run)
    for k in (10, 50, 200):
        assert f"NORMAL, K={k}, vs SqliteSaver" in table
        assert f"database bytes after K={k}" in table
    assert "K=100" not in table


def postgres_run() -> dict[str, object]:
    """A result of benchmarks/postgres_vs_langgraph.py's shape (figures made up)."""
    run: dict[str, object] = {}
    sides = {"kforge": 1.0, "langgraph": 5.0}
    for side, scale in sides.items():
        for suffix in ("", "_async_commit"):
            run[f"{side}_us_per_step{suffix}"] = 1200.0 * scale
            run[f"{side}_bytes{suffix}"] = int(500_000 * scale)
            run[f"{side}_bytes_per_step{suffix}"] = 1700.0 * scale
            run[f"{side}_resume_ms{suffix}"] = 3.0 * scale
            run[f"{side}_resume_cold_ms{suffix}"] = 21.0 * scale / 4
    for count, rate in ((1, 51.0), (2, 93.0), (4, 83.0)):
        run[f"kforge_workers{count}_runs_per_s"] = rate
        run[f"kforge_workers{count}_median_latency_ms"] = 900.0 / count
        run[f"kforge_workers{count}_p95_latency_ms"] = 2000.0 / count
    run["targets"] = {
        name: {"value": 0.2, "limit": limit, "pass": True}
        for name, limit in (("us_per_step", 0.25), ("bytes", 0.1), ("resume", 0.25))
    }
    run["settings"] = {"k": 200, "resume_samples": 5, "runs": 200, "run_k": 3,
                       "concurrency_per_worker": 16, "langgraph_versions": {"langgraph": "1.2.9"}}  # fmt: skip
    run["date"], run["machine"] = "2026-11-26T01:00:00+00:00", {"system": "Linux", "cpus": 2}
    return run


def test_the_postgres_table_shows_the_cold_resume_beside_the_warm_one_and_the_workers() -> None:
    table = RENDERERS["postgres_vs_langgraph"](postgres_run())
    warm = next(line for line in table.splitlines() if "(warm)" in line)
    cold = next(line for line in table.splitlines() if "cold: a new process" in line)
    assert "| 3.00 | 15.00 | 0.200 |" in warm
    assert "| 5.25 | 26.25 | 0.200 |" in cold
    assert "| 2 | 93.0 | 450 | 1,000 |" in table
    assert "synchronous_commit=off" in table and "LangGraph 1.2.9" in table


def test_the_readme_summary_gives_the_postgres_cold_resume_beside_the_warm_one() -> None:
    page = "<!-- table:summary -->\n<!-- /table -->"
    row = render_text(page, {"postgres_vs_langgraph": postgres_run()}, "README.md")
    assert "Durable steps vs LangGraph (PostgreSQL)" in row
    assert "resume warm 3.00 vs 15.00 ms, cold (a new process's first) 5.25 vs 26.25 ms" in row
    assert "51 / 93 / 83 runs/s with 1 / 2 / 4 workers" in row


def ingest_run() -> dict[str, object]:
    """A result of benchmarks/ingest_quality.py's shape: the kept data file's before and after
    runs, with a date and a machine."""
    run = json.loads((BENCHMARKS / "data" / "ingest_quality.json").read_text(encoding="utf-8"))
    run["date"], run["machine"] = "2026-11-26T02:40:00+00:00", {"system": "Linux", "cpus": 2}
    return run


def test_the_ingest_table_shows_every_set_measured_before_and_after() -> None:
    run = ingest_run()
    nodejs = run["runs"]["after"]["nodejs"]  # type: ignore[index]
    nodejs.update(chunks=5175, boilerplate_share=0.0012, furniture_line_share=0.0021,
                  indexed_twice=0, ingest_seconds=1.84, peak_rss_mib=63.4)  # fmt: skip
    run["runs"]["after"]["extra"] = dict(nodejs)  # type: ignore[index]
    table = RENDERERS["ingest_quality"](run)
    lines = table.splitlines()
    assert lines[0] == (
        "| set (before → after) | chunks | boilerplate chunks | furniture lines "
        "| pages indexed twice | ingest s | peak RSS MiB |"
    )
    assert (
        "| nodejs | 5383 → 5175 | 22.9 % → 0.1 % | 22.7 % → 0.2 % | 0 → 0 | 1.6 → 1.8 | 67 → 63 |"
        in lines
    )
    assert "| git | 6698 → " in table and "| 0.6 % → " in table
    for name in ("gettext", "python", "mkdocs"):
        assert f"| {name} | " in table
    assert "| extra | 5175 | 0.1 % | 0.2 % | 0 | 1.8 | 63 |" in lines
    assert "Measured 2026-11-26T02:40:00+00:00 on Linux, 2 CPUs" in table


def test_the_ingest_table_of_a_run_without_a_before_run_has_no_arrows() -> None:
    run = ingest_run()
    del run["runs"]["before"]  # type: ignore[attr-defined]
    table = RENDERERS["ingest_quality"](run)
    assert "→" not in table and table.startswith("| set (after) | chunks |")
    assert len([line for line in table.splitlines() if line.startswith("| ")]) == 1 + 5


def test_the_tree_table_gains_the_kill_scenario_when_the_run_measured_it() -> None:
    kept = {k: v for k, v in load_results()["tree"].items() if k != "faults"}
    assert "kill" not in RENDERERS["tree"](kept)  # a run of the plain scenario only
    kforge = {"steps_before_kill": 60, "steps": 170, "steps_reexecuted": 0, "wall_s": 1.2,
              "resume_wall_s": 0.6, "accepted": 84, "lost": 0, "applied_twice": 0}  # fmt: skip
    langgraph = {**kforge, "setup": "async", "steps": 126, "steps_reexecuted": 16}
    for key in ("accepted", "lost", "applied_twice"):
        del langgraph[key]
    run = {**kept, "faults": {"rows": [{"n": 1, "kforge": kforge, "langgraph_async": langgraph}],
                              "notes": ["LangGraph has no counterpart"]}}  # fmt: skip
    table = RENDERERS["tree"](run)
    assert "| 1 | kforge | 60 | 170 | 0 | 1.20 | 0.60 | 84 | 0 | 0 |" in table
    assert (
        "| 1 | LangGraph, async | 60 | 126 | 16 | 1.20 | 0.60 | \N{EN DASH} | \N{EN DASH} | \N{EN DASH} |"
        in table
    )
    assert "LangGraph has no counterpart." in table
