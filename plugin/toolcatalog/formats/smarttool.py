"""Amplifier smart tools: `smart-tool.json` descriptor + `SMART_TOOL.md` manifest.

The descriptor sits at a distribution root and names the manifest (`manifest`)
and how to run the tool (`cli_argv`, `deterministic_smoke`). The manifest's
front matter is a closed set. Capabilities and their deterministic/model-backed
labels are not in either file: only the tool's `--help` says, so they are left
unknown here and filled in when the tool is run.

The conformance kit's static rules are decided here, from what parsing found
(`tool.checks`); a rule whose precondition does not hold (no manifest, front
matter that does not parse, no package version) is `skipped` with the reason.
Where the kit reads a manifest, so does this parser; in addition, a root with
no descriptor has its manifest looked for in `src/<package>/` too (the layout
the spec moved to), which the kit does not. A descriptor without `manifest` gets
the kit's verdicts: only the root's SMART_TOOL.md is read, and without one every
rule that reads a manifest is skipped ("manifest not available").
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import frontmatter, jsonschemas
from ..discover import SMART_TOOL_MD, relative
from ..formatregistry import SMART_TOOL
from ..files import ReadError, is_inside, read_capped
from ..frontmatter import Manifest, ManifestError
from ..jsonvalues import loads_limited
from ..model import ERROR, Check, Effects, Requirement, Tool
from ..statuses import CheckStatus
from . import common, kitsubset

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

# The rules (the registry's entry lists them, with the spec document each comes from).
STATIC_RULES = SMART_TOOL.static_rules
STATIC_RULE_IDS = SMART_TOOL.static_rule_ids
RUNTIME_RULES = SMART_TOOL.runtime_rules  # decided by running the CLI (conformance/smarttool.py)
RUNTIME_RULE_IDS = SMART_TOOL.runtime_rule_ids
NO_DESCRIPTOR = SMART_TOOL.texts["no-descriptor"]
SOURCE_JSON = "source.json"  # a catalog's record of where a copied manifest comes from


@dataclass
class _Findings:
    """What parsing one distribution found, for `_static_checks`."""

    descriptor: list[str] | None = None  # problems with smart-tool.json; None: there is none
    manifest_named: list[str] = field(default_factory=list)  # problems with its `manifest`
    manifest_read: bool = False  # a SMART_TOOL.md was read (the named one, or the fallback)
    parse_problems: list[str] = field(default_factory=list)
    data: dict[str, Any] | None = None  # the front matter, when it parsed
    by_rule: dict[str, list[str]] = field(default_factory=dict)  # schema and install problems per rule
    package: tuple[str | None, str] = (None, "")  # (package version, where it comes from | why there is none)
    manifests: list[str] = field(default_factory=list)  # every SMART_TOOL.md under the root
    upstream: dict[str, str] | None = None  # a catalog copy's source.json: where the distribution is
    kit_reader: kitsubset.KitProblem | None = None  # where the kit's own YAML reader parts from ours


def _static_checks(found: _Findings) -> list[Check]:
    specs = dict(STATIC_RULES)
    passed, failed, skipped = CheckStatus.PASSED, CheckStatus.FAILED, CheckStatus.SKIPPED

    def check(rule: str, status: CheckStatus, detail: str = "") -> Check:
        return Check(rule, status, detail, specs[rule])

    def by_problems(rule: str, problems: list[str] | None, ok: str = "") -> Check:
        return check(rule, failed, "; ".join(problems)) if problems else check(rule, passed, ok)

    out: list[Check] = []
    if found.descriptor is None and found.upstream is not None:
        # A catalog keeps copies of manifests; the distribution, with its descriptor, is elsewhere.
        elsewhere = f"a catalog copy: the distribution is {found.upstream['repository']} ({SOURCE_JSON})"
        out.append(check("descriptor-present", skipped, elsewhere))
        out.append(check("manifest-present", skipped, elsewhere))
    elif found.descriptor is None:
        out.append(check("descriptor-present", failed, NO_DESCRIPTOR))
        out.append(check("manifest-present", failed, "no smart-tool.json names a manifest"))
    else:
        out.append(by_problems("descriptor-present", found.descriptor))
        out.append(by_problems("manifest-present", found.manifest_named))
    data = found.data
    if not found.manifest_read:
        out.append(check("manifest-frontmatter-parses", skipped, "no manifest to parse"))
    else:
        out.append(by_problems("manifest-frontmatter-parses", found.parse_problems, _kit_deviation(found.kit_reader)))
    unavailable = "manifest not available" if not found.manifest_read else "the front matter did not parse"
    for rule in ("manifest-fields-closed", "manifest-required-fields", "manifest-field-shapes"):
        out.append(check(rule, skipped, unavailable) if data is None else by_problems(rule, found.by_rule.get(rule)))
    if data is None or "name" not in data:
        out.append(check("manifest-name-format", skipped, unavailable if data is None else "no `name` field to check"))
    else:
        out.append(by_problems("manifest-name-format", found.by_rule.get("manifest-name-format")))
    package_version, where = found.package
    rule = "manifest-version-matches-package"
    if data is None or data.get("version") is None:
        out.append(check(rule, skipped, unavailable if data is None else "no `version` field to compare"))
    elif package_version is None:
        out.append(check(rule, skipped, where))
    elif str(data["version"]).strip() != package_version.strip():
        out.append(check(rule, failed, f"`version` {str(data['version'])!r} differs from {package_version!r} in {where}"))
    else:
        out.append(check(rule, passed, f"{package_version}, as in {where}"))
    if data is None:
        out.append(check("manifest-requires-shape", skipped, unavailable))
    elif data.get("requires") in (None, []):
        out.append(check("manifest-requires-shape", skipped, "no `requires` entries to check"))
    else:
        out.append(by_problems("manifest-requires-shape", found.by_rule.get("manifest-requires-shape")))
    if not found.manifests:
        out.append(check("manifest-single-per-root", skipped, "no SMART_TOOL.md under the distribution root"))
    elif len(found.manifests) > 1:
        listed = ", ".join(found.manifests)
        out.append(check("manifest-single-per-root", failed, f"{len(found.manifests)} SMART_TOOL.md files under the distribution root: {listed}"))
    else:
        out.append(check("manifest-single-per-root", passed))
    return out


def _kit_deviation(problem: kitsubset.KitProblem | None) -> str:
    """What a passed `manifest-frontmatter-parses` says when the kit's reader would not agree (the
    documented deviation: we read YAML 1.2 and keep our verdicts)."""
    if problem is None:
        return ""
    if problem.fails:
        return (f"parses as YAML; the conformance kit's reader fails on line {problem.line} ({problem.construct}), "
                "so the kit FAILs this rule and skips the next five (see the kit-yaml-subset warning)")
    return f"parses as YAML; the conformance kit's reader misreads line {problem.line} ({problem.construct})"


def _kit_reader(manifest: frontmatter.Manifest) -> kitsubset.KitProblem | None:
    """Run the kit-subset check on the front matter's own lines (file lines 2 to the closing `---`)."""
    try:
        lines = manifest.raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:  # pragma: no cover - a manifest that parsed is UTF-8
        return None
    return kitsubset.check("\n".join(lines[1 : max(1, manifest.body_line - 2)]), first_line=2)


