"""The normalized model every manifest format is parsed into.

One `Tool` per harvested contract, whatever its format; `Driver`s (AIP-30)
hang off the tools they implement. Parsers fill these objects; the catalog,
renderer and runner only ever read them. What differs by format is never asked
of the format's name: it is a fact of the format's entry in `formatregistry`
(`Tool.format_info`, `Tool.format_label`, ...). A new format is its modules (a
parser, for a tool format a planner) and one registry entry; see
docs/formats.md, "Adding a format".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import formatregistry
from .formatregistry import Format
from .observed import Observed, SandboxReport
from .statuses import CheckStatus, ExampleStatus, RunStatus, Status


ERROR = "error"
WARNING = "warning"


# The tool formats, in the nav's order, and the nav's group titles (from `formatregistry`).
FORMATS = formatregistry.ids()
FORMAT_TITLES = formatregistry.titles()

DETERMINISTIC = "deterministic"
MODEL_BACKED = "model-backed"


# The model's objects are slotted (`@dataclass(slots=True)`): a catalog of thousands of tools holds
# hundreds of thousands of them, and a slotted object is a third of one with a `__dict__`
# (tests/test_compact_model.py). Tools and drivers can still be referred to weakly.
class _Referable:
    __slots__ = ("__weakref__",)


@dataclass(slots=True)
class Diagnostic:
    """One problem found in a manifest, with enough context to fix it."""

    severity: str  # ERROR makes the tool (or driver) invalid; WARNING does not
    message: str
    path: str  # manifest path relative to the workspace root, "/" separators
    line: int | None = None
    code: str = ""  # short stable identifier, e.g. "yaml-duplicate-key"

    def as_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
        }

    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(slots=True)
class Requirement:
    """Something a tool needs to run: a binary, network host, secret, tool or package."""

    kind: str  # binary | network | secret | tool | runtime | dependency
    name: str
    purpose: str | None = None
    install: str | None = None
    optional: bool = False

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.purpose is not None:
            d["purpose"] = self.purpose
        if self.install is not None:
            d["install"] = self.install
        if self.optional:
            d["optional"] = True
        return d


@dataclass(slots=True)
class Effects:
    """The safety contract. `None` means the format does not say (never guessed)."""

    mutates: list[str] | None = None  # AIP-14 `<class>:<scope>` entries
    text: str | None = None  # speccify's free-text `effects` line
    risk_level: int | None = None
    approval: str | None = None
    idempotent: bool | None = None
    cost_class: str | None = None
    requires: list[Requirement] = field(default_factory=list)

    @property
    def read_only(self) -> bool | None:
        """The one definition of read-only, used by the badges, the index filter, the catalog and
        the MCP hints: True when the contract declares no mutation (`mutates: []`) and a risk level
        of 0; False when it declares a mutation or a risk level of 1 or more; None when it cannot
        be told (no `mutates` in the format, or a malformed `mutates` or `risk_level`)."""
        risk = self.risk_level
        if self.mutates or (isinstance(risk, int) and risk >= 1):
            return False
        if self.mutates is not None and risk == 0:
            return True
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "mutates": self.mutates,
            "text": self.text,
            "risk_level": self.risk_level,
            "approval": self.approval,
            "idempotent": self.idempotent,
            "cost_class": self.cost_class,
            "read_only": self.read_only,
            "requires": [r.as_dict() for r in self.requires],
        }


@dataclass(slots=True)
class Capability:
    name: str
    kind: str | None = None  # DETERMINISTIC | MODEL_BACKED | None when unknown
    summary: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "summary": self.summary}


_ABSENT: Any = object()

@dataclass(slots=True)
class Run:
    """One execution of an example (or a check) against a real implementation."""

    status: RunStatus
    detail: str = ""
    driver: str | None = None  # AIP-30 driver id, when run through one
    argv: list[str] = field(default_factory=list)
    actual: Any = None  # parsed output, when there was one
    has_actual: bool = False
    exit_code: int | None = None
    stderr: str = ""  # an excerpt, for the page
    duration_ms: int | None = None  # pages only: never in the catalog (it would break reproducibility)
    started: bool = False  # a process was started for it (counted in the build's statistics)
    sandbox: str | None = None  # the mechanism its process ran in ("bwrap", "landlock"); None: unsandboxed
    observed: Observed | None = None  # what its process was seen to do (sandboxed runs only)
    undeclared: list[str] = field(default_factory=list)  # effects the contract does not declare

    def to_json(self) -> dict[str, Any]:
        """The run as an outcome stores it (see conformance/outcome.py)."""
        out: dict[str, Any] = {"status": self.status.value, "detail": self.detail}
        if self.driver is not None:
            out["driver"] = self.driver
        if self.argv:
            out["argv"] = list(self.argv)
        if self.has_actual:
            out["actual"], out["has_actual"] = self.actual, True
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        if self.stderr:
            out["stderr"] = self.stderr
        if self.duration_ms is not None:
            out["duration_ms"] = self.duration_ms
        if self.started:
            out["started"] = True
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox
        if self.observed is not None:
            out["observed"] = self.observed.as_dict()
        if self.undeclared:
            out["undeclared"] = list(self.undeclared)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Run":
        return cls(
            status=RunStatus(data["status"]),
            detail=data.get("detail", ""),
            driver=data.get("driver"),
            argv=list(data.get("argv", [])),
            actual=data.get("actual"),
            has_actual=bool(data.get("has_actual", False)),
            exit_code=data.get("exit_code"),
            stderr=data.get("stderr", ""),
            duration_ms=data.get("duration_ms"),
            started=bool(data.get("started", False)),
            sandbox=data.get("sandbox"),
            observed=Observed.from_json(data["observed"]) if data.get("observed") is not None else None,
            undeclared=list(data.get("undeclared", [])),
        )


@dataclass(slots=True)
class Check:
    """A named conformance rule (smart tools) with its outcome."""

    id: str
    status: CheckStatus
    detail: str = ""
    spec: str = ""
    stderr: str = ""  # the end of the failing call's stderr, for the page (machine-specific: not in the catalog)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status.value, "detail": self.detail, "spec": self.spec}


@dataclass(slots=True)
class Example:
    """A worked example: an input and (usually) the output the contract promises."""

    title: str
    input: Any = _ABSENT
    output: Any = _ABSENT
    line: int | None = None
    note: str | None = None
    status: ExampleStatus = ExampleStatus.SKIPPED
    detail: str = ""
    runs: list[Run] = field(default_factory=list)  # one per implementation or driver it ran through

    @property
    def has_input(self) -> bool:
        return self.input is not _ABSENT

    @property
    def has_output(self) -> bool:
        return self.output is not _ABSENT


@dataclass(slots=True)
class Retry:
    """AIP-14 `retry` (or a driver's `retry_override`): None where the manifest does not say."""

    max_attempts: int | None = None
    backoff: str | None = None
    initial_ms: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"max_attempts": self.max_attempts, "backoff": self.backoff, "initial_ms": self.initial_ms}


