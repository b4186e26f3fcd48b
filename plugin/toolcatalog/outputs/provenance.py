"""Where each manifest came from, and what built the catalog.

- Per tool, `provenance`: the repository (MkDocs' `repo_url`), the commit checked out when the
  catalog was built (read from `.git`, see `checkout`; null outside a git checkout, never
  invented) and the manifest's path: relative to the checkout's top folder when the build ran in
  one (so `repository` + `commit` + `path` name the file), otherwise relative to the workspace.
  A manifest outside the checkout has no repository or commit.
- Once per catalog, `runner`: the package version, the Python and the platform that built it and
  ran its examples. Read without starting a process (`platform.platform()` and
  `platform.processor()` run `uname -p`), so a build starts none for it.
"""

from __future__ import annotations

import os
import platform
import posixpath
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..checkout import Checkout, find
from .site import Site


@dataclass(frozen=True)
class Origin:
    """The facts shared by every manifest of one workspace."""

    root: Path  # the workspace
    repository: str | None = None
    checkout: Checkout | None = None

    @classmethod
    def of(cls, root: Path, site: Site) -> "Origin":
        return cls(Path(os.path.abspath(root)), site.repo_url, find(root))

    def of_manifest(self, source: str) -> dict[str, Any]:
        """`{repository, commit, path}` for a manifest at `source` (relative to the workspace)."""
        if self.checkout is not None:
            full = os.path.normpath(os.path.join(self.root, *source.split("/")))
            top = os.path.normpath(self.checkout.top)
            try:
                inside = os.path.commonpath([full, top]) == top
            except ValueError:  # another drive on Windows
                inside = False
            if inside:
                path = posixpath.join(*Path(os.path.relpath(full, top)).parts)
                return {"repository": self.repository, "commit": self.checkout.commit, "path": path}
            return {"repository": None, "commit": None, "path": source}
        return {"repository": self.repository, "commit": None, "path": source}


def runner() -> dict[str, str]:
    """`{toolcatalog, python, platform}`, e.g. `0.1.0`, `CPython 3.11.2`, `Linux x86_64`."""
    python = f"{platform.python_implementation()} {platform.python_version()}"
    uname = getattr(os, "uname", None)
    if uname is not None:
        info = uname()
        system, machine = info.sysname, info.machine
    else:  # Windows: platform.system()/machine() may run `ver`; the environment says enough
        system, machine = {"win32": "Windows", "cygwin": "Cygwin"}.get(sys.platform, sys.platform), os.environ.get("PROCESSOR_ARCHITECTURE", "")
    return {"toolcatalog": __version__, "python": python, "platform": f"{system} {machine}".strip()}