def _rule_of(error: Any) -> str:
    """The static rule a schema violation of the front matter belongs to."""
    path = tuple(error.absolute_path)
    if not path and error.validator == "additionalProperties":
        return "manifest-fields-closed"
    if not path and error.validator == "required":
        return "manifest-required-fields"
    if path[:1] == ("name",):
        return "manifest-name-format"
    if path[:1] == ("requires",):
        return "manifest-requires-shape"
    return "manifest-field-shapes"


def parse_distribution(descriptor_path: Path, workspace: Path, max_bytes: int, inside: list[Path] | None = None) -> tuple[Tool, Path | None]:
    """A tool from a descriptor. `inside`: every SMART_TOOL.md found below its root (nested
    distributions excluded). Returns the tool and the manifest path it read."""
    root = descriptor_path.parent
    inside = sorted(inside or [])
    source = relative(descriptor_path, workspace)
    tool = Tool(id=root.name, name=root.name, format=SMART_TOOL.id, source=source, abs_path=descriptor_path)
    tool.descriptor_source = source
    found = _Findings(descriptor=[], manifests=[relative(p, root) for p in inside])
    sink = common.Sink(source, tool.diagnostics)

    def descriptor_error(message: str, line: int | None, code: str) -> None:
        sink.error(f"smart-tool.json: {message}", line, code)
        assert found.descriptor is not None
        found.descriptor.append(message)

    descriptor: Any = None
    text = ""
    try:
        descriptor, raw = frontmatter.read_json(descriptor_path, max_bytes)
        text = raw.decode("utf-8")
    except ManifestError as exc:
        descriptor_error(exc.message, exc.line, exc.code)
    if descriptor is not None and not isinstance(descriptor, dict):
        descriptor_error("must be a JSON object", 1, "descriptor")
    manifest_path: Path | None = None
    named = False
    if isinstance(descriptor, dict):
        tool.descriptor = descriptor
        for error in jsonschemas.leaf_errors(jsonschemas.validate_bundled(DESCRIPTOR_SCHEMA, descriptor)):
            descriptor_error(common.describe_error(error), _json_line(text, error.absolute_path), "descriptor")
        for key in descriptor:
            if key not in DESCRIPTOR_FIELDS:
                sink.warning(
                    f"smart-tool.json: unknown field `{key}`; the descriptor only says where the manifest is and how to run the tool",
                    _json_line(text, [key]),
                    "descriptor-unknown-field",
                )
        ref = descriptor.get("manifest")
        if isinstance(ref, str) and ref.strip():
            named = True
            manifest_path = _named_manifest(ref, root, _json_line(text, ["manifest"]), sink, found)
    if not named:
        # The kit then checks the root's SMART_TOOL.md and nothing else: a manifest elsewhere (in
        # src/<package>/) is "not available", and every rule that reads one is skipped, as here.
        found.manifest_named.append("smart-tool.json does not name a manifest (see descriptor-present)")
        manifest_path = next((p for p in inside if p.parent == root), None)
        if manifest_path is None and inside:
            elsewhere = relative(inside[0], root)
            sink.warning(
                f"smart-tool.json names no manifest, so {elsewhere} is not read (the conformance kit reads only "
                f"a SMART_TOOL.md at the root then); add \"manifest\": \"{elsewhere}\" to smart-tool.json",
                _json_line(text, []) if text else None,
                "descriptor-manifest",
            )
    if manifest_path is not None:
        tool.source = relative(manifest_path, workspace)
        tool.abs_path = manifest_path
        _parse_manifest(tool, manifest_path, root, max_bytes, found)
        _more_manifests(sink, manifest_path, inside, workspace)
    tool.checks = _static_checks(found)
    return tool, manifest_path


