#!/usr/bin/env python3
"""What an agent does with a published tool catalog, using only documented fields and the standard library.

    python3 pick_tools.py SITE_DIR

1. `toolcatalog verify SITE_DIR` recomputes every digest the catalog states (catalog.json, the
   per-tool files, mcp-tools.json, llms.txt); anything but exit code 0 means the files do not
   agree, so nothing is used.
2. catalog.json is read, and every tool the build could not vouch for is dropped: an invalid
   manifest (`valid`), a verdict other than `passed` (`verification.status`), or any failed
   example or check (`verification.examples.failed`, `verification.checks.failed`).
3. The tools left are printed, one per line: id, entry digest, and where their MCP definition
   and evidence are (the MCP tool name is in mcp-tools.json, whose tools name their catalog
   entry by `_meta["toolcatalog/digest"]`).

No MkDocs and no mkdocs-toolcatalog import: only the `toolcatalog` command (from PATH, or
`$TOOLCATALOG`) checks the digests. Exit codes: 0 fine, 1 verification failed, 2 bad usage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def usable(tool: dict) -> bool:
    verification = tool["verification"]
    return (
        tool["valid"]
        and verification["status"] == "passed"
        and verification["examples"]["failed"] == 0
        and verification["checks"]["failed"] == 0
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    site = Path(argv[0])
    command = os.environ.get("TOOLCATALOG") or shutil.which("toolcatalog")
    if not command:
        print("pick_tools: the `toolcatalog` command is not on PATH", file=sys.stderr)
        return 2
    check = subprocess.run([command, "verify", str(site)], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    if check.returncode != 0:
        print(f"pick_tools: the catalog does not verify, nothing is used:\n{check.stdout}{check.stderr}", file=sys.stderr)
        return 1

    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    mcp_path = site / "mcp-tools.json"
    mcp_names = {}
    if mcp_path.is_file():
        for tool in json.loads(mcp_path.read_text(encoding="utf-8"))["tools"]:
            mcp_names[tool["_meta"]["toolcatalog/digest"]] = tool["name"]
    kept = [tool for tool in catalog["tools"] if usable(tool)]
    for tool in kept:
        name = mcp_names.get(tool["entry_digest"], "-")
        print(f"{tool['id']}\t{tool['entry_digest']}\tmcp:{name}\tevidence:{tool['verification']['page']}")
    dropped = len(catalog["tools"]) - len(kept)
    print(f"{len(kept)} usable, {dropped} dropped (catalog {catalog['catalog_digest']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
