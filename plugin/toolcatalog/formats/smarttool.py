"""Amplifier smart tools: `smart-tool.json` descriptor + `SMART_TOOL.md` manifest.

The descriptor sits at a distribution root and names the manifest (`manifest`)
and how to run the tool (`cli_argv`, `deterministic_smoke`). The manifest's
front matter is a closed set. Capabilities and their deterministic/model-backed
labels are not in either file: only the tool's `--help` says, so they are left
unknown here and filled in when the tool is run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from .. import frontmatter, jsonschemas
from ..discover import relative
from ..frontmatter import ManifestError
from ..model import Effects, Requirement, Tool
from . import common

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MANIFEST_SCHEMA = "smart-tool-manifest.schema.json"
DESCRIPTOR_SCHEMA = "smart-tool-descriptor.schema.json"
DESCRIPTOR_FIELDS = ("manifest", "cli_argv", "deterministic_smoke")

_INSTALL_SHELL = ("&&", "||", "|", ";", "$(", "`", ">", "<")
_INSTALL_VERBS = frozenset(
    "sudo apt apt-get pip pip3 pipx npm npx yarn pnpm brew curl wget dnf yum pacman apk choco winget scoop "
    "docker uv cargo go gem make".split()
)


# The conformance kit's static rules, each decided by the manifest diagnostics `rule_for` maps to it.
STATIC_RULES = (
    ("descriptor-present", "packaging.md"),
    ("manifest-present", "packaging.md"),
    ("manifest-frontmatter-parses", "manifest.md"),
    ("manifest-fields-closed", "manifest.md"),
    ("manifest-required-fields", "manifest.md"),
    ("manifest-name-format", "manifest.md"),
    ("manifest-version-matches-package", "manifest.md"),
    ("manifest-requires-shape", "manifest.md"),
    ("manifest-single-per-root", "manifest.md"),
)


def rule_for(diagnostic: Any) -> str | None:
    code, message = diagnostic.code, diagnostic.message
    if code in ("descriptor-manifest",):
        return "manifest-present"
    if code == "descriptor" or code == "json-syntax":
        return "descriptor-present"
    if code.startswith(("frontmatter", "yaml", "manifest-too", "manifest-unreadable", "manifest-encoding")):
        return "manifest-frontmatter-parses"
    if code == "version-mismatch":
        return "manifest-version-matches-package"
    if code == "requires-install" or (code == "schema" and message.startswith("`requires")):
        return "manifest-requires-shape"
    if code == "manifest-single-per-root":
        return "manifest-single-per-root"
    if code == "schema":
        if message.startswith("unknown field"):
            return "manifest-fields-closed"
        if message.startswith("missing required field"):
            return "manifest-required-fields"
        if message.startswith("`name`"):
            return "manifest-name-format"
        return "manifest-required-fields"
    return None


def parse_distribution(
    descriptor_path: Path, workspace: Path, max_bytes: int, other_manifests: list[Path] | None = None
) -> tuple[Tool, Path | None]:
    """A tool from a descriptor. Returns the tool and the manifest path it claimed."""
    root = descriptor_path.parent
    source = relative(descriptor_path, workspace)
    tool = Tool(id=root.name, name=root.name, format="smart-tool", source=source, abs_path=descriptor_path)
    tool.descriptor_source = source
    desc_sink = common.Sink(source, tool.diagnostics)
    try:
        descriptor, _raw = frontmatter.read_json(descriptor_path, max_bytes)
    except ManifestError as exc:
        desc_sink.error(f"smart-tool.json: {exc.message}", exc.line, exc.code)
        return tool, None
    if not isinstance(descriptor, dict):
        desc_sink.error("smart-tool.json must be a JSON object", 1, "descriptor")
        return tool, None
    tool.descriptor = descriptor
    for error in jsonschemas.leaf_errors(jsonschemas.validate_bundled(DESCRIPTOR_SCHEMA, descriptor)):
        desc_sink.error(f"smart-tool.json: {common.describe_error(error)}", _json_line(descriptor_path, error.absolute_path), "descriptor")
    for key in descriptor:
        if key not in DESCRIPTOR_FIELDS:
            desc_sink.warning(
                f"smart-tool.json: unknown field `{key}`; the descriptor only says where the manifest is and how to run the tool",
                _json_line(descriptor_path, [key]),
                "descriptor-unknown-field",
            )

    manifest_ref = descriptor.get("manifest")
    if not isinstance(manifest_ref, str) or not manifest_ref:
        return tool, None
    manifest_path = Path(os.path.normpath(root / manifest_ref))
    line = _json_line(descriptor_path, ["manifest"])
    if not _inside(manifest_path, root):
        desc_sink.error(f"smart-tool.json: `manifest` {manifest_ref!r} points outside the distribution root", line, "descriptor-manifest")
        return tool, None
    if manifest_path.name != "SMART_TOOL.md":
        desc_sink.error(f"smart-tool.json: `manifest` {manifest_ref!r} must name a file called SMART_TOOL.md", line, "descriptor-manifest")
    if not manifest_path.is_file():
        desc_sink.error(f"smart-tool.json: `manifest` {manifest_ref!r} does not exist", line, "descriptor-manifest")
        return tool, None
    tool.source = relative(manifest_path, workspace)
    tool.abs_path = manifest_path
    _parse_manifest(tool, manifest_path, root, max_bytes)
    for other in other_manifests or []:
        if Path(os.path.realpath(other)) != Path(os.path.realpath(manifest_path)):
            desc_sink.error(
                f"the distribution root holds another SMART_TOOL.md ({relative(other, workspace)}); exactly one manifest per root is allowed",
                None,
                "manifest-single-per-root",
            )
    return tool, manifest_path


def parse_standalone(manifest_path: Path, workspace: Path, max_bytes: int, search_root: Path) -> Tool:
    """A SMART_TOOL.md no descriptor claims: validated and rendered, never run."""
    source = relative(manifest_path, workspace)
    tool = Tool(id=manifest_path.parent.name, name=manifest_path.parent.name, format="smart-tool", source=source, abs_path=manifest_path)
    root = _package_root(manifest_path.parent, search_root) or manifest_path.parent
    _parse_manifest(tool, manifest_path, root, max_bytes)
    common.Sink(source, tool.diagnostics).warning(
        "no smart-tool.json names this manifest, so nothing says how to run the tool; its runtime checks are skipped",
        None,
        "descriptor-missing",
    )
    return tool


def _parse_manifest(tool: Tool, path: Path, root: Path, max_bytes: int) -> None:
    sink = common.Sink(tool.source, tool.diagnostics)
    manifest = common.read_manifest(path, sink, max_bytes)
    if manifest is None:
        return
    data: dict[str, Any] = manifest.data
    tool.fields = data
    tool.body, tool.body_line = manifest.body, manifest.body_line
    common.schema_diagnostics(sink, manifest, jsonschemas.validate_bundled(MANIFEST_SCHEMA, data))
    allowed = set(jsonschemas.bundled(MANIFEST_SCHEMA).get("properties") or {})
    tool.extra = {k: v for k, v in data.items() if k not in allowed}

    if isinstance(data.get("name"), str):
        tool.id = tool.name = data["name"]
    if isinstance(data.get("version"), str):
        tool.version = data["version"]
    elif isinstance(data.get("version"), (int, float)) and not isinstance(data.get("version"), bool):
        tool.version = str(data["version"])
    if isinstance(data.get("description"), str):
        tool.description = data["description"].strip()
    platforms = data.get("platforms")
    if isinstance(platforms, list):
        tool.platforms = [str(p) for p in platforms]

    requirements: list[Requirement] = []
    requires = data.get("requires")
    if isinstance(requires, list):
        for index, entry in enumerate(requires):
            if not isinstance(entry, dict):
                continue
            install = entry.get("install")
            if isinstance(install, str):
                problem = install_problem(install)
                if problem:
                    sink.error(
                        f"`requires[{index}].install` {install!r} {problem}; it must be a doc path or URL, never a command",
                        manifest.line(("requires", index, "install")),
                        "requires-install",
                    )
            if isinstance(entry.get("name"), str):
                requirements.append(
                    Requirement(
                        "dependency",
                        entry["name"],
                        purpose=entry.get("purpose") if isinstance(entry.get("purpose"), str) else None,
                        install=install if isinstance(install, str) else None,
                        optional=entry.get("optional") is True,
                    )
                )
    tool.effects = Effects(requires=requirements)

    package_version, package_file = package_version_of(root)
    if package_version is not None and tool.version is not None and package_version != tool.version:
        sink.error(
            f"`version` {tool.version!r} differs from the package version {package_version!r} in {package_file}; "
            "they must be equal",
            manifest.line(("version",)),
            "version-mismatch",
        )


def install_problem(install: str) -> str | None:
    """Why an `install` value is a command rather than a doc path or URL (the kit's rules)."""
    value = install.strip()
    if not value:
        return "is empty"
    for token in _INSTALL_SHELL:
        if token in value:
            return f"contains the shell operator `{token}`"
    first = value.split()[0].lower()
    if first in _INSTALL_VERBS:
        return f"starts with the installer command `{first}`"
    if re.search(r"\s", value):
        return "contains whitespace"
    return None


def package_version_of(root: Path) -> tuple[str | None, str | None]:
    """The static package version at a distribution root, if it declares one."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            return None, None
        project = data.get("project") if isinstance(data.get("project"), dict) else {}
        version = project.get("version")
        if isinstance(version, str):
            return version, "pyproject.toml"
        return None, None  # dynamic or absent: not checked, like the kit's SKIP
    package_json = root / "package.json"
    if package_json.is_file():
        try:
            data = json.loads(package_json.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # ValueError: bad JSON or UTF-8, over-long integers
            return None, None
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return data["version"], "package.json"
    return None, None


def _package_root(start: Path, stop: Path) -> Path | None:
    """The distribution root of a manifest no descriptor claims, by the layouts the spec has used.

    Either the manifest sits at the root (older layout) or in `src/<package>/` below it. Walking
    further up would find the repository's own package and compare against the wrong version.
    """
    candidates = [start]
    if start.parent.name == "src":
        candidates.append(start.parent.parent)
    for candidate in candidates:
        if not _inside(candidate, stop):
            break
        if (candidate / "pyproject.toml").is_file() or (candidate / "package.json").is_file():
            return candidate
    return None


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
        return True
    except ValueError:
        return False


def _json_line(path: Path, where: Any) -> int | None:
    """Best-effort line of a top-level key in a JSON file (JSON has no line API)."""
    parts = list(where)
    if not parts:
        return 1
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = re.search(r'"' + re.escape(str(parts[0])) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else None
