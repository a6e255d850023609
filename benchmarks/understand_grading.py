"""How Understand grades a check answer without a model: sensible paraphrases that should pass
and answers about something else that should fail, over explanations quoted from real
documentation (nodejs-doc 18.20.4, MIT licence; gettext-doc 0.21, GFDL 1.2; the samples shipped
with kforge). The explanations and the passages they cite are the documents' own sentences;
the answers were written for this benchmark.

    python benchmarks/understand_grading.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kforge.agents.understand.learner import grade_answer

CASES: list[dict[str, Any]] = [
    {
        "question": "In your own words: what is os.EOL?",
        "explanation": "The operating system-specific end-of-line marker. `\\n` on POSIX `\\r\\n` on Windows",
        "right": [
            "the character sequence that ends a line on this OS",
            "the end-of-line marker specific to the operating system",
            "it is the marker the operating system uses to end a line, \\n on POSIX and \\r\\n on Windows",
            "the line ending for the current OS",
        ],
        "wrong": [
            "the number of CPUs on the machine",
            "it returns the hostname of the operating system",
        ],
    },
    {
        "question": "In your own words: what is stats.nlink?",
        "explanation": "The number of hard-links that exist for the file.",
        "right": [
            "the number of links pointing at this file's inode",
            "how many hard links point to the file",
            "it counts the hard-links that exist for a file",
            "the count of hard links to this file",
        ],
        "wrong": ["the size of the file in bytes", "the time the file was last modified"],
    },
    {
        "question": "In your own words: what does worker.terminate() do?",
        "explanation": "Stop all JavaScript execution in the worker thread as soon as possible. Returns a Promise for the exit code that is fulfilled when the 'exit' event is emitted.",
        "right": [
            "it kills the worker as fast as possible and gives back a promise of the exit code",
            "it stops the JavaScript running in the worker thread as soon as it can",
            "stops the worker's execution and returns a promise for its exit code",
            "it halts all execution in the worker thread",
        ],
        "wrong": ["it starts a new worker thread", "it sends a message to the parent port"],
    },
    {
        "question": "In your own words: what does the msgmerge program do?",
        "explanation": "The msgmerge program merges two Uniforum style .po files together. The def.po file is an existing PO file with translations which will be taken over to the newly created file as long as they still match; comments will be preserved, but extracted comments and file positions will be discarded.",
        "right": [
            "it updates an existing translation file from a new template, keeping translations that still match",
            "it merges two PO files, keeping the old translations that still match",
            "it combines two .po files into one and carries over existing translations",
            "merges po files together",
        ],
        "wrong": [
            "it compiles a PO file into a binary MO file",
            "it extracts translatable strings from C sources",
        ],
    },
    {
        "question": "In your own words: what does msgfmt do?",
        "explanation": "The msgfmt programs generates a binary message catalog from a textual translation description.",
        "right": [
            "it compiles the text translations into a binary catalog",
            "it turns a textual translation description into a binary catalog",
            "msgfmt generates binary message catalogs from text translations",
            "it produces a binary catalog of messages from the translation text",
        ],
        "wrong": ["it merges two PO files", "it formats C source code"],
    },
    {
        "passages": [
            "* `callback` {Function} The function to call when the timer elapses. * `delay` {number} The number of milliseconds to wait before calling the `callback`. **Default:** `1`. Schedules execution of a one-time `callback` after `delay` milliseconds. The `callback` will likely not be invoked in precisely `delay` milliseconds. Node.js makes no guarantees about the exact timing of when callbacks will fire, nor of their ordering. The callback will be called as close as possible to the time specified."
        ],
        "question": "In your own words: what does setTimeout do?",
        "explanation": "Schedules execution of a one-time `callback` after `delay` milliseconds. The `callback` will likely not be invoked in precisely `delay` milliseconds.",
        "right": [
            "it waits the given number of milliseconds and then calls the function once; the timing is not exact",
            "it runs a callback once after a delay in milliseconds",
            "schedules the callback to execute one time after the delay, though not precisely on time",
            "it calls the callback a single time after delay milliseconds",
        ],
        "wrong": [
            "it runs the callback repeatedly every few milliseconds",
            "it cancels a timer that was set before",
        ],
    },
    {
        "passages": [
            "A human checkpoint pauses the run at a meaningful moment: - **Blocking** checkpoints require an answer before the run continues: approve, modify, or reject. A research agent might block after decomposing the question into sub-questions, so a person can prune or add branches before any searching starts."
        ],
        "question": "In your own words: what does a blocking checkpoint do?",
        "explanation": "A blocking checkpoint pauses the run until a person approves, modifies or rejects the plan. The run waits without holding a worker, and the answer resumes it at the exact step.",
        "right": [
            "execution halts until a human approves, edits or turns down the plan",
            "the run pauses until a person approves or rejects the plan",
            "it stops the run and waits for someone to approve, change or reject the plan",
            "the run waits for a human to approve the plan, then resumes at the same step",
        ],
        "wrong": [
            "it saves a copy of the database every hour",
            "it deletes the run and starts over",
        ],
    },
    {
        "question": "In your own words: what are timers?",
        "explanation": "The timer functions within Node.js implement a similar API as the timers API provided by Web Browsers but use a different internal implementation that is built around the Node.js Event Loop. Because the timer functions are globals, there is no need to call `require('node:timers')` to use the API.",
        "passages": [
            "The `timer` module exposes a global API for scheduling functions to be called at some future period of time. Because the timer functions are globals, there is no need to call `require('node:timers')` to use the API. The timer functions within Node.js implement a similar API as the timers API provided by Web Browsers but use a different internal implementation that is built around the Node.js Event Loop."
        ],
        "right": [
            "they schedule functions to be called later, at some future time",
            "a global API to run a function at some point in the future",
            "global functions that schedule a function to run later, like the browser's timer API",
        ],
        "wrong": [
            "they measure how long a function took to run",
            "a module you must require before reading the system clock",
        ],
    },
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    opts = parser.parse_args(argv)
    rows = []
    for case in CASES:
        for kind in ("right", "wrong"):
            for answer in case[kind]:
                passed, feedback = grade_answer(
                    answer, case["explanation"], case["question"], case.get("passages", [])
                )
                rows.append(
                    {
                        "question": case["question"],
                        "answer": answer,
                        "kind": kind,
                        "passed": passed,
                        "feedback": feedback,
                    }
                )
    right = [r for r in rows if r["kind"] == "right"]
    wrong = [r for r in rows if r["kind"] == "wrong"]
    for row in rows:
        if row["passed"] != (row["kind"] == "right"):
            print(f"graded {'right' if row['passed'] else 'wrong'}: {row['answer']}")
    print(
        f"paraphrases passed: {sum(r['passed'] for r in right)} of {len(right)}; "
        f"wrong answers failed: {sum(not r['passed'] for r in wrong)} of {len(wrong)}"
    )
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