@dataclass(slots=True)
class Execution:
    """How an AIP-14 contract asks to be executed: `timeout_ms`, `retry`, `default_implementation`,
    `driver_constraints` (`forbid`/`require_kind`: driver kinds) and `metadata`, as declared (None
    or empty where the contract does not say; malformed values are dropped, the schema reports them)."""

    timeout_ms: int | None = None
    retry: Retry | None = None
    default_implementation: str | None = None
    forbid_kinds: list[str] = field(default_factory=list)
    require_kinds: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def declared(self) -> bool:
        return bool(self.timeout_ms is not None or self.retry or self.default_implementation
                    or self.forbid_kinds or self.require_kinds or self.metadata)

    def as_dict(self) -> dict[str, Any]:
        return {
            "timeout_ms": self.timeout_ms,
            "retry": self.retry.as_dict() if self.retry else None,
            "default_implementation": self.default_implementation,
            "driver_constraints": {"forbid": list(self.forbid_kinds), "require_kind": list(self.require_kinds)},
            "metadata": self.metadata,
        }


@dataclass(slots=True)
class Access:
    """What a driver reaches and needs (AIP-30 universal and per-kind fields), as declared.
    `egress`/`region` None: not declared (AIP-30's default region is `global`, never assumed here)."""

    egress: list[str] | None = None  # `network.egress` (AIP-29: `sandbox.network.egress`)
    ingress: list[str] | None = None
    secrets: list[str] = field(default_factory=list)  # `auth.state.env`: environment variables it needs
    auth_paths: list[str] = field(default_factory=list)  # `auth.state.paths`: credential files it reads
    auth_ref: str | None = None  # `auth.ref` (an AIP-19 SECRETS.md)
    region: list[str] | None = None
    policy_tags: list[str] = field(default_factory=list)
    cost_override: dict[str, Any] | None = None  # the driver-level `cost_override`
    endpoint: str | None = None  # `kind: http`: the top-level `endpoint`
    method: str | None = None
    health_check: dict[str, Any] | None = None
    bin: str | None = None  # `kind: cli` (and an MCP server started from `bin`)
    bin_args: list[str] = field(default_factory=list)
    mcp_command: list[str] | None = None  # `kind: mcp`: the server's command line, when a `server`/`bin` gives one
    mcp_server: str | None = None  # `kind: mcp`: `server_ref`, `server.package`/`image`/`url`, as declared
    transport: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "egress": self.egress, "ingress": self.ingress, "secrets": list(self.secrets),
            "auth_paths": list(self.auth_paths), "auth_ref": self.auth_ref, "region": self.region,
            "policy_tags": list(self.policy_tags), "cost_override": self.cost_override,
            "endpoint": self.endpoint, "method": self.method, "health_check": self.health_check,
            "bin": self.bin, "bin_args": list(self.bin_args), "mcp_command": self.mcp_command,
            "mcp_server": self.mcp_server, "transport": self.transport,
        }


