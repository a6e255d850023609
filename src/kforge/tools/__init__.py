"""kforge.tools."""
