"""Options shared by the MkDocs plugin and the `toolcatalog` command.

The plugin's typed `Config` (in `plugin.py`) documents each option for MkDocs
users and is converted into this plain dataclass, so the core never imports
MkDocs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .frontmatter import DEFAULT_MAX_BYTES


@dataclass
class Options:
    paths: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_manifest_bytes: int = DEFAULT_MAX_BYTES
    page_dir: str = "tools"
    catalog_file: str = "catalog.json"
    nav_title: str = "Tool catalog"
    nav_tools: bool = True
