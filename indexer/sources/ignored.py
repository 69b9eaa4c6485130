"""What a repository leaves out of an index besides the user's own patterns: the paths its
`.gitignore` files name, and vendored, build and virtual-environment folders.

A folder read as a source respects each `.gitignore` from the source's root down, as git does:
patterns are relative to the folder holding the file, a deeper file's patterns (negations
included) decide before a shallower one's. Vendored folders (`VENDORED_FOLDERS`), build folders
at the top (`BUILD_FOLDERS`) and any folder holding a `pyvenv.cfg` hold other projects' code or
what a build made from this one. Each path left out here is told with one line, the first path of
an ignored folder standing for all inside it; the source's root itself is never left out, so a
build folder given as a source is read.
"""

from __future__ import annotations

import os
from functools import lru_cache

import pathspec

from .document import LEFT_OUT

GITIGNORE = ".gitignore"
VENDORED_FOLDERS = frozenset({"vendor", "vendored", "_vendor", "third_party", "bower_components"})
"""Folder names that hold other projects' code, wherever they are."""
BUILD_FOLDERS = frozenset({"build", "dist", "target"})
"""Folder names that hold what a build made, at the top of the folder added (deeper down, `build`
is as often a package of the project's own code: `pip/_internal/operations/build`)."""
GITIGNORED = f"{LEFT_OUT}ignored by .gitignore; pass --no-gitignore to read it"
Chain = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
"""The `.gitignore` specs in force in a folder, shallowest first, each with its folder."""


class RepositoryIgnores:
    """The rules of one source root, for the paths of a walk beneath it."""

    def __init__(self, root: str, gitignore: bool = True) -> None:
        self.root = root.rstrip("/")
        self.gitignore = gitignore
        self._chains: dict[str, Chain] = {}

    def reason(self, path: str, folder: bool) -> str | None:
        """Why `path` (a file or folder under the root, POSIX) is left out, or None."""
        if folder and path != self.root:
            parent, name = path.rsplit("/", 1)
            if name in VENDORED_FOLDERS:
                return f"{LEFT_OUT}a vendored folder; give it as a source to read it"
            if name in BUILD_FOLDERS and parent == self.root:
                return f"{LEFT_OUT}a build folder; give it as a source to read it"
            if os.path.isfile(f"{path}/pyvenv.cfg"):
                return f"{LEFT_OUT}a virtual environment; give it as a source to read it"
        if not self.gitignore or path == self.root:
            return None
        parent = path.rsplit("/", 1)[0]
        for base, spec in reversed(self._chain(parent)):
            relative = path[len(base) + 1 :] + ("/" if folder else "")
            decided = spec.check_file(relative).include
            if decided is not None:
                return GITIGNORED if decided else None
        return None

    def _chain(self, folder: str) -> Chain:
        """The specs in force in `folder`: its parent's, then its own `.gitignore`'s."""
        if folder in self._chains:
            return self._chains[folder]
        inherited: Chain = () if folder == self.root or "/" not in folder else self._chain(folder.rsplit("/", 1)[0])
        own = _spec(f"{folder}/{GITIGNORE}")
        chain = (*inherited, (folder, own)) if own is not None else inherited
        self._chains[folder] = chain
        return chain


def _spec(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=1024)
def _parsed(path: str, mtime_ns: int, size: int) -> pathspec.GitIgnoreSpec | None:
    """A `.gitignore` file's spec, read again only when it changes (a watcher asks at every batch)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
    except OSError:
        return None