@dataclass(slots=True)
class Implementation:
    """One `implements[]` entry of a driver: which tool, which versions, how narrowed."""

    tool_ref: str
    version_range: str | None
    line: int | None = None
    drop_inputs: list[str] = field(default_factory=list)
    drop_outputs: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    timeout_override_ms: int | None = None
    retry_override: dict[str, Any] | None = None
    cost_override: dict[str, Any] | None = None
    tool_id: str | None = None  # filled in when the reference resolves

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool_ref,
            "tool_id": self.tool_id,
            "version": self.version_range,
            "drop_inputs": self.drop_inputs,
            "drop_outputs": self.drop_outputs,
            "metadata": self.metadata,
        }


@dataclass(slots=True)
class Driver(_Referable):
    """An AIP-30 DRIVER.md: a concrete way to execute one or more AIP-14 tools."""

    id: str
    name: str
    kind: str | None
    version: str | None
    description: str
    source: str
    abs_path: Path
    fields: dict[str, Any] = field(default_factory=dict)
    implements: list[Implementation] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    body: str = ""
    search_root: Path | None = None  # the folder the search found it in
    run_status: dict[str, str] = field(default_factory=dict)  # tool id -> "ran" or why it did not
    access: Access = field(default_factory=Access)  # what it reaches and needs (formats.access)

    @property
    def valid(self) -> bool:
        return not any(d.severity == ERROR for d in self.diagnostics)

    def entry_for(self, tool_id: str) -> Implementation | None:
        for entry in self.implements:
            if entry.tool_id == tool_id:
                return entry
        return None


