"""An A-RAG agent and its evaluation, driving an arag-mcp server through MCP with an OpenAI-compatible model."""
