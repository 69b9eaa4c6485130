"""The MCP tools, a module each, and what they share: argument types, checks, results, errors, and the profiles that choose among them."""
