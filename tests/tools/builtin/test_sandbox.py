"""The python tool's sandbox confines reads as well as writes: the system's password file, the
user's home folder and the run database are refused, by the policy in the child and, where the
kernel has Landlock, by the kernel itself (measured here without the policy)."""

from __future__ import annotations

import ctypes
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kforge.tools import ToolContext
from kforge.tools.builtin import sandbox_child
from kforge.tools.builtin.python import PythonTool
from kforge.tools.builtin.sandbox import SandboxLimits, run_sandboxed

LIMITS = SandboxLimits(cpu_s=5, wall_s=30, memory_mb=512, file_size_mb=1)


def landlock_abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))


@pytest.fixture
def database(tmp_path: Path) -> Path:
    db = tmp_path / "runs.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE secrets (value TEXT)")
    conn.execute("INSERT INTO secrets VALUES ('the run log')")
    conn.commit()
    conn.close()
    return db


def targets(database: Path) -> dict[str, str]:
    return {
        "password file": "open('/etc/passwd').read()",
        "home folder": f"import os\nos.listdir({str(Path.home())!r})",
        "database": f"open({str(database)!r}, 'rb').read()",
        "database by a relative path": (
            f"import os\nopen(os.path.relpath({str(database)!r}), 'rb').read()"
        ),
    }


async def test_reads_outside_the_working_directory_are_refused(database: Path) -> None:
    tool = PythonTool(LIMITS)
    for what, code in targets(database).items():
        result = await tool.execute({"code": code}, ToolContext())
        assert result.is_error, what
        assert "outside the working directory" in result.text, (what, result.text)
    ok = await tool.execute(
        {
            "code": "import json, decimal\nopen('n.txt', 'w').write('x')\n"
            "json.dumps([open('n.txt').read(), str(decimal.Decimal(2))])"
        },
        ToolContext(),
    )
    assert not ok.is_error and ok.text == '\'["x", "2"]\''
    assert "read and write files only in its own temporary working directory" in tool.description


@pytest.mark.skipif(landlock_abi() < 1, reason="the kernel has no Landlock")
async def test_the_kernel_confines_reads_by_itself(tmp_path: Path, database: Path) -> None:
    outcome = await run_sandboxed("1 + 1", LIMITS)
    assert "landlock" in outcome.isolation
    workdir = tmp_path / "work"
    workdir.mkdir()
    script = (
        "import os, sys\n"
        "from kforge.tools.builtin.sandbox_child import confine_files, read_roots\n"
        "assert confine_files(sys.argv[1], read_roots())\n"
        "for path in sys.argv[2:]:\n"
        "    try:\n"
        "        os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read()\n"
        "        print('READ', path)\n"
        "    except PermissionError:\n"
        "        print('REFUSED', path)\n"
        "open(os.path.join(sys.argv[1], 'ok'), 'w').write('fine')\n"
        "print('WROTE')\n"
    )
    src = Path(sandbox_child.__file__).resolve().parents[3]
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(workdir),
            "/etc/passwd",
            str(Path.home()),
            str(database),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "REFUSED /etc/passwd",
        f"REFUSED {Path.home()}",
        f"REFUSED {database}",
        "WROTE",
    ]


async def test_a_workspace_is_the_working_folder_and_is_kept(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "data.txt").write_text("41")
    tool = PythonTool(LIMITS, workspace=str(workspace))
    result = await tool.execute(
        {"code": "n = int(open('data.txt').read()) + 1\nopen('out.txt', 'w').write(str(n))\nn"}
    )
    assert not result.is_error, result.text
    assert (workspace / "out.txt").read_text() == "42"  # the folder stays after the run
    escape = await tool.execute({"code": f"open({str(tmp_path / 'x.txt')!r}, 'w')"})
    assert escape.is_error and not (tmp_path / "x.txt").exists()
    assert "workspace" in tool.description
    with pytest.raises(FileNotFoundError, match="does not exist"):
        await run_sandboxed("1", LIMITS, workdir=tmp_path / "missing")
