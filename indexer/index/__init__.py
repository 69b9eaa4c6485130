"""The index format and its read side: tables, ids and manifest; writing a build; opening one and reading it.

Nothing here knows how sources are read, cut or embedded (the import contracts in pyproject.toml)."""
