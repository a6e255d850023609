"""kforge.engine."""
