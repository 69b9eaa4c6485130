"""MCP server exposing the A-RAG retrieval tools over an index."""
