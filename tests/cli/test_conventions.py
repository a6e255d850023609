"""The command line's conventions: global options anywhere, ``--version``, help on every
argument, one error format on stderr, the documented exit codes, and a command that loads only
what it runs."""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import kforge
from kforge.cli import EXIT_CODES, build_parser, main


def every_parser(
    parser: argparse.ArgumentParser, path: str = "kforge"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every_parser(sub, f"{path} {name}")


def test_every_command_and_argument_has_help_and_accepts_db() -> None:
    parsers = list(every_parser(build_parser()))
    assert {"kforge corpora list", "kforge runs delete", "kforge runs cancel"} <= {
        p for p, _ in parsers
    }
    for path, parser in parsers:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert choice.help, f"{path} {choice.dest} has no help"
                continue
            assert action.help, f"{path}: {action.option_strings or action.dest} has no help"
        assert any("--db" in a.option_strings for a in parser._actions), path


def test_db_before_or_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    ignored = tmp_path / "ignored.db"
    for argv, used in (
        (["runs", "show", "r1", "--db", str(first)], first),
        (["runs", "--db", str(second), "show", "r1"], second),
        (["--db", str(ignored), "runs", "show", "r1", "--db", str(first)], first),
    ):
        assert main(argv) == 1
        assert f"no database at {used}:" in capsys.readouterr().err  # the one --db named
    assert main(["runs", "list", "--db", str(first)]) == 0
    assert "no runs yet" in capsys.readouterr().out


def test_model_before_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "k.db")
    for var in ("KFORGE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["--model", "openai:gpt-4o-mini", "--db", db, "ask", "q"]) == 1
    assert "no API key for openai:gpt-4o-mini" in capsys.readouterr().err
    assert main(["--model", "test", "--db", db, "runs", "list"]) == 2
    assert "--model does not apply to 'kforge runs'" in capsys.readouterr().err


def test_version_and_bare_kforge(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kforge {kforge.__version__}"
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: kforge") and EXIT_CODES in err
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0 and "exit codes:" in capsys.readouterr().out


def test_a_command_loads_only_its_own_module() -> None:
    """``kforge ask`` does not import the other commands, the agents it does not run, or the
    package metadata reader (``--version`` reads it when asked)."""
    code = (
        "import sys; from kforge.cli import build_parser; "
        "args = build_parser(['--db', 'x.db', 'ask', 'serve?']).parse_args(['ask', 'q']); "
        "loaded = ('kforge.cli.serve', 'kforge.cli.research', 'kforge.agents.research', "
        "'importlib.metadata'); print(args.command, [m for m in loaded if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["ask", "[]"]
    every = {path for path, _ in every_parser(build_parser(["serve?"]))}
    assert {"kforge ask", "kforge serve", "kforge intervene"} <= every
    assert "kforge runs list" in {path for path, _ in every_parser(build_parser(["intervene"]))}
    assert "kforge serve" in {path for path, _ in every_parser(build_parser(["-h", "ask"]))}


def test_usage_errors_exit_2_and_errors_exit_1_in_one_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["ask"])
    assert exit_info.value.code == 2
    assert "kforge ask: error: the following arguments are required" in capsys.readouterr().err
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext\n")
    assert main(["ingest", str(docs), "--max-chars", "5", "--db", str(tmp_path / "k.db")]) == 2
    assert capsys.readouterr().err.startswith("kforge: error: --max-chars:")
    assert main(["--db", str(tmp_path / "k.db"), "corpora", "show", "nope"]) == 1
    assert capsys.readouterr().err.startswith("kforge: error: no corpus named 'nope'")


def test_an_unusable_database_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for command in (["ask", "q", "--model", "test"], ["runs", "show", "r1"]):
        assert main(["--db", str(blocker / "k.db"), *command]) == 1
        err = capsys.readouterr().err
        assert err.startswith("kforge: error: ") and err.count("\n") == 1


def test_a_report_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    target = tmp_path / "reports-dir"
    target.mkdir()
    assert main(["--db", str(db), "research", "q", "-o", str(target)]) == 1
    assert "it is a folder" in capsys.readouterr().err
    assert not db.exists()  # refused before the database was even opened


def test_an_interrupt_exits_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(store: object) -> list[dict[str, object]]:
        raise KeyboardInterrupt

    monkeypatch.setattr("kforge.cli.corpora.list_corpora", interrupted)
    assert main(["--db", str(tmp_path / "k.db"), "corpora", "list"]) == 130
    assert capsys.readouterr().err == "kforge: interrupted\n"


def test_research_writes_progress_to_stderr_and_the_report_path_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("KFORGE_CONFIG", str(tmp_path / "empty.toml"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alpha protocol keeps durable checkpoints.\n")
    db = tmp_path / "k.db"
    research = ["--db", str(db), "research", "How does alpha keep runs?", "--model", "test"]
    # nobody at a terminal to approve the question tree: exit 3, nothing on stdout
    assert main([*research, "--docs", str(docs)]) == 3
    out, err = capsys.readouterr()
    assert out == "" and "corpus 'docs'" in err and "is waiting: Approve the question tree?" in err
    assert main([*research, "--corpus", "docs", "--yes", "-o", "out/report.md"]) == 0
    out, err = capsys.readouterr()
    assert out == "report written to out/report.md\n"
    assert "phase" in err and "completed" in err
    assert (tmp_path / "out" / "report.md").read_text().startswith("# Research report")


def test_ctrl_c_at_the_chat_prompt_exits_130_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(kforge.__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kforge", "--db", str(tmp_path / "k.db"), "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    # questions piped in: the chat talks on stderr, and is ready once it has explained its
    # commands
    for line in proc.stderr:
        if line.startswith("Commands:"):
            break
    proc.send_signal(signal.SIGINT)
    try:
        assert proc.wait(timeout=60) == 130  # without a line typed
    finally:
        proc.kill()
    assert "Traceback" not in proc.stderr.read()


def test_a_long_run_on_a_terminal_shows_where_it_is_and_clears_the_line() -> None:
    from kforge.cli._follow import RunStatusLine
    from kforge.frames import ModelCall, PhaseChanged

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    status = RunStatusLine.for_terminal(out)
    assert status is not None and RunStatusLine.for_terminal(io.StringIO()) is None
    status.update(PhaseChanged(run_id="r", seq=1, from_phase=None, to_phase="answer", visit=1))
    status.update(ModelCall(run_id="r", seq=2, model="m", response={}, purpose="answer"))
    shown = out.getvalue().rsplit("\r", 1)[-1]
    assert "phase answer" in shown and "1 model call(s)" in shown and "2 frames" in shown
    status.clear()
    assert out.getvalue().endswith("\r\x1b[K")
