"""Research question trees on real documentation: invented categories and coverage of each part.

Runs the Research agent (extractive answers, checkpoints approved) over three Debian
documentation sets fetched by ``benchmarks/docsets.py`` (nodejs-doc 18.20.4 Markdown,
gettext-doc 0.21 Texinfo HTML, git-doc 2.39.5 AsciiDoc and HTML). For every run it counts

- **invented categories**, by this benchmark's own rule: a category name that neither occurs in
  the documents (as a phrase, case, punctuation and spacing aside) nor is made of the question's
  words (each word of four letters or more matches a question word on its first four letters),
  or that is a case, slug or join variant of another category of the same tree (the same
  letters once lowercased with spaces, ``_``, ``-`` and the word "category" removed, or a
  comma-separated list);
- **parts answered** for questions written with three parts: a part is answered when the
  report's own section for it (the category of the sub-question ``question_parts`` makes of
  it) holds an answer taken from the documents (not a fallback, not "the documents do not
  say") that holds the part's key fact: each group of its words, in one of the spellings
  listed (the call, command or option that does it, or the defining words);
- **sub-questions off the question**: tree questions that hold nothing distinctive of the
  question's focus nor of one of its parts' (``about_question``);
- whether the document that best matches the whole question (BM25's first) is cited, and
  whether the Frontier names, uncited, the best document of the question or of one of its
  tree's questions.

The model is ``local:smollm2`` (the bundled model) by default; ``--model echo`` is a stand-in
that proposes what small models were seen to propose: names echoed from its prompt, slug,
camelCase and list joins of the tree's categories, and words of the answers it reads.

    python benchmarks/research_categories.py --json research_categories.json
    python benchmarks/research_categories.py --model echo --runs 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kforge import Runtime, ingest_folder
from kforge.agents.research.decompose import question_parts
from kforge.agents.research.planning import about_question
from kforge.agents.research.prompts import Breakdown, CategoryQuestions, Discovery, Expansion, Gaps
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.store import RunStatus

DOCSETS = Path.home() / ".cache" / "kforge-docsets"
CORPORA = {name: DOCSETS / name for name in ("nodejs", "gettext", "git")}
QUESTIONS: list[dict[str, Any]] = [
    {
        "corpus": "nodejs",
        "question": "What is a worker thread in Node.js, how do threads share memory, and how "
        "is a worker terminated?",
        "parts": [
            {"part": "what a worker thread is", "words": [["thread"], ["parallel"]]},
            {"part": "how threads share memory", "words": [["SharedArrayBuffer", "share memory"]]},
            {"part": "how a worker is terminated", "words": [["worker"], ["stop", "exit"]]},
        ],
    },
    {
        "corpus": "nodejs",
        "question": "How do I create, rename and delete a file?",
        "parts": [
            {"part": "create a file", "words": [["writeFile", "open(", "'w'"], ["creat"]]},
            {"part": "rename a file", "words": [["rename("]]},
            {"part": "delete a file", "words": [["unlink(", "rm("]]},
        ],
    },
    {
        "corpus": "gettext",
        "question": "What is a PO file, how is it updated with msgmerge, and how is it turned "
        "into an MO file?",
        "parts": [
            {
                "part": "what a PO file is",
                "words": [["PO file"], ["Portable Object", "human", "translator"]],
            },
            {"part": "updating with msgmerge", "words": [["msgmerge"], ["updat", "merg"]]},
            {"part": "turning it into an MO file", "words": [["msgfmt"]]},
        ],
    },
    {
        "corpus": "git",
        "question": "How do I create, rename and delete a branch?",
        "parts": [
            {
                "part": "create a branch",
                "words": [["creates a new branch", "switch -c", "-c option", "checkout -b"]],
            },
            {"part": "rename a branch", "words": [["-m,", "--move", "branch -m"]]},
            {"part": "delete a branch", "words": [["-d,", "--delete", "branch -d"]]},
        ],
    },
    {"corpus": "nodejs", "question": "How do streams handle backpressure?"},
    {"corpus": "nodejs", "question": "What does os.EOL contain?"},
    {"corpus": "gettext", "question": "How do I go from a PO file to an MO file?"},
    {"corpus": "gettext", "question": "What is the difference between msgmerge and msgfmt?"},
    {"corpus": "git", "question": "How do I undo the last commit?"},
    {"corpus": "git", "question": "What does git rebase do?"},
]
NO_ANSWER = ("No passage in the documents", "The documents do not say")
_GENERIC = {"category", "categories", "topic", "section"}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _norm(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _variant_key(name: str) -> str:
    return "".join(w for w in _norm(name).split() if w not in _GENERIC)


def invented(names: Sequence[str], question: str, corpus_text: str) -> list[dict[str, str]]:
    """The categories this benchmark's rule counts as invented, each with why."""
    out = []
    asked = {w[:4] for w in _norm(question).split()}
    keys = [_variant_key(n) for n in names]
    for i, name in enumerate(names):
        phrase = _norm(name)
        in_docs = bool(phrase) and f" {phrase} " in corpus_text
        in_question = all(w[:4] in asked for w in phrase.split() if len(w) >= 4)
        if not (in_docs or in_question):
            out.append({"name": name, "why": "neither the question nor the documents say it"})
        elif "," in name or keys[i] in keys[:i]:
            out.append({"name": name, "why": "a case, slug or join variant of another"})
    return out


