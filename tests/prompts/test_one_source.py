"""The template library is the one source of prompt text: no module outside ``kforge.prompts``
writes an instruction for a model inline."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kforge"
LIBRARY = SRC / "prompts"
LONGEST_INLINE = 60
"""Characters of literal text a model call may carry inline (a label such as ``Question:``)."""
PROMPT_NAME = re.compile(r"(PROMPTS?|SYSTEM|INSTRUCTIONS)$")
MESSAGE_BUILDERS = {"system", "user", "assistant"}


def _literal_chars(node: ast.AST) -> int:
    """The longest run of literal text written in ``node`` (a string or an f-string)."""
    longest = 0
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            longest = max(longest, len(inner.value))
        if isinstance(inner, ast.JoinedStr):
            literal = sum(
                len(part.value)
                for part in inner.values
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
            )
            longest = max(longest, literal)
    return longest


def _is_message_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id == "Message" and func.attr in MESSAGE_BUILDERS
    return isinstance(func, ast.Name) and func.id == "Message"


def _holds_text(node: ast.AST) -> bool:
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return isinstance(node, ast.JoinedStr) or isinstance(node.value, str)
    if isinstance(node, ast.Dict):
        return any(_holds_text(v) for v in node.values)
    return isinstance(node, ast.BinOp) and (_holds_text(node.left) or _holds_text(node.right))


def inline_prompts(path: Path, where: str) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_message_call(node):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if _literal_chars(arg) > LONGEST_INLINE:
                    yield f"{where}:{arg.lineno}: a model message written inline"
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "system" and _literal_chars(keyword.value) > LONGEST_INLINE:
                    yield f"{where}:{keyword.value.lineno}: a system prompt written inline"
    for statement in tree.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign) and statement.value is not None
            else []
        )
        value = getattr(statement, "value", None)
        for target in targets:
            if (
                isinstance(target, ast.Name)
                and PROMPT_NAME.search(target.id)
                and value is not None
                and _holds_text(value)
            ):
                yield f"{where}:{statement.lineno}: prompt {target.id} written inline"


def test_no_module_outside_the_library_writes_a_prompt_inline() -> None:
    found = [
        problem
        for path in sorted(SRC.rglob("*.py"))
        if LIBRARY not in path.parents
        for problem in inline_prompts(path, str(path.relative_to(SRC.parent)))
    ]
    assert not found, "move these prompts into kforge/prompts/templates:\n" + "\n".join(found)


def test_the_rule_catches_inline_prompts(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(
        'GUIDE_PROMPT = "Be brief."\n'
        "def ask(q):\n"
        '    return [Message.system("You are a careful assistant. " "Answer only from the '
        'sources, and cite them."), Message.user(f"Question: {q}")]\n'
        'write(q, system=f"Answer {q} using only the numbered passages, citing each of them.")\n',
        encoding="utf-8",
    )
    assert sorted(inline_prompts(path, "sample.py")) == [
        "sample.py:1: prompt GUIDE_PROMPT written inline",
        "sample.py:3: a model message written inline",
        "sample.py:4: a system prompt written inline",
    ]