def parse_standalone(manifests: list[Path], root: Path, workspace: Path, max_bytes: int) -> Tool:
    """A tool from the SMART_TOOL.md files of one distribution root that no descriptor claims
    (see `standalone_root`): validated, shown and given the static checks, never run."""
    manifests = sorted(manifests)
    manifest_path = _primary(manifests, root) or manifests[0]
    source = relative(manifest_path, workspace)
    tool = Tool(id=manifest_path.parent.name, name=manifest_path.parent.name, format=SMART_TOOL.id, source=source, abs_path=manifest_path)
    found = _Findings(manifests=[relative(p, root) for p in manifests])
    _parse_manifest(tool, manifest_path, root, max_bytes, found)
    sink = common.Sink(source, tool.diagnostics)
    found.upstream = tool.upstream = _upstream(manifest_path.parent, max_bytes, sink)
    if tool.upstream is not None:
        sink.warning(
            f"a catalog copy of {tool.upstream['repository']} ({SOURCE_JSON}): the manifest is checked here; "
            "the tool runs from its own distribution, so its runtime checks are skipped",
            None,
            "catalog-copy",
        )
    else:
        sink.warning(
            "no smart-tool.json names this manifest, so nothing says how to run the tool; its runtime checks are skipped",
            None,
            "descriptor-missing",
        )
    _more_manifests(common.Sink(source, tool.diagnostics), manifest_path, manifests, workspace)
    tool.checks = _static_checks(found)
    return tool


