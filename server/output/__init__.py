"""What the host model reads: tool results as structured content and text, tool descriptions and prompts."""
