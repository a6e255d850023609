"""kforge.runtime."""
