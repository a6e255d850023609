"""kforge.rag."""