def _upstream(folder: Path, max_bytes: int, sink: common.Sink) -> dict[str, str] | None:
    """A catalog's `source.json` beside a manifest (`repository`, an https URL; `ref`; `path`), or
    None when there is none. A malformed one is reported and ignored."""
    path = folder / SOURCE_JSON
    if not path.exists():
        return None
    try:
        data = loads_limited(read_capped(path, max_bytes, inside=folder).decode("utf-8"))
    except (ReadError, ValueError) as exc:
        sink.warning(f"{SOURCE_JSON} beside the manifest cannot be read ({exc}); ignored", None, "source-json")
        return None
    repository = data.get("repository") if isinstance(data, dict) else None
    if not isinstance(repository, str) or not re.match(r"^https://[^\s/]+/\S*$", repository):
        sink.warning(f"{SOURCE_JSON} beside the manifest has no https `repository`; ignored", None, "source-json")
        return None
    out = {"repository": repository}
    for key in ("ref", "path"):
        if isinstance(data.get(key), str):
            out[key] = data[key]
    return out


def standalone_root(manifest_path: Path, search_root: Path) -> Path:
    """The distribution root of a SMART_TOOL.md no descriptor claims, by the two layouts the spec
    has used: the manifest's own folder, or the folder above `src/` for `src/<package>/SMART_TOOL.md`
    (never above the folder searched)."""
    folder = manifest_path.parent
    if folder.parent.name == "src" and is_inside(folder.parent.parent, search_root):
        return folder.parent.parent
    return folder


def _named_manifest(ref: str, root: Path, line: int | None, sink: common.Sink, found: _Findings) -> Path | None:
    """The manifest the descriptor names, when it can be read; else None, with the problem noted."""
    path = Path(os.path.normpath(root / ref))

    def problem(message: str) -> None:
        sink.error(f"smart-tool.json: {message}", line, "descriptor-manifest")
        found.manifest_named.append(message)

    if not is_inside(path, root):
        problem(f"`manifest` {ref!r} points outside the distribution root")
        return None
    if path.name != SMART_TOOL_MD:
        problem(f"`manifest` {ref!r} must name a file called SMART_TOOL.md")
    if not path.is_file():
        problem(f"`manifest` {ref!r} does not exist")
        return None
    return path


def _primary(manifests: list[Path], root: Path) -> Path | None:
    """The manifest a root's checks read when no descriptor names one: the root's own
    SMART_TOOL.md (the kit's choice), else one in `src/<package>/` (the spec's layout)."""
    for path in manifests:
        if path.parent == root:
            return path
    for path in manifests:
        if path.parent.parent == root / "src":
            return path
    return None


def _more_manifests(sink: common.Sink, manifest_path: Path, manifests: list[Path], workspace: Path) -> None:
    for other in manifests:
        if os.path.realpath(other) != os.path.realpath(manifest_path):
            sink.error(
                f"the distribution root holds another SMART_TOOL.md ({relative(other, workspace)}); exactly one manifest per root is allowed",
                None,
                "manifest-single-per-root",
            )


def _parse_manifest(tool: Tool, path: Path, root: Path, max_bytes: int, found: _Findings) -> None:
    sink = common.Sink(tool.source, tool.diagnostics)
    found.manifest_read = True
    found.package = package_version_of(root, max_bytes)
    before = len(tool.diagnostics)
    manifest = common.read_manifest(path, sink, max_bytes)
    found.parse_problems = [d.message for d in tool.diagnostics[before:] if d.severity == ERROR]
    if manifest is None:
        return
    data: dict[str, Any] = manifest.data
    found.data = data
    found.kit_reader = _kit_reader(manifest)
    if found.kit_reader is not None:
        sink.warning(kitsubset.message(found.kit_reader), found.kit_reader.line, "kit-yaml-subset")
    tool.fields = data
    tool.body, tool.body_line = manifest.body, manifest.body_line
    tool.lines = common.contract_lines(manifest)  # tool.source is this manifest by now
    _schema_rules(tool, manifest, sink, found)
    _fields(tool, manifest)
    tool.effects = Effects(requires=_requirements(manifest, sink, found))
    _version_matches_package(tool, manifest, sink, found)


