"""kforge.prompts."""
