"""The parts ``KnowledgeBase`` delegates to, one job each: opening components, the state as last read,
taking documents in, building, querying, removing documents, and maintenance (delete, compact)."""
