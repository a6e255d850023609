"""Ingest quality on real documentation: how much of what is indexed is page furniture.

Ingests each documentation set (see ``benchmarks/docsets.py``) into a fresh SQLite corpus, in a
child process per set so that its peak memory is its own, and reports per set: sources and
chunks indexed, the share of chunks that are boilerplate, the share of furniture lines, pages
indexed twice, ingest seconds and peak RSS.

Furniture line (a non-blank line of chunk text, stripped) -- any of:
  navigation   "Next: … Previous: … Up: …" lines, bars of bracketed links ("[ << ] [Top]"), or
               a line made only of navigation words and arrows, at least one a word (Next,
               Previous, Up, Top, Contents, Index, Home, Search, Navigation, This Page, Show
               Source, Quick search, «, », |, …);
  metadata     an HTML comment marker (``<!--``, ``-->``) or a line of a Node.js YAML comment
               (``added:``, ``changes:``, ``- version:``, ``pr-url:``, ``description:``, …);
  link refs    a Markdown link-reference definition (``[`os.EOL`]: #oseol``);
  badges       ``Stability: N`` lines and image-only badge lines;
  markup       AsciiDoc markup: block attributes (``[verse]``, ``[[anchor]]``,
               ``[source,c]``; not a synopsis line such as ``[--bare]``), directives
               (``include::``, ``ifdef::``), ``term::`` lines, delimiter lines of one repeated
               character (``----``, ``====``), ``+`` and ``--`` lines, attribute entries;
  generator    "This document was generated … using …" notes.
A chunk is boilerplate when at least half of its non-blank lines are furniture lines. The same
rule is applied to every version measured.

Pages indexed twice: (folder, file stem) pairs for which more than one file was indexed.

    python benchmarks/docsets.py nodejs git gettext              # fetch the sets once
    python benchmarks/ingest_quality.py --json after.json
    PYTHONPATH=OTHER/src python benchmarks/ingest_quality.py --label before --json before.json
    python benchmarks/ingest_quality.py --before before.json --json ingest_quality.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT_DOCSETS = Path(os.environ.get("KFORGE_DOCSETS", Path.home() / ".cache" / "kforge-docsets"))
DEFAULT_SETS = ("nodejs", "git", "gettext")

_NAV_WORDS = frozenset(
    [
        "next",
        "previous",
        "prev",
        "up",
        "top",
        "contents",
        "index",
        "home",
        "search",
        "navigation",
        "this",
        "page",
        "show",
        "source",
        "quick",
        "go",
        "table",
        "of",
        "modules",
        "skip",
        "to",
        "content",
        "main",
        "menu",
        "about",
        "help",
        "report",
        "a",
        "bug",
        "edit",
        "on",
        "github",
        "theme",
        "«",
        "»",
        "|",
        "?",
        "<",
        ">",
        "<<",
        ">>",
        "[",
        "]",
        "←",
        "→",
        "^",
        "back",
        "forward",
        "fastback",
        "fastforward",
    ]
)
_FURNITURE = [
    re.compile(p)
    for p in (
        r"^(?:Next|Previous|Prev|Up):",
        r"^(?:\[\s*(?:<<|>>|<|>|\?|Top|Contents|Index|Up|Next|Prev|Previous|Back|Forward)"
        r"\s*\]\s*)+$",
        r"<!--|-->",
        r"^(?:-\s*)?(?:added|changes|changed|deprecated|removed|version|pr-url|description|"
        r"napiVersion|introduced_in|source_link)\s*:",
        r"^-\s*v\d+\.\d+",
        r"^\[[^\]]+\]:\s*\S",
        r"^>?\s*Stability:\s*\d",
        r"^\[?!\[[^\]]*\]\([^)]*\)",
        r"^\[(?:\[[\w:.-]+\]|[A-Za-z#][\w#.,=\"' -]*)\]$",
        r"^(?:include|ifdef|ifndef|ifeval|endif)::",
        r"^\S.*::$",
        r"^(?:-{4,}|={4,}|~{4,}|\^{4,}|\.{4,}|\+{4,}|/{4,}|_{4,}|\*{4,})$",
        r"^(?:\+|--)$",
        r"^:[\w-]+!?:",
        r"^This document was generated\b.*\busing\b",
    )
]


def is_furniture(line: str) -> bool:
    """Whether one stripped, non-blank line of chunk text is page furniture (see the module
    docstring for the rule)."""
    if any(p.search(line) for p in _FURNITURE):
        return True
    words = [w.strip(".,:") for w in line.lower().replace("[", " [ ").replace("]", " ] ").split()]
    return any(w.isalpha() for w in words) and all(w in _NAV_WORDS or not w for w in words)


def chunk_is_boilerplate(text: str) -> tuple[bool, int, int]:
    """(boilerplate?, furniture lines, non-blank lines) of one chunk's text."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    furniture = sum(is_furniture(line) for line in lines)
    return bool(lines) and furniture * 2 >= len(lines), furniture, len(lines)


