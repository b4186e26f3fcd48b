"""What one sandboxed run sees of the workspace: least privilege unless widened openly.

By default (`sandbox_workspace: tool`) a run sees the folder it runs in (a speccify tool's
folder, a CLI or MCP driver's folder, a smart tool's distribution root) and the folders its runner
names besides (an AIP-14 tool's own folder, a driver's `sandbox.fs.read` folders), read-only, and
nothing else of the repository: a `.env` a CI step wrote beside mkdocs.yml is not there. The option
widens the view, and the widening is part of the sandbox profile every page and the catalog show:
`all` shows the whole workspace (without `.git`, as always), a list names more folders of it.

Each folder is taken with its links resolved and kept only while it still lies inside the
workspace or a searched folder (`paths: [../x]`): a link in the repository cannot point the view at
the host. Searched folders outside the workspace are never shown whole, only the run's own folders
inside them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

TOOL = "tool"  # the run's own folders only (the default)
ALL = "all"  # the whole workspace


@dataclass
class View:
    """The workspace folders one run sees (real paths, outer first) and what was refused."""

    folders: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # asked for, but they lead out of the workspace


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def inside(path: str, workspace: str, roots: list[str]) -> bool:
    """Whether the real path `path` lies in the workspace or one of the searched folders (where it
    must not be a guarded host folder: `paths` comes from the config, which a commit can change)."""
    if _below(path, workspace):
        return True
    return any(_below(path, base) for base in roots) and not guarded(path)


def guarded(path: str) -> bool:
    """Host folders no run sees whatever the config names: the home folder and any folder holding
    it, the home folder's dot folders (`~/.ssh`, `~/.cache`, where the results key lives), and the
    user cache folder `XDG_CACHE_HOME` names."""
    home = os.path.realpath(os.path.expanduser("~"))
    if home and home != "/":
        if _below(home, path):  # the home folder, or a folder holding it
            return True
        if _below(path, home) and os.path.relpath(path, home).split(os.sep)[0].startswith("."):
            return True
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(cache):
        real = os.path.realpath(cache)
        return _below(path, real) or _below(real, path)
    return False


def workspace_view(setting: str, extra: tuple[str, ...], workspace: str, roots: list[str], cwd: str,
                   reads: list[str]) -> View:
    """The view of one run. `setting`: `tool` or `all`; `extra`: folders relative to the workspace
    (the list form of the option); `workspace` and `roots`: real paths; `cwd`: where the run starts;
    `reads`: the runner's other folders (absolute)."""
    view = View()
    wanted = [cwd, *reads, *(os.path.join(workspace, rel) for rel in extra)]
    if setting == ALL:
        wanted.insert(0, workspace)
    chosen: list[str] = []
    for path in wanted:
        real = os.path.realpath(path)
        if not os.path.exists(real) or not inside(real, workspace, roots):
            if path not in view.refused and os.path.lexists(path):
                view.refused.append(path)
            continue
        if real not in chosen:
            chosen.append(real)
    chosen.sort(key=len)
    view.folders = [f for i, f in enumerate(chosen) if not any(_below(f, g) for g in chosen[:i])]
    return view


def describe(setting: str, extra: tuple[str, ...]) -> str:
    """The view in words, for the sandbox profile."""
    if setting == ALL:
        return "the whole workspace read-only (`sandbox_workspace: all`) without .git"
    more = f" and {', '.join(extra)} (`sandbox_workspace`)" if extra else ""
    return f"of the workspace only the tool's own folders{more}, read-only"