def answered(part: dict[str, Any], answer: dict[str, Any] | None) -> str:
    """The text of ``answer`` when it answers ``part`` from the documents ("" otherwise)."""
    if not answer or answer.get("fallback"):
        return ""
    text = str(answer.get("text", ""))
    if text.startswith(NO_ANSWER):
        return ""
    low = text.lower()
    if all(any(w.lower() in low for w in spellings) for spellings in part["words"]):
        return text
    return ""


def part_sections(question: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """For each part ``question_parts`` makes of ``question``: its section's name and answer."""
    by_text = {q["text"].lower(): q for q in result.get("questions", [])}
    names = {c["id"]: c["name"] for c in result.get("categories", [])}
    out = []
    for part in question_parts(question):
        asked = by_text.get(part.question.lower())
        out.append(
            {
                "question": part.question,
                "section": names.get(asked["category_id"], "") if asked else "",
                "answer": result.get("answers", {}).get(asked["id"]) if asked else None,
            }
        )
    return out


class EchoModel:
    """Proposes what small models were seen to propose (see the module doc), seeded."""

    SCHEMAS = {
        "decompose": schema_for(Breakdown),
        "new_category": schema_for(CategoryQuestions),
        "discover": schema_for(Discovery),
        "gaps": schema_for(Gaps),
        "expand": schema_for(Expansion),
    }

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _names(self, messages: list[Message]) -> list[str]:
        text = "\n".join(m.content for m in messages)
        found = re.search(r"Categories: (.*)", text)
        existing = [n.strip() for n in (found.group(1) if found else "").split(",") if n.strip()]
        words = re.findall(r"\b[A-Z][a-z]{3,}(?: [A-Z][a-z]{3,})?\b", text)
        options = [
            self.rng.choice(words) if words else "",
            "Research Question",
            "Category",
        ]
        for name in existing:
            parts = _norm(name).split()
            options += [
                "_".join(parts) + "_category",
                parts[0] + "".join(p.title() for p in parts[1:]),
                name.upper(),
            ]
        if len(existing) > 1:
            options.append(", ".join(existing[:3]))
        return options

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema is None:
            return "No passage says more."
        name = next((k for k, v in self.SCHEMAS.items() if v == info.output_schema), "")
        names = self._names(messages)
        pick = self.rng.choice(names)
        question = messages[-1].content.split("\n")[0].split(": ", 1)[-1]
        if name == "decompose":
            return {
                "categories": [
                    {"name": self.rng.choice(names), "questions": [question]}
                    for _ in range(self.rng.randint(1, 3))
                ]
            }
        if name == "new_category":
            return {"questions": [f"What about {pick}?"]}
        if name == "discover":
            return {"new_category": pick}
        if name == "gaps":
            return {"needs_more_answers": False, "follow_up_question": "", "missing_category": pick}
        if name == "expand":
            return {"questions": [{"question": f"What is {pick}?", "why": "next"}]}
        return {}


async def one_run(rt: Runtime, item: dict[str, Any], corpus_text: str) -> dict[str, Any]:
    started = time.monotonic()
    run = await rt.run(
        "research",
        {"question": item["question"], "corpus": item["corpus"], "answer": "extractive"},
    )
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, "approve")
        run = await rt.wait(run.id)
    result = run.result or {}
    names = [c["name"] for c in result.get("categories", [])]
    corpus = rt.services.corpus(item["corpus"])
    best = corpus.search(item["question"], 1)
    cited = {s["file"] for s in result.get("sources", [])}
    statistics = CorpusStatistics.of(corpus)
    foci = [
        question_focus(q, statistics)
        for q in [item["question"], *(p.question for p in question_parts(item["question"]))]
    ]
    asked = [item["question"], *(q["text"] for q in result.get("questions", []))]
    bests = {hit.chunk.file for q in asked for hit in corpus.search(q, 1)}
    frontier = {
        m.group(1)
        for f in result.get("frontier", [])
        if (m := re.search(r"covered in (\S+),", f.get("why", "")))
    }
    row: dict[str, Any] = {
        "corpus": item["corpus"],
        "question": item["question"],
        "status": run.status.value,
        "error": run.error,
        "seconds": round(time.monotonic() - started, 1),
        "categories": names,
        "questions": [q["text"] for q in result.get("questions", [])],
        "invented": invented(names, item["question"], corpus_text),
        "off_question": [
            q["text"] for q in result.get("questions", []) if not about_question(q["text"], foci)
        ],
        "refused": [
            dict(f.payload) for f in rt.frames(run.id) if f.type == "data.category.refused"
        ],
        "best_document": best[0].chunk.file if best else None,
        "best_document_cited": bool(best) and best[0].chunk.file in cited,
        "best_left_to_frontier": sorted((bests & frontier) - cited),
        "report": result.get("report", ""),
    }
    if item.get("parts"):
        sections = part_sections(item["question"], result)
        row["parts"] = [
            {
                "part": p["part"],
                "section": section["section"],
                "answer": answered(p, section["answer"])[:400],
            }
            for p, section in zip(item["parts"], sections, strict=False)
        ]
    return row


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        texts: dict[str, str] = {}
        for index, item in enumerate(QUESTIONS[: opts.runs]):
            model: Any = (
                FunctionModel(EchoModel(index), name="echo") if opts.model == "echo" else opts.model
            )
            rt = Runtime(Path(tmp) / "runs.db", model=model)
            corpus = rt.services.corpus(item["corpus"])
            if item["corpus"] not in texts:
                ingest_folder(corpus, CORPORA[item["corpus"]])
                texts[item["corpus"]] = (
                    " "
                    + " ".join(_norm(f"{c.title} {c.heading} {c.text}") for c in corpus.chunks())
                    + " "
                )
            progress(f"[{index + 1}/{opts.runs}] {item['corpus']}: {item['question']}")
            row = await one_run(rt, item, texts[item["corpus"]])
            progress(
                f"    {row['status']} in {row['seconds']} s; categories {row['categories']}; "
                f"invented {len(row['invented'])}"
            )
            rows.append(row)
    parts = [p for r in rows for p in r.get("parts", [])]
    return {
        "model": opts.model,
        "runs": len(rows),
        "invented": sum(len(r["invented"]) for r in rows),
        "categories": sum(len(r["categories"]) for r in rows),
        "refused": sum(len(r["refused"]) for r in rows),
        "parts_answered": sum(1 for p in parts if p["answer"]),
        "off_question": sum(len(r["off_question"]) for r in rows),
        "questions": sum(len(r["questions"]) for r in rows),
        "parts": len(parts),
        "best_document_cited": sum(1 for r in rows if r["best_document_cited"]),
        "best_left_to_frontier": sum(1 for r in rows if r["best_left_to_frontier"]),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:smollm2", help="model spec, or 'echo'")
    parser.add_argument("--runs", type=int, default=len(QUESTIONS), help="runs (default: all)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    opts = parser.parse_args(argv)
    missing = [n for n, p in CORPORA.items() if not p.is_dir()]
    if missing:
        print(f"missing {', '.join(missing)}: run python benchmarks/docsets.py", file=sys.stderr)
        return 1
    report = asyncio.run(run(opts))
    print(f"model {report['model']}: {report['runs']} runs")
    print(f"{'corpus':<8} {'cats':>4} {'invented':>8} {'best doc cited':>14}  question")
    for row in report["rows"]:
        print(
            f"{row['corpus']:<8} {len(row['categories']):>4} {len(row['invented']):>8} "
            f"{'yes' if row['best_document_cited'] else 'no':>14}  {row['question'][:60]}"
        )
        for part in row.get("parts", []):
            mark = "answered" if part["answer"] else "NOT answered"
            print(f"{'':<31}  - {part['part']} ({part['section'] or 'no section'}): {mark}")
    print(
        f"invented categories: {report['invented']} of {report['categories']} (the agent "
        f"refused {report['refused']} proposed names); tree questions off the question: "
        f"{report['off_question']} of {report['questions']}; parts answered in their own "
        f"section: {report['parts_answered']} of {report['parts']}; best document cited in "
        f"{report['best_document_cited']} of {report['runs']} runs; a question's best document "
        f"left to the Frontier in {report['best_left_to_frontier']} runs"
    )
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
