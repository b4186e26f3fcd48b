"""Every manifest format this package reads, each described once.

One `Format` entry per format: its id (the `format` of a `Tool` and of the catalog), its
names, where discovery finds it, which functions parse and plan it, the rules it is judged by
and the words pages say about it. Everything else asks this table (or the model's facts
derived from it: `Tool.format_info`, `Tool.format_label`, ...) instead of naming a format;
`tests/test_registry.py` fails when a format id appears as a string anywhere in the package
outside this module and the format's own modules (`Format.modules`).

Layers: this module imports nothing from the package, so every layer may read it (the model,
parsers, conformance, pages). Parsers and planners sit in layers above it, so an entry names
them by reference (`"toolcatalog.formats.speccify:parse"`) and `resolve` binds the reference
for a caller that may import that layer anyway: the harvest resolves parsers (it sits above
`formats`), the conformance engine resolves planners (its own package); pages never resolve
anything. `tests/test_registry.py` checks that every reference resolves, and that each points
into the layer its kind belongs to, so the late binding never hides an import a contract
forbids.

Adding a format: its modules (a parser in `formats/`, a planner in `conformance/` for a tool
format) and one entry in `FORMATS` (docs/formats.md, "Adding a format").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import references

TOOL = "tool"  # a format of tool contracts (`Tool`)
DRIVER = "driver"  # a format of drivers that implement them (`Driver`)

# How a format declares a tool's effects (`Format.effects`).
CLASSES = "classes"  # machine-readable classes (`mutates`): judged against what a run did
WORDS = "words"  # one line of free text: judged only when it says the tool changes nothing
UNDECLARED = "none"  # it has no place for them


@dataclass(frozen=True)
class Format:
    """One manifest format, described once."""

    id: str  # `Tool.format` / the catalog's `format`; discovery's hint for files of this format
    kind: str  # TOOL | DRIVER
    title: str  # the long name: the nav's group, the docs ("agentproto AIP-14")
    label: str  # the short name in a row about one tool ("AIP-14")
    file_names: tuple[str, ...]  # the manifest file names it is written in
    patterns: str  # the globs a conventional search uses for it, as pages and logs show them
    finds: str  # what those patterns find, in words ("agentproto AIP-14 tools")
    # Whether a file of its name lies where the format puts it (the folders from the searched root
    # to the file); a conventional search ignores a file no format places.
    placed: Callable[[tuple[str, ...]], bool]
    # Whether a `paths` search (any depth) still reads a file of its name the format does not place.
    anywhere: bool
    parser: str  # "module:function" that parses one manifest (for `kind` TOOL: into a `Tool`)
    modules: tuple[str, ...]  # its own modules, relative to the package: only they may name its id
    planner: str = ""  # "module:function" in `toolcatalog.conformance` that plans a tool's checks
    refused: str = ""  # "module:function": the outcome when nothing may run (default: not run, no checks)
    implementations: str = ""  # "module:function" listing a tool folder's implementation files
    reads_unclaimed: bool = False  # a TOOL.md neither location nor content claims is read as this format
    effects: str = UNDECLARED  # how it declares effects: CLASSES, WORDS or UNDECLARED
    # Why a tool that declares no effects class has none (the badge's title on pages).
    undeclared_why: str = "`mutates` or `risk_level` is malformed, so the effects are unknown"
    undeclared_badge: str = "effects not declared"  # the badge's text then
    undeclared_title: str = ""  # the badge's tooltip then
    shows_missing_effects: bool = False  # its contract table has an "Effects: not declared" row
    judging_rule: str = ""  # how a run of an example is judged, in words ("" when it has no examples)
    static_rules: tuple[tuple[str, str], ...] = ()  # (rule id, spec document), decided by the parser
    runtime_rules: tuple[tuple[str, str], ...] = ()  # (rule id, spec document), decided by running it
    failure_envelope: bool = False  # an example that documents a failure shows an error envelope, not an output
    coverage_by_capabilities: bool = False  # coverage counts capabilities run, not schema paths
    major_bump_on_break: bool = False  # a breaking contract change needs a major version bump
    has_drivers: bool = False  # its tools are implemented by drivers (the index counts them)
    declares_kind: bool = False  # its contract can state its kind (`metadata.model_backed`, a kind tag); else such text is no evidence
    default_timeout_ms: int | None = None  # a run's time limit when the contract sets none
    texts: Mapping[str, str] = field(default_factory=dict)  # further phrases its own modules share

    @property
    def static_rule_ids(self) -> frozenset[str]:
        return frozenset(rule for rule, _spec in self.static_rules)

    @property
    def runtime_rule_ids(self) -> tuple[str, ...]:
        return tuple(rule for rule, _spec in self.runtime_rules)


def _speccify_placed(folders: tuple[str, ...]) -> bool:
    return len(folders) >= 3 and folders[-3] == ".agent" and folders[-2] == "tools"  # exactly .agent/tools/<name>/


def _aip14_placed(folders: tuple[str, ...]) -> bool:
    return ".tools" in folders or ".cli" in folders  # a CLI bundle keeps its subcommands' TOOL.md files below `.cli/<name>/`


def _aip30_placed(folders: tuple[str, ...]) -> bool:
    return ".drivers" in folders or ".tools" in folders


def _aip29_placed(folders: tuple[str, ...]) -> bool:
    return len(folders) >= 2 and folders[-2] == ".cli"


def _anywhere(folders: tuple[str, ...]) -> bool:
    return True


SPECCIFY = Format(
    id="speccify", kind=TOOL, title="speccify", label="speccify",
    file_names=("TOOL.md",), patterns="**/.agent/tools/*/TOOL.md", finds="speccify tools",
    placed=_speccify_placed, anywhere=True, reads_unclaimed=True,
    parser="toolcatalog.formats.speccify:parse", planner="toolcatalog.conformance.speccify:plan",
    implementations="toolcatalog.formats.speccify:implementation_files",
    modules=("formats/speccify.py", "conformance/speccify.py"),
    effects=WORDS,
    undeclared_why="this speccify tool has no effects line", undeclared_title="No effects line",
    shows_missing_effects=True,
    judging_rule="the tool must print one JSON value that contains the expected output (extra keys are "
                 "allowed) and fits `outputs`; when the expected output says `ok: true`, it must also exit with "
                 "code 0, and a non-zero exit with nothing printed fails.",
)

AIP14 = Format(
    id="aip-14", kind=TOOL, title="agentproto AIP-14", label="AIP-14",
    file_names=("TOOL.md",), patterns="**/.tools/**/TOOL.md", finds="agentproto AIP-14 tools",
    placed=_aip14_placed, anywhere=True,
    parser="toolcatalog.formats.aip14:parse", planner="toolcatalog.conformance.agentproto:plan",
    modules=("formats/aip14.py", "formats/link.py", "conformance/agentproto.py"),
    effects=CLASSES,
    undeclared_badge="mutations unknown", undeclared_title="`mutates` or `risk_level` is malformed",
    judging_rule="a non-zero exit code fails the run, unless the expected output documents a failure "
                 "(`ok: false`: then the error envelope is compared with it); otherwise the output (a success "
                 "envelope `{ok: true, value}` unwrapped) must contain the expected output and fit `outputs`.",
    failure_envelope=True, major_bump_on_break=True, has_drivers=True, default_timeout_ms=30000, declares_kind=True,
)

AIP30 = Format(
    id="aip-30", kind=DRIVER, title="agentproto AIP-30", label="AIP-30",
    file_names=("DRIVER.md",), patterns="**/.drivers/**/DRIVER.md, **/.tools/**/DRIVER.md",
    finds="agentproto AIP-30 drivers", placed=_aip30_placed, anywhere=True,
    parser="toolcatalog.formats.aip30:parse", modules=("formats/aip30.py", "formats/link.py"),
)

AIP29 = Format(
    id="aip-29", kind=DRIVER, title="agentproto AIP-29", label="AIP-29",
    file_names=("CLI.md",), patterns="**/.cli/*/CLI.md", finds="agentproto AIP-29 CLIs",
    placed=_aip29_placed, anywhere=False,  # CLI.md is a common doc name: only under a `.cli/` folder
    parser="toolcatalog.formats.aip29:parse", modules=("formats/aip29.py", "formats/link.py"),
)

SMART_TOOL = Format(
    id="smart-tool", kind=TOOL, title="Smart tools", label="smart tool",
    file_names=("SMART_TOOL.md", "smart-tool.json"), patterns="**/SMART_TOOL.md, **/smart-tool.json",
    finds="smart tools", placed=_anywhere, anywhere=True,
    parser="toolcatalog.formats.smarttool:parse_distribution", planner="toolcatalog.conformance.smarttool:plan",
    refused="toolcatalog.conformance.smarttool:refused",
    modules=("formats/smarttool.py", "formats/kitsubset.py", "conformance/smarttool.py"),
    undeclared_why="smart tools declare no effects", undeclared_title="Smart tools declare no effects",
    coverage_by_capabilities=True,
    # The conformance kit's static rules, plus `manifest-field-shapes` (from the kit's later version),
    # in the order the kit reports them, with the spec document each comes from.
    static_rules=(
        ("descriptor-present", "packaging.md"),
        ("manifest-present", "packaging.md"),
        ("manifest-frontmatter-parses", "manifest.md"),
        ("manifest-fields-closed", "manifest.md"),
        ("manifest-required-fields", "manifest.md"),
        ("manifest-field-shapes", "manifest.md"),
        ("manifest-name-format", "manifest.md"),
        ("manifest-version-matches-package", "manifest.md"),
        ("manifest-requires-shape", "manifest.md"),
        ("manifest-single-per-root", "manifest.md"),
    ),
    # Decided by running the CLI (conformance/smarttool.py), in the order they are reported.
    runtime_rules=(
        ("loads-without-provider", "structure.md"),
        ("help-discloses-model-backed", "invocation.md"),
        ("help-short-flag", "invocation.md"),
        ("capability-help", "invocation.md"),
        ("deterministic-capability-runs", "structure.md"),
        ("failure-names-remedy", "invocation.md"),
        ("no-hang-stdin-closed", "invocation.md"),
    ),
    texts={"no-descriptor": "no smart-tool.json at the distribution root"},
)

# Every format, once, in the order discovery lists their patterns and the nav its groups.
FORMATS: tuple[Format, ...] = (SPECCIFY, AIP14, AIP30, AIP29, SMART_TOOL)
TOOL_FORMATS: tuple[Format, ...] = tuple(f for f in FORMATS if f.kind == TOOL)

_BY_ID = {f.id: f for f in FORMATS}
_REFERENCE = re.compile(r"^toolcatalog(\.[a-z_][a-z0-9_]*)+:[A-Za-z_][A-Za-z0-9_]*$")


def get(format_id: str | None) -> Format | None:
    """The entry of `format_id`; None for an id no entry has."""
    return _BY_ID.get(format_id or "")


def of(format_id: str) -> Format:
    """The entry of `format_id`; for an id no entry has (a hand-made `Tool`), an entry that claims
    nothing: its names are the id itself and every fact is the default."""
    found = _BY_ID.get(format_id)
    if found is not None:
        return found
    return Format(id=format_id, kind=TOOL, title=format_id, label=format_id, file_names=(), patterns="", finds="",
                  placed=lambda folders: False, anywhere=False, parser="", modules=())


def ids(kind: str = TOOL) -> tuple[str, ...]:
    """The ids of every format of `kind`, in `FORMATS` order."""
    return tuple(f.id for f in FORMATS if f.kind == kind)


def titles(kind: str = TOOL) -> dict[str, str]:
    return {f.id: f.title for f in FORMATS if f.kind == kind}


def labels(kind: str = TOOL) -> dict[str, str]:
    return {f.id: f.label for f in FORMATS if f.kind == kind}


def for_file(name: str) -> tuple[Format, ...]:
    """The formats written in files called `name`, in `FORMATS` order."""
    return tuple(f for f in FORMATS if name in f.file_names)


def unclaimed(name: str) -> Format | None:
    """The format a file called `name` is read as when nothing else decides (`reads_unclaimed`, or
    the only format written in such files)."""
    candidates = for_file(name)
    return next((f for f in candidates if f.reads_unclaimed), candidates[0] if len(candidates) == 1 else None)


def resolve(reference: str) -> Callable[..., Any]:
    """The function `"toolcatalog.module:function"` names (imported now, by the caller's layer)."""
    return references.resolve(reference, _REFERENCE, "the package")
