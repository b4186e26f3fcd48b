"""How to call a tool, as data: the `invoke` block of its catalog entry.

One object per tool, whatever its format, with `ways`: each a concrete way to call it that the
build knows from the manifest (never guessed), and `examples`: the tool's examples as ready calls
(the input to send and the output the contract promises). Paths are relative to the workspace
root, "/" separators; `cwd` is where the call must run.

- speccify (`"protocol": "json-stdio"`): per platform, the implementation file and the argv that
  launches it (speccify's rule, as the build ran it: an executable file runs as itself, by its
  `#!` line, whatever its suffix; otherwise its interpreter by file suffix); one JSON object on stdin, one JSON value on stdout; exit code 0 means success, a
  non-zero exit a failure (a documented failure still prints its JSON envelope).
- AIP-30 CLI drivers (`"protocol": "cli"`): `bin` and `bin_args`, the `implements` entry's argv
  template (`${input.x}` placeholders, `| default(...)` filters kept as written) and which input
  property each placeholder binds (`bindings`: argv index -> input path).
- AIP-30 MCP drivers (`"protocol": "mcp"`): the server's command (`server.path` + `server.args`),
  its transport and the MCP tool name to call (`metadata.mcp.tool_name`, else the tool id).
- other AIP-30 drivers (http, ...): the kind and the `implements` entry's metadata as written.
- smart tools (`"protocol": "smart-tool-cli"`): `cli_argv` from smart-tool.json, run in the
  distribution root; per capability its argv prefix (`cli_argv + [name]`), its kind (from
  `claims`) and whether it needs a model, with the requirements its manifest says it is for.

# registry: which of these a format gives is a per-format fact (move to the format registry).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import PurePosixPath
from typing import Any

from . import claims as claims_mod
from .model import MODEL_BACKED, Driver, Tool

_PLACEHOLDER = re.compile(r"\$\{\s*input\.([A-Za-z0-9_.\-]+)")
# speccify's rule (process.interpreter_for), by name: the interpreter found first on PATH.
_BY_SUFFIX = {".py": ["python3"], ".sh": ["bash"], ".bash": ["bash"], ".zsh": ["zsh"], ".js": ["node"], ".mjs": ["node"],
              ".ts": ["bun"], ".rb": ["ruby"], ".pl": ["perl"], ".ps1": ["pwsh", "-NoProfile", "-File"]}
EXIT_RULE = ("exit code 0: success, stdout is the result; non-zero: failure (when the contract documents it, "
             "stdout still holds the JSON error envelope)")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _folder(source: str) -> str:
    return posixpath.dirname(source) or "."


def _speccify(tool: Tool) -> list[dict[str, Any]]:
    ways = []
    for name in tool.implementations:
        platform, _, _ext = name.partition(".")
        suffix = PurePosixPath(name).suffix.lower()
        runs_itself = suffix not in _BY_SUFFIX or (suffix != ".ps1" and _executable(tool, name))
        argv = [f"./{name}"] if runs_itself else [*_BY_SUFFIX[suffix], name]
        ways.append({
            "protocol": "json-stdio", "platform": platform, "file": posixpath.join(_folder(tool.source), name),
            "cwd": _folder(tool.source), "argv": argv,
            "stdin": "one JSON object: the input", "stdout": "one JSON value: the output", "exit_codes": EXIT_RULE,
        })
    return ways


def _executable(tool: Tool, name: str) -> bool:
    """Whether the build runs implementation `name` as itself (process.interpreter_for's rule):
    `python3 linux.py` for an executable linux.py would run a program no build observed."""
    path = tool.dir / name
    return path.is_file() and os.access(path, os.X_OK)


def _bindings(argv: list[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for index, word in enumerate(argv):
        match = _PLACEHOLDER.search(str(word))
        if match:
            out[str(index)] = match.group(1)
    return out


def _driver(driver: Driver, tool: Tool) -> dict[str, Any]:
    entry = driver.entry_for(tool.id)
    metadata = entry.metadata if entry is not None else {}
    f = driver.fields
    base: dict[str, Any] = {"driver": driver.id, "valid": driver.valid, "cwd": _folder(driver.source),
                            "ran": driver.run_status.get(tool.id)}
    if driver.kind == "cli":
        template = _list(_dict(metadata.get("cli")).get("argv"))
        bin_args = _list(f.get("bin_args"))
        return {**base, "protocol": "cli", "bin": driver.access.bin, "bin_args": [str(a) for a in bin_args],
                "argv_template": [str(a) for a in template], "bindings": _bindings(template),
                "drop_inputs": list(entry.drop_inputs) if entry else [], "stdout": "one JSON value: the output"}
    if driver.kind == "mcp":
        server = _dict(f.get("server"))
        args = _list(server.get("args"))
        mcp = _dict(metadata.get("mcp"))
        return {**base, "protocol": "mcp", "transport": driver.access.transport,
                "command": [str(server.get("path"))] + [str(a) for a in args] if server.get("path") else [],
                "tool_name": str(mcp.get("tool_name") or tool.id), "arguments": "the input object"}
    return {**base, "protocol": str(driver.kind or "unknown"), "metadata": metadata}


def _needs(tool: Tool, capability: str) -> list[str]:
    """The requirements whose purpose names `capability` (in a code span) other than to say it
    never needs them."""
    out = []
    for r in tool.effects.requires:
        sentences = re.split(r"(?<=[.;])\s+", r.purpose or "")
        if any(f"`{capability}`" in s and "never" not in s.lower() for s in sentences):
            out.append(r.name)
    return out


def _smart(tool: Tool, claim: claims_mod.Claims) -> list[dict[str, Any]]:
    descriptor = tool.descriptor if isinstance(tool.descriptor, dict) else {}
    argv = descriptor.get("cli_argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return []
    root = _folder(tool.descriptor_source or tool.source)
    capabilities = []
    for c in claim.kind.capabilities:
        capabilities.append({
            "name": c.name, "kind": c.kind, "argv": [*argv, c.name], "needs_model": c.kind == MODEL_BACKED if c.kind != "unknown" else None,
            "requires": _needs(tool, c.name), "env": [],
        })
    smoke = descriptor.get("deterministic_smoke")
    way: dict[str, Any] = {
        "protocol": "smart-tool-cli", "cli_argv": list(argv), "cwd": root, "stdin": "closed", "stdout": "JSON",
        "capabilities": capabilities, "env": [],
        "env_note": "the manifest names no environment variables; a model-backed capability needs its provider (see `requires`)",
    }
    if isinstance(smoke, list) and all(isinstance(a, str) for a in smoke):
        way["smoke"] = [*argv, *smoke]
    return [way]


def _examples(tool: Tool) -> list[dict[str, Any]]:
    return [
        {"title": e.title, "arguments": e.input, **({"expect": e.output} if e.has_output else {}), "status": e.status.value}
        for e in tool.examples if e.has_input
    ]


def of(tool: Tool, claim: claims_mod.Claims | None = None) -> dict[str, Any]:
    """The tool's `invoke` block (plain JSON values)."""
    claim = claim or claims_mod.of(tool)
    ways: list[dict[str, Any]] = []
    if tool.implementations:
        ways += _speccify(tool)
    ways += [_driver(d, tool) for d in tool.drivers]
    if tool.descriptor is not None:
        ways += _smart(tool, claim)
    return {"ways": ways, "examples": _examples(tool)}
