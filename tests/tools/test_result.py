"""A tool result as a ``tool.result`` frame records it: short (no unset fields), and read back
by its types through ``kforge.jsoncodec`` as the same result, bytes included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kforge import jsoncodec
from kforge.tools.content import ContentBlock
from kforge.tools.result import ToolResult

texts = st.text(max_size=20)
blocks = st.one_of(
    st.builds(ContentBlock.of_text, texts),
    st.builds(ContentBlock.image, st.binary(max_size=20), texts),
    st.builds(ContentBlock.audio, st.binary(max_size=20), texts),
    st.builds(
        ContentBlock.resource,
        texts,
        text=st.none() | texts,
        data=st.none() | st.binary(max_size=20),
        mime_type=st.none() | texts,
    ),
)
results = st.builds(
    ToolResult,
    content=st.lists(blocks, max_size=3).map(tuple),
    is_error=st.booleans(),
    structured_content=st.none() | st.dictionaries(texts, st.integers() | texts, max_size=3),
)


@given(results)
def test_a_recorded_result_reads_back_as_the_result(result: ToolResult) -> None:
    text = jsoncodec.dumps(result.to_dict())
    assert jsoncodec.convert(jsoncodec.loads(text), ToolResult) == result
    assert all(None not in block.values() for block in result.to_dict()["content"])


def test_a_short_result_is_recorded_in_half_the_bytes_of_every_field() -> None:
    result = ToolResult.success("2")
    short, every = (
        len(jsoncodec.dumps(form)) for form in (result.to_dict(), jsoncodec.to_builtins(result))
    )
    assert short < every / 2