def _schema_rules(tool: Tool, manifest: Manifest, sink: common.Sink, found: _Findings) -> None:
    """The manifest schema's errors, each filed under the rule it breaks; keys it does not define kept."""
    data: dict[str, Any] = manifest.data
    groups: dict[str, list[Any]] = {}
    for error in jsonschemas.leaf_errors(jsonschemas.validate_bundled(MANIFEST_SCHEMA, data)):
        groups.setdefault(_rule_of(error), []).append(error)
    for rule, errors in groups.items():
        before = len(tool.diagnostics)
        common.schema_diagnostics(sink, manifest, errors)
        found.by_rule.setdefault(rule, []).extend(d.message for d in tool.diagnostics[before:])
    allowed = set(jsonschemas.bundled(MANIFEST_SCHEMA).get("properties") or {})
    tool.extra = {k: v for k, v in data.items() if k not in allowed}


def _fields(tool: Tool, manifest: Manifest) -> None:
    """The fields the model holds, where they have the right type (the schema says when not)."""
    data: dict[str, Any] = manifest.data
    if isinstance(data.get("name"), str):
        tool.id = tool.name = data["name"]
        tool.id_line = manifest.line(("name",))
    if isinstance(data.get("version"), str):
        tool.version = data["version"]
    elif isinstance(data.get("version"), (int, float)) and not isinstance(data.get("version"), bool):
        tool.version = str(data["version"])
    if isinstance(data.get("description"), str):
        tool.description = data["description"].strip()
    platforms = data.get("platforms")
    if isinstance(platforms, list):
        tool.platforms = [str(p) for p in platforms]
    use_cases = data.get("use_cases")
    if isinstance(use_cases, list):
        tool.use_cases = [u.strip() for u in use_cases if isinstance(u, str) and u.strip()]


def _requirements(manifest: Manifest, sink: common.Sink, found: _Findings) -> list[Requirement]:
    """`requires`, as requirements; an `install` that is a command is an error (never run)."""
    requirements: list[Requirement] = []
    requires = manifest.data.get("requires")
    if isinstance(requires, list):
        for index, entry in enumerate(requires):
            if not isinstance(entry, dict):
                continue
            install = entry.get("install")
            if isinstance(install, str):
                problem = install_problem(install)
                if problem:
                    message = f"`requires[{index}].install` {install!r} {problem}; it must be a doc path or URL, never a command"
                    sink.error(message, manifest.line(("requires", index, "install")), "requires-install")
                    found.by_rule.setdefault("manifest-requires-shape", []).append(message)
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
    return requirements


def _version_matches_package(tool: Tool, manifest: Manifest, sink: common.Sink, found: _Findings) -> None:
    package_version, where = found.package
    if package_version is not None and tool.version is not None and package_version.strip() != tool.version.strip():
        sink.error(
            f"`version` {tool.version!r} differs from the package version {package_version!r} in {where}; they must be equal",
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


def package_version_of(root: Path, max_bytes: int = frontmatter.DEFAULT_MAX_BYTES) -> tuple[str | None, str]:
    """The static package version at a distribution root: (version, where it comes from), or
    (None, why there is none). `pyproject.toml` wins over `package.json`, as in the kit. Each is
    read capped, and only when it is a regular file inside the root."""
    pyproject = root / "pyproject.toml"
    if os.path.lexists(pyproject):
        try:
            data = tomllib.loads(read_capped(pyproject, max_bytes, inside=root).decode("utf-8"))
        except ReadError as exc:
            return None, f"pyproject.toml is not read: {exc.message}"
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            return None, "pyproject.toml cannot be parsed"
        declared = data.get("project")
        project = declared if isinstance(declared, dict) else {}
        version = project.get("version")
        if isinstance(version, str):
            return version, "pyproject.toml"
        return None, "pyproject.toml declares no static [project].version (dynamic or absent)"
    package_json = root / "package.json"
    if os.path.lexists(package_json):
        try:
            data = loads_limited(read_capped(package_json, max_bytes, inside=root).decode("utf-8"))
        except ReadError as exc:
            return None, f"package.json is not read: {exc.message}"
        except ValueError:  # bad JSON or UTF-8, over-long integers, nested too deep
            return None, "package.json cannot be parsed"
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return data["version"], "package.json"
        return None, "package.json has no `version`"
    return None, "no package definition (pyproject.toml or package.json) at the distribution root"


def _json_line(text: str, where: Any) -> int | None:
    """Best-effort line of a top-level key in a JSON file's text (JSON has no line API)."""
    parts = list(where)
    if not parts:
        return 1
    match = re.search(r'"' + re.escape(str(parts[0])) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else None
