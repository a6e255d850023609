"""A program no known shape makes: a capable model writes it, and kforge checks it against an
acceptance check derived from the goal (a sample input and the lines the program must print for
it), never against the check of a shape that does something else."""

from __future__ import annotations

import keyword
import re
import sys
from typing import Any

from kforge.agents.build.prompts import GoalProgram
from kforge.agents.build.shapes import Shape, ShapeStep, load_shape, shape_names
from kforge.agents.decisions import decide
from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.textcheck import key_terms

__all__ = ["GOAL_SHAPE", "cannot_build", "goal_shape", "plan_program", "program_problem"]

GOAL_SHAPE = "from_goal"
_MODULE = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_SAMPLE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,59}")
_RESERVED = {"README.md", "BUILD_LOG.md"}
_RUN_CHECK = """
import runpy, sys
sys.path.insert(0, ".")
sys.argv = ["{check}"]
_ = runpy.run_path("{check}", run_name="__main__")
"""
_CHECK = '''"""Acceptance check derived from the goal: {goal!r}.

Runs `{run}` and requires each expected line in what it prints."""

import contextlib
import io
import runpy
import sys

ARGUMENTS = {arguments!r}
EXPECTED = {expected!r}

printed = io.StringIO()
sys.argv = [{program!r}, *ARGUMENTS]
with contextlib.redirect_stdout(printed):
    try:
        runpy.run_path({program!r}, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise AssertionError(f"{program} exited with {{stop.code!r}}") from None
lines = [line.rstrip() for line in printed.getvalue().splitlines()]
missing = [line for line in EXPECTED if line.rstrip() not in lines]
assert not missing, f"{program} did not print {{missing!r}}; it printed {{lines[:20]!r}}"
print("all checks passed")
'''


def cannot_build(goal: str, model: str) -> str:
    """Why ``model`` (one that does not write code) refuses ``goal``, and what would work."""
    titles = [load_shape(n).title for n in shape_names()]
    known = ", ".join(f'"a {t if t[:2].isupper() else t[0].lower() + t[1:]}"' for t in titles)
    return (
        f'{model} cannot build "{goal}": it does not write code, it only makes the programs '
        f"it knows, and none of them does what the goal asks. It knows {known}; ask for one "
        "of those, or build with a capable model that writes code (--model PROVIDER:MODEL "
        "--answer generative)"
    )


async def plan_program(
    ctx: RunContext, goal: str, trigger: str | None, settings: ModelSettings
) -> dict[str, Any]:
    """The model's program for a goal no shape fits, with its acceptance check (a checked
    ``GoalProgram`` as a dict); the model may try twice, then the goal is refused."""
    problem = ""
    for _ in range(2):
        asked = [f"Goal: {goal}"]
        asked += [f"Rejected because: {trigger}"] if trigger else []
        asked += [f"Your last plan was unusable: {problem}"] if problem else []
        program = await decide(
            ctx,
            [Message.system(prompt_text("BUILD_PROGRAM")), Message.user("\n".join(asked))],
            settings,
            GoalProgram,
            "grounding.program",
        )
        problem = program_problem(program, goal) if program else "the reply was not JSON"
        if program and not problem:
            return program.model_dump()
    raise ValidationError(
        f'the model could not plan a checked program for "{goal}": {problem}; try again with '
        "the goal said more precisely, or with a more capable model"
    )


def program_problem(program: GoalProgram, goal: str) -> str:
    """What makes the model's program unusable, or "": a module or sample name that is not a
    plain name, a title that is not about the goal, or an acceptance check that is empty or
    would pass for a program that only prints its input."""
    module = program.module.strip().removesuffix(".py")
    if not _MODULE.fullmatch(module) or keyword.iskeyword(module):
        return f"the module name {program.module!r} is not a plain Python module name"
    if module in sys.stdlib_module_names or module.startswith("check_"):
        return f"the module name {module!r} would hide a module the program or its check needs"
    sample = program.sample_name.strip()
    if not _SAMPLE.fullmatch(sample) or sample in _RESERVED or sample.endswith(".py"):
        return f"the sample name {program.sample_name!r} is not a plain data file name"
    if not program.sample.strip():
        return "the sample is empty"
    if not set(key_terms(program.title)) & set(key_terms(goal)):
        return f"the title {program.title!r} does not speak of the goal"
    expected = [line.rstrip() for line in program.expected if line.strip()]
    if not expected:
        return "the acceptance check expects nothing"
    given = {line.rstrip() for line in program.sample.splitlines()}
    if all(line in given for line in expected):
        return "the expected lines are lines of the sample, so printing the sample would pass"
    return ""


def goal_shape(program: dict[str, Any], goal: str) -> Shape:
    """The plan for ``program`` (a checked ``GoalProgram``, as a dict): the sample, the module
    the model writes with kforge's check, and the README."""
    module = str(program["module"]).strip().removesuffix(".py")
    sample = str(program["sample_name"]).strip()
    arguments = [str(a) for a in program.get("arguments") or [] if str(a).strip()] or [sample]
    expected = [str(e).rstrip() for e in program["expected"] if str(e).strip()]
    source, check = f"{module}.py", f"check_{module}.py"
    run = " ".join(["python", source, *arguments])
    shown = "; ".join(repr(e) for e in expected)
    steps = (
        ShapeStep(
            id="sample",
            title="Sample input to develop and check against",
            files=(sample,),
            check=f"text = open({sample!r}, encoding='utf-8').read()\n"
            f"assert text.strip(), {sample + ' is empty'!r}\n"
            f"print(f'{sample}: {{len(text.splitlines())}} lines')\n",
            accept=f"{sample} holds the sample input",
        ),
        ShapeStep(
            id="core",
            title=f"The program {source}",
            files=(source, check),
            check=_RUN_CHECK.format(check=check).lstrip(),
            accept=f"{check} passes: `{run}` prints these lines: {shown}",
            model_writes=(source,),
            interface=f"{source} is the whole program, standard library only; run as `{run}` "
            f"it prints these lines, each exactly: {shown}; running it as a script calls "
            "main(sys.argv[1:]).",
        ),
        ShapeStep(
            id="readme",
            title="README with how to run and check the program",
            files=("README.md",),
            check=(
                "text = open('README.md', encoding='utf-8').read()\n"
                f"for needed in ({('python ' + source)!r}, {('python ' + check)!r}):\n"
                "    assert needed in text, f'README.md does not mention {needed!r}'\n"
                "print('README.md names the run and check commands')\n"
            ),
            accept="README.md names the command that runs the program and the command that "
            "checks it",
        ),
    )
    check_text = _CHECK.format(
        goal=goal, run=run, arguments=arguments, expected=expected, program=source
    )
    return Shape(
        name=GOAL_SHAPE,
        title=" ".join(str(program["title"]).split()),
        module=module,
        description=f"A program written for the goal: {goal}.",
        purpose=(),
        keywords=(),
        concepts=(),
        steps=steps,
        run=run,
        check=f"python {check}",
        check_note=f"The check runs `{run}` and requires these lines in its output: {shown}. "
        "It was derived from the goal; it is all that was checked.",
        inline=((sample, str(program["sample"])), (check, check_text)),
    )
