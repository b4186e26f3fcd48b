"""The bubblewrap command line for one sandboxed run.

bubblewrap (`bwrap`) starts the tool in new namespaces: its own mount table (it sees only what is
bound below), its own PID namespace (no view of the build's processes; when the tool exits, or
bubblewrap is killed, every process left in the namespace is killed, `setsid` daemons included),
its own network namespace with only a loopback interface unless the run may use the network, and
no capabilities. `--die-with-parent` ends it if the build dies.

Variants (the probe picks the first that works on this machine):
- `userns`: an unprivileged user namespace, which is then closed to the tool (`--disable-userns`);
- `root`: the build runs as root where user namespaces are off; the other namespaces still apply;
- `noproc`: like `userns` without a `/proc` (containers whose own `/proc` has masked paths refuse a
  new one).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from . import layout

VARIANTS = ("userns", "root", "noproc")


def namespaces(variant: str, network: bool) -> list[str]:
    if variant == "root":
        out = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        return out if network else [*out, "--unshare-net"]
    out = ["--unshare-all", "--unshare-user", "--disable-userns"]
    return [*out, "--share-net"] if network else out


def system_binds() -> list[str]:
    """The system folders, read-only, and the `/etc` view: the same for every run of a build."""
    return list(_system_binds(layout.etc_view()))


@functools.lru_cache(maxsize=4)
def _system_binds(etc: str) -> tuple[str, ...]:
    out: list[str] = []
    for folder in layout.SYSTEM:
        if os.path.isdir(folder):
            out += ["--ro-bind", folder, folder]
    for name in layout.USR_MERGE:
        path = "/" + name
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    return (*out, "--ro-bind", etc, "/etc")


def proc_and_dev(variant: str) -> list[str]:
    out = []
    if variant != "noproc":
        # bubblewrap leaves /proc/sys writable when the caller is root: make it read-only here.
        out += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
                "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    return [*out, "--dev", "/dev"]


def probe_argv(bwrap: str, variant: str) -> list[str]:
    """A minimal start-up of /bin/true with the variant's namespaces: does it work here?"""
    return [bwrap, *namespaces(variant, False), "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            *system_binds(), *proc_and_dev(variant), "--tmpfs", "/tmp", "--remount-ro", "/", "--", "/bin/true"]


def argv(
    bwrap: str,
    variant: str,
    command: list[str],
    *,
    cwd: str,
    workspace: str,
    host: Path,
    copied: bool,
    visible: list[str],
    hidden: list[str],
    network: bool,
    masked: list[str] | None = None,
) -> list[str]:
    """The full command line. `host` is the run's host-side folder: `tmp` (becomes /tmp),
    `scratch` (becomes /scratch), `work` (the copy of `cwd`, when `copied`) and `empty` (an empty
    folder used to hide folders). `masked`: the workspace, when the run sees
    only parts of it: an empty read-only folder there holds those parts, so a write beside them is
    refused wherever the workspace lies (below /tmp too)."""
    out = [bwrap, *namespaces(variant, network), "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    out += system_binds()
    out += proc_and_dev(variant)
    out += ["--bind", str(host / "tmp"), "/tmp", "--bind", str(host / "scratch"), layout.SCRATCH]
    # `visible`: the program folders and the run's view of the workspace (view.py), never the
    # workspace as such. After /tmp: a program installed below /tmp stays visible.
    for base in masked or []:
        out += ["--tmpfs", base]
    for folder in sorted(visible, key=len):
        if not (copied and folder == cwd):  # the copy is bound there next: one mount, not two
            out += ["--ro-bind", folder, folder]
    if copied:
        out += ["--bind", str(host / "work"), cwd]
    for path in [os.path.join(workspace, ".git"), *hidden]:
        if any(_below(path, folder) for folder in [*visible, cwd]):
            out += hide(path, host)
    for base in masked or []:
        out += ["--remount-ro", base]
    out += ["--remount-ro", "/", "--chdir", cwd, "--", *command]
    return out


def hide(path: str, host: Path) -> list[str]:
    """Bind something empty over `path` (nothing when it does not exist)."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--ro-bind", str(host / "empty"), path]
    if os.path.lexists(path):
        return ["--ro-bind", os.devnull, path]
    return []


def mount_points(cwd: str, workspace: str, visible: list[str], hidden: list[str]) -> list[str]:
    """Paths bubblewrap will mount on: where they fall inside a writable folder of the run (/tmp),
    the run creates them first, so that they are not mistaken for the tool's writes."""
    return [workspace, cwd, *visible, os.path.join(workspace, ".git"), *hidden]


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