@dataclass(slots=True)
class Tool(_Referable):
    """One tool contract, whatever format it was written in."""

    id: str
    name: str
    format: str
    source: str  # manifest path relative to the workspace root, "/" separators
    abs_path: Path
    version: str | None = None
    description: str = ""
    id_line: int | None = None  # the manifest line that gives the id, when one does
    body: str = ""
    body_line: int = 1
    inputs: Any = None
    outputs: Any = None
    effects: Effects = field(default_factory=Effects)
    platforms: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    kind: str | None = None  # DETERMINISTIC | MODEL_BACKED | "mixed" | None (unknown)
    capabilities: list[Capability] = field(default_factory=list)
    use_cases: list[str] = field(default_factory=list)  # smart tools' "when to use this" list
    examples: list[Example] = field(default_factory=list)
    drivers: list[Driver] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)  # front matter as parsed
    extra: dict[str, Any] = field(default_factory=dict)  # keys the format does not define
    implementations: list[str] = field(default_factory=list)  # <platform>.<ext> files (`Format.implementations`)
    page_body: str | None = None  # the body as its page shows it when the parser set it apart; None: `body`
    schema_ok: dict[str, bool] = field(default_factory=dict)  # "inputs"/"outputs": usable to validate against
    descriptor: dict[str, Any] | None = None  # smart-tool.json, when there is one
    descriptor_source: str | None = None
    upstream: dict[str, str] | None = None  # a smart-tool catalog copy's source.json: repository, ref, path
    checks: list[Check] = field(default_factory=list)  # smart tools' conformance rules
    lines: dict[str, int] = field(default_factory=dict)  # front-matter paths ("inputs/properties/x") -> line, for quality findings
    capability_help: dict[str, str] = field(default_factory=dict)  # `<cli> <capability> --help` text
    status: Status = Status.NOT_RUN
    status_detail: str = ""  # why, for statuses other than passed/failed
    processes: int = 0  # processes started to produce its results (cached results keep their count)
    # Where the tool lives in a site, decided once per build by `placement.place`:
    page: str = ""  # source path of its page, e.g. "tools/text.echo.md"
    url: str = ""  # the page's URL relative to the site root, e.g. "tools/text.echo/"
    json_path: str | None = None  # site path of its JSON file; None when per-tool files are off
    sandbox: SandboxReport | None = None  # how its processes ran and what they did; None: none started
    execution: Execution = field(default_factory=Execution)  # AIP-14 timeout/retry/routing fields

    @property
    def valid(self) -> bool:
        return not any(d.severity == ERROR for d in self.diagnostics)

    @property
    def dir(self) -> Path:
        return self.abs_path.parent

    @property
    def format_info(self) -> Format:
        """Its format's registry entry: what pages, checks and diffs ask instead of its name."""
        return formatregistry.of(self.format)

    @property
    def format_label(self) -> str:
        """Its format's short name, for a row about this tool ("AIP-14")."""
        return self.format_info.label

    @property
    def format_title(self) -> str:
        """Its format's long name ("agentproto AIP-14")."""
        return self.format_info.title

    @property
    def shown_body(self) -> str:
        """The body its page shows (`page_body` when the parser set one)."""
        return self.body if self.page_body is None else self.page_body

    @property
    def timeout_ms(self) -> int | None:
        """A run's time limit: the contract's positive `timeout_ms`, else its format's default."""
        value = self.fields.get("timeout_ms")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        return self.format_info.default_timeout_ms

    def error(self, message: str, line: int | None = None, code: str = "") -> None:
        self.diagnostics.append(Diagnostic(ERROR, message, self.source, line, code))

    def warning(self, message: str, line: int | None = None, code: str = "") -> None:
        self.diagnostics.append(Diagnostic(WARNING, message, self.source, line, code))


def invalid_reason(tool: Tool) -> str:
    """Why an invalid tool is invalid, in one line: its first error, and how many more there
    are. This comes first wherever a status is explained (catalog, `check` table, pages); what a
    run could not do ("no linux.<ext>", "no `examples`") is secondary for an invalid tool."""
    errors = [d for d in tool.diagnostics if d.severity == ERROR]
    if not errors:
        return ""
    more = f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return errors[0].message + more


@dataclass
class SearchScope:
    """Where the harvest looked for manifests and what for, so an empty catalog can say so."""

    roots: list[str] = field(default_factory=list)  # workspace-relative folders or files; "." is the workspace
    patterns: list[tuple[str, str]] = field(default_factory=list)  # (glob, what it finds)
    exclude: list[str] = field(default_factory=list)  # the `exclude` option's patterns
    skipped: list[str] = field(default_factory=list)  # folders never searched (the site's docs and output)


@dataclass
class Catalog:
    """Everything harvested from one workspace."""

    root: Path
    tools: list[Tool] = field(default_factory=list)
    drivers: list[Driver] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # catalog-level problems
    search: SearchScope = field(default_factory=SearchScope)
    notes: list["Note"] = field(default_factory=list)  # about the build itself (the parse cache): logged, never published

    def tool(self, tool_id: str) -> Tool | None:
        for tool in self.tools:
            if tool.id == tool_id:
                return tool
        return None

    def all_diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic once: tools', their drivers', and catalog-level ones."""
        seen: set[int] = set()
        out: list[Diagnostic] = []
        for tool in self.tools:
            out.extend(tool.diagnostics)
        for driver in self.drivers:
            out.extend(driver.diagnostics)
        out.extend(self.diagnostics)
        unique = []
        for d in out:
            if id(d) not in seen:
                seen.add(id(d))
                unique.append(d)
        return unique


@dataclass(frozen=True)
class Note:
    """A line for the build's log about the build itself, not about a manifest (a cache entry not
    used, a results file missing): never published. `warning`: logged as a warning, else as info."""

    text: str
    warning: bool = True
