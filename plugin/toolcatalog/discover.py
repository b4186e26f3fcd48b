"""Finding manifest files in a workspace.

With no `paths`, the whole workspace is searched for the formats' conventional
places: `.agent/tools/<name>/TOOL.md` (speccify), `.tools/**/TOOL.md` (AIP-14),
`.drivers/**/DRIVER.md` and `.tools/**/DRIVER.md` (AIP-30), `.cli/<name>/CLI.md`
(AIP-29, with its TOOL.md files below it), and
`smart-tool.json` / `SMART_TOOL.md` anywhere (smart tools). A folder named in
`paths` is searched for every manifest file name at any depth: the user said
that is where manifests live. Symlinks are followed only while they stay inside
the folder being searched, and each real folder is visited once. The walk keeps its own
stack (no recursion, so no folder chain can exhaust Python's), and stops `MAX_DEPTH`
folders below the folder searched, saying where (`folder-too-deep`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from . import formatregistry
from .model import WARNING, Diagnostic

# No manifest convention nests anywhere near this deep; a chain that does is not searched further.
MAX_DEPTH = 64

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".cache", ".tox", ".mypy_cache"})

TOOL_MD = "TOOL.md"
DRIVER_MD = "DRIVER.md"
CLI_MD = "CLI.md"  # AIP-29, itself a `kind: cli` driver; only under a `.cli/` folder (CLI.md is a common doc name)
SMART_TOOL_MD = "SMART_TOOL.md"
SMART_TOOL_JSON = "smart-tool.json"
# Every format's file names, once each, in the registry's order.
MANIFEST_NAMES = tuple(dict.fromkeys(name for fmt in formatregistry.FORMATS for name in fmt.file_names))
ANY = "any"  # a hint: the location says nothing about which of the formats written in that file name it is

# What a search looks for, as pages and logs say it (`_hint` decides it, file by file).
CONVENTIONAL_PATTERNS = tuple((fmt.patterns, fmt.finds) for fmt in formatregistry.FORMATS)
PATHS_PATTERNS = (
    (", ".join(f"**/{name}" for name in dict.fromkeys(n for fmt in formatregistry.FORMATS if fmt.anywhere for n in fmt.file_names)),
     "every format, at any depth"),
    *((fmt.patterns, fmt.finds) for fmt in formatregistry.FORMATS if not fmt.anywhere),
)


class DiscoveryError(Exception):
    """The search itself is misconfigured (a `paths` entry that does not exist)."""


@dataclass(frozen=True)
class Found:
    path: Path  # absolute, as found (not resolved through symlinks)
    name: str  # one of MANIFEST_NAMES
    hint: str  # what the location suggests: a format's id (`formatregistry`), or ANY
    search_root: Path


@dataclass
class Discovery:
    files: list[Found] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # what was searched, relative to the workspace
    patterns: tuple[tuple[str, str], ...] = ()  # (glob, what it finds)
    skipped: list[str] = field(default_factory=list)  # folders left out (`skip`), relative to the workspace


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root` with `/` separators (`../` when outside it: never absolute,
    so catalogs stay the same on every machine)."""
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:  # different drives on Windows: nothing relative exists
        return path.as_posix()


def _is_inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
        return True
    except ValueError:
        return False


