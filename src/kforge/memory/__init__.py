"""kforge.memory."""
