"""kforge.agents."""
