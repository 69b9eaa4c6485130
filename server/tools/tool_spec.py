"""What a tool's module gives the server (its `TOOL`): the function that is the tool, its title and
description, and whether a repeated call answers the same."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arag_mcp.server.output.descriptions import searches

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordMatch
    from mcp_types import CallToolResult

    from .profiles import Profile


@dataclass(frozen=True)
class ToolSpec:
    name: str
    """Its module's name in server/tools/; the name it is offered under, unless profiles.VARIANTS renames it."""
    title: str
    function: Callable[..., CallToolResult]
    """The tool: its signature (less its Context) is the input schema, its return annotation the output schema."""
    description: str | Callable[[Profile, KeywordMatch], str]
    """What the model reads of it; a function where it depends on the profile's other tools, on
    whether its searches send whole chunks, or on what a keyword match is."""
    searches: bool = False
    """It searches the index: its description starts with what the index holds."""
    idempotent: bool = True
    """A repeated call answers the same where searches send snippets; where they send whole chunks
    (the profile's full_text), no call does, its repeat saying "read before"."""

    def described(self, profile: Profile, keyword_match: KeywordMatch = "word", collection: str = "") -> str:
        """Its description in `profile`; a search's starts with what it searches (`collection`), so
        that a host running several servers can tell their tools apart."""
        text = self.description if isinstance(self.description, str) else self.description(profile, keyword_match)
        return f"{searches(collection)}\n\n{text}" if collection and self.searches else text

    def idempotent_in(self, profile: Profile) -> bool:
        return self.idempotent and not profile.full_text
