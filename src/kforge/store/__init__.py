"""kforge.store."""