def measure_set(folder: Path) -> dict[str, Any]:
    """Ingest ``folder`` into a fresh corpus in this process and measure what was indexed."""
    from kforge.rag.corpus import Corpus
    from kforge.store.sqlite import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "kforge.db")
        corpus = Corpus.open(store, "bench")
        started = time.perf_counter()
        report = corpus.ingest(folder)
        seconds = time.perf_counter() - started
        chunks = corpus.chunks()
        boiler = furniture = lines = 0
        examples: list[str] = []
        for chunk in chunks:
            flagged, f, n = chunk_is_boilerplate(chunk.text)
            boiler += flagged
            furniture += f
            lines += n
            if flagged and len(examples) < 3:
                examples.append(" ".join(chunk.text.split())[:120])
        stems = Counter(
            (str(Path(s.file).parent), Path(s.file).stem.lower()) for s in corpus.sources()
        )
        store.close()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "sources": sum(stems.values()),
        "chunks": len(chunks),
        "boilerplate_chunks": boiler,
        "boilerplate_share": round(boiler / len(chunks), 4) if chunks else 0.0,
        "furniture_line_share": round(furniture / lines, 4) if lines else 0.0,
        "indexed_twice": sum(1 for n in stems.values() if n > 1),
        "duplicates_skipped": len(getattr(report, "duplicates", ())),
        "skipped": len(report.skipped),
        "ingest_seconds": round(seconds, 2),
        "peak_rss_mib": round(rss_kib / 1024, 1),
        "boilerplate_examples": examples,
    }


def run_child(folder: Path) -> dict[str, Any]:
    """``measure_set`` in a child process with the same interpreter and environment."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"ingest of {folder} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


_COLUMNS = (
    ("sources", "sources"),
    ("chunks", "chunks"),
    ("boilerplate_share", "boilerplate"),
    ("furniture_line_share", "furniture lines"),
    ("indexed_twice", "indexed twice"),
    ("ingest_seconds", "ingest s"),
    ("peak_rss_mib", "peak RSS MiB"),
)


def _cell(key: str, value: Any) -> str:
    if key.endswith("share"):
        return f"{100 * float(value):.1f} %"
    return str(value)


def table(runs: dict[str, dict[str, dict[str, Any]]]) -> str:
    """A Markdown table: one row per set and run label."""
    head = "| set | run | " + " | ".join(title for _, title in _COLUMNS) + " |"
    rows = [head, "|" + " --- |" * (len(_COLUMNS) + 2)]
    for label, sets in runs.items():
        for name, result in sets.items():
            cells = " | ".join(_cell(key, result[key]) for key, _ in _COLUMNS)
            rows.append(f"| {name} | {label} | {cells} |")
    return "\n".join(rows)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT_SETS), help="sets to ingest")
    parser.add_argument("--docsets", type=Path, default=DEFAULT_DOCSETS, help="their folder")
    parser.add_argument("--label", default="after", help="name of this run in the table")
    parser.add_argument("--before", type=Path, help="JSON of an earlier run to show beside it")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.child is not None:
        print(json.dumps(measure_set(opts.child)))
        return 0
    # Seconds and RSS move with whatever else runs here: the result names the machine and load.
    machine = {
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
    }
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    if opts.before is not None:
        runs.update(json.loads(opts.before.read_text())["runs"])
    current: dict[str, dict[str, Any]] = {}
    for name in opts.sets:
        folder = opts.docsets / name
        if not folder.is_dir():
            sys.exit(f"no documentation set '{name}' in {opts.docsets}: run benchmarks/docsets.py")
        current[name] = run_child(folder)
    runs[opts.label] = current
    print(table(runs))
    if opts.json is not None:
        rule = (__doc__ or "").split("Furniture line", 1)[1].split("Pages indexed", 1)[0]
        payload = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine,
            "load_average_at_end": [round(v, 2) for v in os.getloadavg()],
            "rule": "Furniture line" + rule.rstrip(),
            "runs": runs,
        }
        opts.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
