#!/usr/bin/env python3
"""Pick a tool from a published catalog by its evidence, build a call from its `invoke` block, run it.

    python3 call_tool.py CATALOG_JSON WORKSPACE

1. Reads catalog.json (only documented fields, only the standard library).
2. Keeps what an agent can trust to be safe and repeatable: `claims.usable`, status `passed`,
   `claims.effects.read_only` true *and* `claims.effects.verified` (sandboxed, traced runs saw no
   writes and no network), and kind `deterministic` by the evidence: the tool's own
   `claims.kind.value`, or one capability's (`claims.kind.capabilities[].kind`) for a tool
   called per capability.
3. Builds the call from `invoke.ways` (paths are relative to WORKSPACE, the repository the catalog
   was built from): `json-stdio` sends the first example's `arguments` as one JSON object on
   stdin; `cli` fills the driver's `argv_template` from them (only a driver the build ran, `"ran":
   "ran"`: the evidence is about that one, not about a driver that could not run there); `smart-tool-cli` runs the
   deterministic capability's `smoke` call (or `<capability> --help`).
4. Runs it once, with a timeout, stdin closed unless it is the input, and prints one JSON line:
   `{"tool", "capability", "argv", "exit_code", "output"}`.

Exit codes: 0 the call ran and printed JSON; 1 no tool qualifies or the call failed; 2 bad usage.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

PLACEHOLDER = re.compile(r"^\$\{\s*input\.([A-Za-z0-9_.\-]+)\s*(?:\|\s*default\('([^']*)'\))?\s*\}$")


def trusted(tool: dict[str, Any]) -> bool:
    claims = tool["claims"]
    effects = claims["effects"]
    return bool(claims["usable"] and tool["status"] == "passed" and effects["read_only"] is True and effects["verified"])


def deterministic_capabilities(tool: dict[str, Any]) -> list[str]:
    return [c["name"] for c in tool["claims"]["kind"]["capabilities"] if c["kind"] == "deterministic"]


def fill(template: list[str], arguments: dict[str, Any]) -> list[str] | None:
    out = []
    for word in template:
        match = PLACEHOLDER.match(word)
        if not match:
            out.append(word)
        elif match.group(1) in arguments:
            out.append(str(arguments[match.group(1)]))
        elif match.group(2) is not None:
            out.append(match.group(2))
        else:
            return None
    return out


def plan(tool: dict[str, Any]) -> tuple[list[str], str, str | None, str | None] | None:
    """(argv, cwd, stdin text or None, capability) for the first way this script can call."""
    examples = [e for e in tool["invoke"]["examples"] if isinstance(e["arguments"], dict)]
    arguments = examples[0]["arguments"] if examples else None
    for way in tool["invoke"]["ways"]:
        if way["protocol"] == "smart-tool-cli":
            for capability in deterministic_capabilities(tool):
                cap = next(c for c in way["capabilities"] if c["name"] == capability)
                smoke = way.get("smoke") or []
                argv = smoke if smoke[: len(cap["argv"])] == cap["argv"] else [*cap["argv"], "--help"]
                return argv, way["cwd"], None, capability
        if tool["claims"]["kind"]["value"] != "deterministic" or arguments is None:
            continue
        if way["protocol"] == "json-stdio" and way["platform"] == sys.platform.replace("darwin", "macos"):
            return way["argv"], way["cwd"], json.dumps(arguments), None
        if way["protocol"] == "cli" and way["valid"] and way["bin"] and way.get("ran") == "ran":
            argv = fill(way["argv_template"], arguments)
            if argv is not None:
                return [way["bin"], *way["bin_args"], *argv], way["cwd"], None, None
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[0]).is_file() or not Path(argv[1]).is_dir():
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    catalog = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    workspace = Path(argv[1])
    for tool in catalog["tools"]:
        if not trusted(tool):
            continue
        call = plan(tool)
        if call is None:
            continue
        args, cwd, stdin, capability = call
        done = subprocess.run(args, cwd=workspace / cwd, input=stdin if stdin is not None else None,
                              stdin=None if stdin is not None else subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
        try:
            output = json.loads(done.stdout)
        except ValueError:
            print(f"call_tool: {tool['id']} printed no JSON (exit {done.returncode}): {done.stderr[-300:]}", file=sys.stderr)
            return 1
        print(json.dumps({"tool": tool["id"], "capability": capability, "argv": args, "exit_code": done.returncode, "output": output}))
        return 0 if done.returncode == 0 else 1
    print("call_tool: no tool is passed, observed read-only and deterministic", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
