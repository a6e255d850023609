"""kforge.llm."""
