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
    nav_tools: bool | int = 100
    # Running examples and checks (conformance)
    run_examples: bool = True
    timeout: float = 30.0  # seconds per process; a tool's smaller timeout_ms wins
    jobs: int = 0  # parallel processes; 0 = number of CPUs
    cache: bool = True
    cache_dir: str = ".cache/plugin/toolcatalog"  # relative to the workspace (mkdocs.yml's folder)
    allow_mutating: list[str] = field(default_factory=list)  # globs of tool ids allowed to run despite mutates/approval
    env: list[str] = field(default_factory=list)  # environment variables passed to tools besides the allowlist
    max_output_bytes: int = 1024 * 1024  # stdout cap per process
    fail_on: list[str] = field(default_factory=list)  # tool statuses that fail the build
    # Outputs for agents (besides catalog_file); "" or None turns one off (see exports.py)
    tool_json_dir: str | None = "tools"  # one <slug>.json per tool; "." = the site root
    mcp_file: str | None = "mcp-tools.json"  # MCP tools/list result
    llms_file: str | None = "llms.txt"  # llms.txt index of the tools
