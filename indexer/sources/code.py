"""Source code and configuration files, chunked by their syntax.

A file is parsed with its language's tree-sitter grammar (the grammar packages the tree-sitter
project publishes on PyPI, each a small compiled wheel: nothing is downloaded at run time). Each
definition (a function, class, method, type, a TOML table, a top-level key of a YAML or JSON file)
starts a section named by its qualified name, ``module.Class.method``, where the module is the file
stem: results and scopes name it, and chunks end before a definition once half full
(rows.major_section_starts). INI and SQL files, which have no grammar here, take their sections
from `[section]` lines and `CREATE ...` statements.

The text is the file as written, so chunk_read shows its lines as they are. A sentence of code is
a run of lines: a paragraph (lines up to a blank line), cut where a definition starts and kept to
LINES_PER_SENTENCE lines, so that what is embedded is a few statements, not a whole file. Files
that are minified or generated (very long lines, a generated-file marker in their first lines) are
skipped with one line: their text is not what a developer reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import regex

from .document import Document, FileInput, Skip, SkippedFile

LINES_PER_SENTENCE = 12
"""The most lines of code embedded as one sentence."""
LONGEST_LINE = 1000
"""A line longer than this (characters) in a code file marks it as minified or generated data."""
GENERATED_MARKERS = regex.compile(
    r"@generated|DO NOT EDIT|auto-?generated (?:by|file|code)|Code generated .* DO NOT EDIT", regex.I
)
"""The markers tools write at the top of files they generate (Go's "Code generated ... DO NOT
EDIT.", Facebook's @generated, protoc's "DO NOT EDIT")."""
MARKER_LINES = 5
"""A generated-file marker counts in the first this many lines."""


@dataclass(frozen=True)
class Grammar:
    """A language's grammar (its PyPI module and the function giving its language) and the node
    types that define something, each with where its name is."""

    module: str
    definitions: dict[str, str]
    """node type -> the field holding its name ("" where the node's own text up to its body names it)."""
    function: str = "language"


_C_NAMES = {"function_definition": "declarator", "struct_specifier": "name", "enum_specifier": "name"}
_JS = {
    "function_declaration": "name",
    "generator_function_declaration": "name",
    "class_declaration": "name",
    "method_definition": "name",
    "variable_declarator": "name",
}
_TS = {
    **_JS,
    "abstract_class_declaration": "name",
    "interface_declaration": "name",
    "type_alias_declaration": "name",
    "enum_declaration": "name",
    "internal_module": "name",
}
GRAMMARS: dict[str, Grammar] = {
    ".py": Grammar("tree_sitter_python", {"function_definition": "name", "class_definition": "name"}),
    ".pyi": Grammar("tree_sitter_python", {"function_definition": "name", "class_definition": "name"}),
    ".js": Grammar("tree_sitter_javascript", _JS),
    ".mjs": Grammar("tree_sitter_javascript", _JS),
    ".cjs": Grammar("tree_sitter_javascript", _JS),
    ".jsx": Grammar("tree_sitter_javascript", _JS),
    ".ts": Grammar("tree_sitter_typescript", _TS, "language_typescript"),
    ".tsx": Grammar("tree_sitter_typescript", _TS, "language_tsx"),
    ".go": Grammar(
        "tree_sitter_go", {"function_declaration": "name", "method_declaration": "name", "type_spec": "name"}
    ),
    ".rs": Grammar(
        "tree_sitter_rust",
        {
            "function_item": "name",
            "struct_item": "name",
            "enum_item": "name",
            "trait_item": "name",
            "impl_item": "type",
            "mod_item": "name",
            "macro_definition": "name",
        },
    ),
    ".java": Grammar(
        "tree_sitter_java",
        {
            "class_declaration": "name",
            "interface_declaration": "name",
            "enum_declaration": "name",
            "record_declaration": "name",
            "method_declaration": "name",
            "constructor_declaration": "name",
        },
    ),
    ".c": Grammar("tree_sitter_c", _C_NAMES),
    ".h": Grammar("tree_sitter_c", _C_NAMES),
    **dict.fromkeys(
        (".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"),
        Grammar(
            "tree_sitter_cpp",
            {**_C_NAMES, "class_specifier": "name", "namespace_definition": "name"},
        ),
    ),
    ".cs": Grammar(
        "tree_sitter_c_sharp",
        {
            "class_declaration": "name",
            "interface_declaration": "name",
            "struct_declaration": "name",
            "enum_declaration": "name",
            "record_declaration": "name",
            "namespace_declaration": "name",
            "method_declaration": "name",
            "constructor_declaration": "name",
        },
    ),
    ".rb": Grammar(
        "tree_sitter_ruby", {"class": "name", "module": "name", "method": "name", "singleton_method": "name"}
    ),
    ".php": Grammar(
        "tree_sitter_php",
        {
            "class_declaration": "name",
            "interface_declaration": "name",
            "trait_declaration": "name",
            "function_definition": "name",
            "method_declaration": "name",
        },
        "language_php",
    ),
    **dict.fromkeys((".sh", ".bash"), Grammar("tree_sitter_bash", {"function_definition": "name"})),
    ".toml": Grammar("tree_sitter_toml", {"table": "", "table_array_element": ""}),
    **dict.fromkeys((".yaml", ".yml"), Grammar("tree_sitter_yaml", {"block_mapping_pair": "key"})),
    ".json": Grammar("tree_sitter_json", {"pair": "key"}),
}
"""By suffix. `.json` here is a configuration file: one that holds records is read as records
(records.py) first."""
KEYED_LEVELS = {".yaml": 2, ".yml": 2, ".json": 2}
"""Formats whose definitions are keys: only keys this deep name sections (deeper keys are values)."""
_INI_SECTION = regex.compile(r"^[ \t]*\[([^\]\n]+)\][ \t]*$", regex.M)
_SQL_DEFINITION = regex.compile(
    r"^[ \t]*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|MATERIALIZED\s+)?"
    r"(?:TABLE|VIEW|FUNCTION|PROCEDURE|INDEX|TRIGGER|TYPE|SEQUENCE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"([\w.\"`\[\]]+)",
    regex.M | regex.I,
)
LINE_SECTIONS: dict[str, regex.Pattern] = {
    ".ini": _INI_SECTION,
    ".cfg": _INI_SECTION,
    ".sql": _SQL_DEFINITION,
}
"""Formats without a grammar here, whose sections a line names."""
CODE_SUFFIXES = frozenset(GRAMMARS) | frozenset(LINE_SECTIONS)
LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "packages.lock.json",
    }
)
"""Files a package manager writes to pin versions: thousands of hashes, nothing a developer asks about."""

WRAPPERS = frozenset({"decorated_definition", "export_statement"})
"""Nodes around a definition that belong to it: a definition begins where its decorators or its
`export` do."""
PACKAGE_FILES = frozenset({"__init__", "index", "mod"})
"""File stems that stand for their folder: Python's `__init__.py`, Node's `index.js`, Rust's `mod.rs`."""
Definition = tuple[int, tuple[str, ...]]
"""(character offset where a definition begins, its qualified name's parts)."""


def read_code(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    """A source or configuration file as one document, its definitions as sections."""
    if input.name in LOCKFILES:
        raise Skip("lockfile (versions pinned by a package manager)")
    text = input.text()
    if not text.strip():
        return []
    _check_handwritten(text)
    module = _module_name(input)
    definitions = _definitions(input.suffix, text)
    headings = tuple((offset, (".".join((module, *names)),)) for offset, names in definitions)
    sentences = tuple(code_sentences(text, [offset for offset, _ in definitions]))
    return [
        Document(input.file, input.name, input.source, text, path=input.file, headings=headings, sentences=sentences)
    ]


def _module_name(input: FileInput) -> str:
    """The module part of qualified names: the file's stem, or for a package's `__init__` (or an
    `index.js`, `mod.rs`) the folder's name, which is what code that imports it calls it."""
    if input.stem in PACKAGE_FILES and input.path.parent.name:
        return input.path.parent.name
    return input.stem


def _check_handwritten(text: str) -> None:
    """Skip a minified or generated file: its lines are not what a developer reads or asks about."""
    longest = max(map(len, text.split("\n")))
    if longest > LONGEST_LINE:
        raise Skip(f"minified or data (a line of {longest:,} characters); it is not read as code")
    head = "\n".join(text.split("\n", MARKER_LINES)[:MARKER_LINES])
    marker = GENERATED_MARKERS.search(head)
    if marker:
        raise Skip(f"generated (its first lines say {marker.group()!r})")


def _definitions(suffix: str, text: str) -> list[Definition]:
    if suffix in LINE_SECTIONS:
        return [(found.start(), (found.group(1).strip(),)) for found in LINE_SECTIONS[suffix].finditer(text)]
    parser = _parser(suffix)
    if parser is None:
        return []
    raw = text.encode("utf-8")
    tree = parser.parse(raw)
    char_at = _char_offsets(raw, text)
    grammar = GRAMMARS[suffix]
    deepest = KEYED_LEVELS.get(suffix)
    found: list[Definition] = []
    for node, names in _walk(tree.root_node, grammar, raw, deepest):
        start = node.start_byte
        parent = node.parent
        if parent is not None and parent.type in WRAPPERS:
            start = parent.start_byte
        found.append((char_at(start), names))
    found.sort(key=lambda definition: definition[0])
    return found


def _walk(root, grammar: Grammar, raw: bytes, deepest: int | None) -> Iterator[tuple[object, tuple[str, ...]]]:  # noqa: ANN001 - tree_sitter.Node
    """Each definition node with its qualified name's parts, outermost first, without recursion;
    none deeper than `deepest` names (and no node below them is visited)."""
    waiting = [(root, ())]
    while waiting:
        node, names = waiting.pop()
        own = names
        if node.type in grammar.definitions:
            name = _name(node, grammar.definitions[node.type], raw)
            if name:
                own = (*names, name)
                yield node, own
                if deepest is not None and len(own) >= deepest:
                    continue
        waiting.extend((child, own) for child in reversed(node.named_children))


def _name(node, field: str, raw: bytes) -> str:  # noqa: ANN001 - tree_sitter.Node
    """A definition's name: its name field's identifier (a C declarator's innermost), else, for a
    TOML table, the text between its brackets."""
    if not field:
        header = raw[node.start_byte : node.end_byte].split(b"\n", 1)[0]
        return header.decode("utf-8", "replace").strip().strip("[]").strip()
    named = node.child_by_field_name(field)
    while named is not None and named.type not in ("identifier", "field_identifier", "type_identifier"):
        inner = named.child_by_field_name("declarator") or named.child_by_field_name("name")
        if inner is None:
            break
        named = inner
    if named is None:
        return ""
    value = raw[named.start_byte : named.end_byte].decode("utf-8", "replace").strip()
    if node.type == "variable_declarator":
        kind = node.child_by_field_name("value")
        if kind is None or kind.type not in ("arrow_function", "function_expression", "function", "class"):
            return ""
    return value.strip("\"'") if len(value) <= 200 else ""


def _char_offsets(raw: bytes, text: str) -> Callable[[int], int]:
    """The character offset of a byte offset of `text` encoded as UTF-8 (tree-sitter counts bytes)."""
    if len(raw) == len(text):
        return lambda byte: byte
    lead = (np.frombuffer(raw, np.uint8) & 0xC0) != 0x80
    before = np.concatenate([[0], np.cumsum(lead)])
    return lambda byte: int(before[byte])


@lru_cache(maxsize=None)
def _parser(suffix: str):  # noqa: ANN202 - tree_sitter.Parser, or None where its grammar is not installed
    grammar = GRAMMARS[suffix]
    try:
        import tree_sitter

        module = importlib.import_module(grammar.module)
        return tree_sitter.Parser(tree_sitter.Language(getattr(module, grammar.function)()))
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def code_sentences(text: str, definition_starts: list[int]) -> Iterator[tuple[int, int]]:
    """Runs of lines: paragraphs of code, cut where a definition begins and after
    LINES_PER_SENTENCE lines, each stripped of surrounding whitespace."""
    starts = iter(sorted(definition_starts))
    next_start = next(starts, None)
    run: list[tuple[int, int]] = []
    position = 0
    for line in text.split("\n"):
        end = position + len(line)
        blank = not line.strip()
        begins = False
        while next_start is not None and next_start <= end:
            begins = begins or next_start >= position
            next_start = next(starts, None)
        if run and (blank or begins or len(run) >= LINES_PER_SENTENCE):
            yield _stripped(text, run[0][0], run[-1][1])
            run = []
        if not blank:
            run.append((position, end))
        position = end + 1
    if run:
        yield _stripped(text, run[0][0], run[-1][1])


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