def discover(
    workspace: Path,
    paths: list[str] | None = None,
    exclude: list[str] | None = None,
    skip: list[Path] | None = None,
) -> Discovery:
    """Every manifest file under the workspace (or under `paths`), sorted by path."""
    workspace = Path(os.path.abspath(workspace))
    spec = pathspec.GitIgnoreSpec.from_lines(exclude or [])
    skip_real = {os.path.realpath(p) for p in (skip or [])}
    result = Discovery()
    result.skipped = [relative(Path(p), workspace) for p in (skip or []) if _is_inside(Path(p), workspace)]
    if paths:
        roots = []
        for entry in paths:
            target = Path(os.path.abspath(workspace / entry))
            if not target.exists():
                raise DiscoveryError(f"toolcatalog `paths` entry {entry!r} does not exist ({target})")
            roots.append(target)
        result.roots = [relative(target, workspace) for target in roots]
        result.patterns = PATHS_PATTERNS
        for target in roots:
            if target.is_file():
                if target.name in MANIFEST_NAMES:
                    result.files.append(Found(target, target.name, ANY, target.parent))
                else:
                    raise DiscoveryError(
                        f"toolcatalog `paths` entry {str(target)!r} is a file but not a manifest "
                        f"({', '.join(MANIFEST_NAMES)})"
                    )
            else:
                _walk(target, workspace, spec, skip_real, result, conventional=False)
    else:
        result.roots, result.patterns = ["."], CONVENTIONAL_PATTERNS
        _walk(workspace, workspace, spec, skip_real, result, conventional=True)
    unique: dict[str, Found] = {}
    for found in result.files:
        unique.setdefault(os.path.realpath(found.path), found)
    result.files = sorted(unique.values(), key=lambda f: relative(f.path, workspace))
    return result


def _entries(folder: str) -> tuple[list[str], list[str]]:
    """A folder's sub-folder names (links to folders included, as `os.walk(followlinks=True)`
    counts them) and other entry names, sorted; nothing when it cannot be listed."""
    dirs: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (dirs if is_dir else files).append(entry.name)
    except OSError:
        pass
    return sorted(dirs), sorted(files)


def _walk(root: Path, workspace: Path, spec: pathspec.PathSpec[Any], skip_real: set[str], result: Discovery, conventional: bool) -> None:
    """Every manifest below `root`, folder by folder in the order `os.walk` would give them, from
    an explicit stack."""
    real_root = os.path.realpath(root)
    visited: set[str] = set()
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        current, depth = stack.pop()
        real_current = os.path.realpath(current)
        if real_current in visited:
            continue
        visited.add(real_current)
        dirs, files = _entries(current)
        keep = []
        for name in dirs:
            full = Path(current, name)
            if name in SKIP_DIRS or os.path.realpath(full) in skip_real:
                continue
            if os.path.islink(full) and not _is_inside(Path(os.path.realpath(full)), Path(real_root)):
                result.diagnostics.append(
                    Diagnostic(WARNING, "symlink leaves the searched folder; not followed", relative(full, workspace), None, "symlink-outside")
                )
                continue
            if spec.match_file(relative(full, workspace) + "/"):
                continue
            keep.append(name)
        if keep and depth >= MAX_DEPTH:
            result.diagnostics.append(Diagnostic(
                WARNING, f"folders nest more than {MAX_DEPTH} levels below the folder searched; the {len(keep)} "
                "folder(s) in here were not searched", relative(Path(current), workspace), None, "folder-too-deep"))
            keep = []
        stack.extend((os.path.join(current, name), depth + 1) for name in reversed(keep))
        for name in files:
            if name not in MANIFEST_NAMES:
                continue
            full = Path(current, name)
            rel = relative(full, workspace)
            if spec.match_file(rel):
                continue
            if os.path.islink(full) and not _is_inside(Path(os.path.realpath(full)), Path(real_root)):
                result.diagnostics.append(
                    Diagnostic(WARNING, "symlink leaves the searched folder; not followed", rel, None, "symlink-outside")
                )
                continue
            hint = _hint(full, root, conventional)
            if hint is not None:
                result.files.append(Found(full, name, hint, root))


def _hint(path: Path, root: Path, conventional: bool) -> str | None:
    """What the location says about the format (the first format that places a file of this name
    there, `Format.placed`); None when a conventional search ignores it."""
    folders = path.relative_to(root).parts[:-1]
    candidates = formatregistry.for_file(path.name)
    for fmt in candidates:
        if fmt.placed(folders):
            return fmt.id
    loose = [fmt for fmt in candidates if fmt.anywhere]
    if conventional or not loose:
        return None
    return loose[0].id if len(loose) == 1 else ANY
