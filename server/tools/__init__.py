"""The MCP tools: their functions and arguments, the profiles that choose among them, and their errors."""
