"""Small files that inflate to gigabytes: what the readers must refuse before inflating them."""

from __future__ import annotations


def yaml_alias_bomb(levels: int = 9, references: int = 9) -> str:
    """Markdown whose front matter is a "billion laughs": each anchor lists the previous one
    `references` times, so `levels` levels name references**levels strings."""
    lines = ["---", f"l0: &l0 [{', '.join(['lol'] * references)}]"]
    lines += [f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * references)}]" for level in range(1, levels)]
    return "\n".join([*lines, "---", "# Laughs", "", "A note about laughter.", ""])
