"""What the host model reads that several tools share: result parts as structured content and text, phrasing, instructions and prompts."""
