"""The plugin's options and every rule about them, for every host.

`Options` is what the library reads. `Options.from_mapping` turns the raw
`plugins: - toolcatalog: {...}` mapping of a mkdocs.yml into Options, applying
each option's rule (`check_value`) and then the rules that involve several
options (`check`). The MkDocs `Config` class (config.py) calls the same
functions, and so do the command line and any other host, so a bad value is
refused everywhere with the same message.

The user-facing documentation of each option is the docstring in config.py
(and docs/configuration.md); the comments here say what the library does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping, cast

from .statuses import COVERAGE_GATES, QUALITY_CODES, Status

DEFAULT_MAX_MANIFEST_BYTES = 1024 * 1024
MIN_MANIFEST_BYTES = 1024
CATALOG_SCHEMA_SITE_PATH = "schemas/catalog-v2.schema.json"  # published beside the catalog
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESULTS_KEY_VARIABLE = "TOOLCATALOG_RESULTS_KEY"


class OptionsError(ValueError):
    """An option value no host accepts. The message names the option and the problem; `option` is
    the option a host should point at (for a rule across options, the one that clashes)."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


@dataclass
class Options:
    enabled: bool = True
    paths: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_manifest_bytes: int = DEFAULT_MAX_MANIFEST_BYTES
    page_dir: str = "tools"
    catalog_file: str = "catalog.json"
    tool_json_dir: str = "tools"  # "." = the site root
    mcp_file: str = "mcp-tools.json"
    llms_file: str = "llms.txt"
    source_uri: str | None = None
    nav_title: str = "Tool catalog"
    nav_tools: bool | int = 100
    # Running examples and checks (conformance)
    run_examples: bool = True
    timeout: float = 30.0  # seconds per process; a tool's smaller timeout_ms wins
    jobs: int = 0  # parallel processes; 0 = number of CPUs
    cache: bool = True
    # None: outside the workspace, in the user cache folder (see sealing.default_cache_dir), where no
    # commit can put a file; relative: to the workspace (mkdocs.yml's folder)
    cache_dir: str | None = None
    allow_mutating: list[str] = field(default_factory=list)  # globs of tool ids allowed to run despite mutates/approval
    env: list[str] = field(default_factory=list)  # environment variables passed to tools besides the allowlist
    max_output_bytes: int = 1024 * 1024  # stdout cap per process
    fail_on: list[str] = field(default_factory=list)  # tool statuses and quality codes that fail the build (a FailOn)
    # Sandbox for example processes (issue: sandboxed runs)
    sandbox: str = "auto"  # auto | required | bubblewrap | off
    allow_network: list[str] = field(default_factory=list)  # globs of tool ids whose runs may use the network
    sandbox_workspace: str | list[str] = "tool"  # what a run sees of the workspace: tool | all | [folders]
    sandbox_memory_mb: int = 2048  # per process (RLIMIT_DATA); 0 = not capped
    sandbox_processes: int = 256  # per run, where the kernel counts them (RLIMIT_NPROC); 0 = not capped
    sandbox_file_mb: int = 1024  # the largest file a run may write (RLIMIT_FSIZE); 0 = not capped
    # The MCP tools/list result
    mcp_ttl_ms: int = 3_600_000  # how long a client may cache the list
    mcp_cache_scope: str = "public"  # public | private
    mcp_exclude: list[str] = field(default_factory=list)  # tool statuses left out of mcp-tools.json
    mcp_list: str = "usable"  # usable: only tools an agent can use (claims.Claims.usable); all: every valid tool
    # Results produced elsewhere (sharded CI jobs): files, folders or globs
    results: list[str] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> "Options":
        """Options from a mkdocs.yml mapping. Raises OptionsError for the first bad option, in the
        order the options are declared (MkDocs stops at the first one too), then for the rules
        across options. Keys that are not options are ignored here; hosts warn about them."""
        raw = dict(raw or {})
        values = {name: check_value(name, raw[name]) for name in RULES if name in raw}
        options = cls(**values)
        check(options)
        return options

    def replace(self, **changes: Any) -> "Options":
        """A copy with some options changed, each checked by its rule and then all together."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for key, value in changes.items():
            values[key] = check_value(key, value)
        options = Options(**values)
        check(options)
        return options


# -- one rule per option -----------------------------------------------------------------------------
def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionsError(f"`{name}` must be true or false, not {value!r}")
    return value


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise OptionsError(f"`{name}` must be text, not {value!r}")
    return value


def _optional_text(name: str, value: Any) -> str | None:
    return None if value is None else _text(name, value)


def _texts(name: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise OptionsError(f"`{name}` must be a list of text values, not {value!r}")
    return list(value)


def _integer(name: str, minimum: int) -> Callable[[str, Any], int]:
    def rule(_name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise OptionsError(f"`{name}` must be a whole number of at least {minimum}, not {value!r}")
        return value

    return rule


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
        raise OptionsError(f"`{name}` must be a number of seconds greater than 0, not {value!r}")
    return float(value)


def _nav_tools(name: str, value: Any) -> bool | int:
    if isinstance(value, bool) or (isinstance(value, int) and value >= 0):
        return value
    raise OptionsError(f"`{name}` must be true, false or a whole number of tools, not {value!r}")


def _page_dir(name: str, value: Any) -> str:
    text = _text(name, value).strip()
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or text.startswith("/") or "\\" in text or _drive(text) or os.path.isabs(text):
        raise OptionsError(f"`{name}` must be a relative folder inside the site, not {value!r}")
    return "/".join(parts)


def _drive(text: str) -> bool:
    return bool(re.match(r"^[A-Za-z]:", text))


def _output(name: str, *, folder: bool = False) -> Callable[[str, Any], str]:
    """A site path of an output; "" (or null) turns the output off."""

    def rule(_name: str, value: Any) -> str:
        if value is None or value is False:
            return ""
        text = _text(name, value).strip()
        if not text:
            return ""
        if text.startswith("/") or "\\" in text or _drive(text) or os.path.isabs(text):
            raise OptionsError(f"`{name}` must be a path inside the site (or \"\" to turn it off), not {value!r}")
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise OptionsError(f"`{name}` must be a path inside the site (or \"\" to turn it off), not {value!r}")
        if not parts:
            if folder:
                return "."  # the site root
            raise OptionsError(f"`{name}` must name a file, not {value!r}")
        if not folder and text.endswith("/"):
            raise OptionsError(f"`{name}` must name a file, not a folder: {value!r}")
        return "/".join(parts)

    return rule


def _env_names(name: str, value: Any) -> list[str]:
    names = _texts(name, value)
    for item in names:
        if not _ENV_NAME.match(item):
            raise OptionsError(f"`{name}` entry {item!r} is not an environment variable name")
        if item.upper() == _RESULTS_KEY_VARIABLE:  # (sealing.ENV_KEY; options sits below sealing)
            raise OptionsError(f"`{name}` cannot pass {item}: whoever holds the results key can forge results, "
                               "so it never reaches a tool")
    return names


def _statuses(name: str, value: Any) -> list[str]:
    items = _texts(name, value)
    for item in items:
        if item not in Status.values():
            raise OptionsError(f"`{name}` entry {item!r} is not a tool status (one of {', '.join(Status.values())})")
    return items


class FailOn(list[str]):
    """The `fail_on` option: the statuses and quality finding codes listed (the list itself, as
    before thresholds existed), plus `coverage_below`: {dimension or "total": lowest score allowed}."""

    def __init__(self, items: Iterable[str] = (), coverage_below: dict[str, float] | None = None):
        super().__init__(items)
        self.coverage_below: dict[str, float] = dict(coverage_below or {})

    def __eq__(self, other: object) -> bool:
        return list.__eq__(self, other) and getattr(other, "coverage_below", {}) == self.coverage_below

    __hash__ = None

    def __repr__(self) -> str:
        return f"FailOn({list(self)!r}, coverage_below={self.coverage_below!r})"


def _fail_on(name: str, value: Any) -> FailOn:
    """A list of tool statuses and quality codes, where an item may also be `{coverage_below: ...}`;
    or a mapping with `status`, `codes` and `coverage_below` keys. `coverage_below` is a score from
    0 to 1 (for the total) or a mapping of `total` and dimension names to scores."""
    if isinstance(value, FailOn):
        return value
    if value is None:
        return FailOn()
    items: list[Any]
    thresholds: dict[str, float] = {}
    if isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in ("status", "codes", "coverage_below"))
        if unknown:
            raise OptionsError(f"`{name}` has no key {unknown[0]!r} (it takes status, codes and coverage_below)")
        items = [*_texts(name, value.get("status")), *_texts(name, value.get("codes"))]
        if "coverage_below" in value:
            thresholds = _coverage_below(name, value["coverage_below"])
    elif isinstance(value, list):
        items = []
        for item in value:
            if isinstance(item, Mapping) and set(item) == {"coverage_below"}:
                thresholds.update(_coverage_below(name, item["coverage_below"]))
            else:
                items.append(item)
    else:
        raise OptionsError(f"`{name}` must be a list of tool statuses and quality codes, or a mapping, not {value!r}")
    allowed = [*Status.values(), *QUALITY_CODES]
    for item in items:
        if not isinstance(item, str) or item not in allowed:
            raise OptionsError(f"`{name}` entry {item!r} is not a tool status (one of {', '.join(Status.values())}) "
                               f"or a quality code (one of {', '.join(QUALITY_CODES)})")
    return FailOn(items, thresholds)


def _coverage_below(name: str, value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        value = {"total": value}
    out: dict[str, float] = {}
    for key, score in value.items():
        if key not in COVERAGE_GATES:
            raise OptionsError(f"`{name}`: `coverage_below` has no dimension {key!r} (one of {', '.join(COVERAGE_GATES)})")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise OptionsError(f"`{name}`: `coverage_below` {key} must be a score from 0 to 1, not {score!r}")
        out[key] = float(score)
    return out


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[str, Any], str]:
    def rule(_name: str, value: Any) -> str:
        if value not in choices:
            raise OptionsError(f"`{name}` must be one of {', '.join(choices)}, not {value!r}")
        return cast(str, value)  # one of `choices`

    return rule


def _cache_dir(name: str, value: Any) -> str | None:
    if value is None:
        return None  # the default: the user cache folder
    text = _text(name, value).strip()
    if not text:
        raise OptionsError(f"`{name}` must name a folder, not {value!r}")
    return text


def _sandbox_workspace(name: str, value: Any) -> str | list[str]:
    """`tool`, `all`, or folders relative to mkdocs.yml's folder (never outside it)."""
    if value in ("tool", "all"):
        return cast(str, value)
    folders = _texts(name, value) if isinstance(value, list) else None
    if folders is None:
        raise OptionsError(f"`{name}` must be tool, all or a list of folders of the workspace, not {value!r}")
    out = []
    for item in folders:
        parts = [p for p in item.strip().split("/") if p not in ("", ".")]
        if not parts or ".." in parts or item.strip().startswith("/") or "\\" in item or _drive(item) or os.path.isabs(item):
            raise OptionsError(f"`{name}` entry {item!r} must be a folder inside the workspace")
        out.append("/".join(parts))
    return out


RULES: dict[str, Callable[[str, Any], Any]] = {
    "enabled": _bool,
    "paths": _texts,
    "exclude": _texts,
    "page_dir": _page_dir,
    "catalog_file": _output("catalog_file"),
    "tool_json_dir": _output("tool_json_dir", folder=True),
    "mcp_file": _output("mcp_file"),
    "llms_file": _output("llms_file"),
    "source_uri": _optional_text,
    "max_manifest_bytes": _integer("max_manifest_bytes", MIN_MANIFEST_BYTES),
    "nav_title": _text,
    "nav_tools": _nav_tools,
    "run_examples": _bool,
    "timeout": _seconds,
    "jobs": _integer("jobs", 0),
    "cache": _bool,
    "cache_dir": _cache_dir,
    "allow_mutating": _texts,
    "env": _env_names,
    "max_output_bytes": _integer("max_output_bytes", 1024),
    "fail_on": _fail_on,
    "sandbox": _choice("sandbox", ("auto", "required", "bubblewrap", "off")),
    "allow_network": _texts,
    "sandbox_workspace": _sandbox_workspace,
    "sandbox_memory_mb": _integer("sandbox_memory_mb", 0),
    "sandbox_processes": _integer("sandbox_processes", 0),
    "sandbox_file_mb": _integer("sandbox_file_mb", 0),
    "mcp_ttl_ms": _integer("mcp_ttl_ms", 0),
    "mcp_cache_scope": _choice("mcp_cache_scope", ("public", "private")),
    "mcp_exclude": _statuses,
    "mcp_list": _choice("mcp_list", ("usable", "all")),
    "results": _texts,
}
assert set(RULES) == {f.name for f in fields(Options)}, "every option has exactly one rule"


def check_value(name: str, value: Any) -> Any:
    """One option's value, normalized, or OptionsError."""
    return RULES[name](name, value)


def default(name: str) -> Any:
    """An option's default value (a fresh copy for lists)."""
    return getattr(Options(), name)


# -- rules across options ----------------------------------------------------------------------------
@dataclass(frozen=True)
class OutputPaths:
    """Where each output for agents goes in the site; None when it is off."""

    catalog: str | None
    tool_json_dir: str | None  # "." = the site root
    mcp: str | None
    llms: str | None

    @property
    def schema(self) -> str | None:
        """The published catalog schema: whenever a catalog or per-tool files are."""
        return CATALOG_SCHEMA_SITE_PATH if self.catalog is not None or self.tool_json_dir is not None else None

    def named(self) -> dict[str, str | None]:
        """{option name: site path, None when off} of the single-file outputs, written once here."""
        return {"catalog_file": self.catalog, "mcp_file": self.mcp, "llms_file": self.llms, "(the catalog schema)": self.schema}

    def files(self) -> dict[str, str]:
        """{site path: what it is} of the single-file outputs that are on."""
        return {path: name for name, path in self.named().items() if path is not None}


def output_paths(options: Options) -> OutputPaths:
    return OutputPaths(
        catalog=options.catalog_file or None,
        tool_json_dir=options.tool_json_dir or None,
        mcp=options.mcp_file or None,
        llms=options.llms_file or None,
    )


def check(options: Options) -> None:
    """The rules that involve several options. Raises OptionsError."""
    paths = output_paths(options)
    seen: dict[str, str] = {}
    for name, path in paths.named().items():
        if path is None:
            continue
        if path in seen:
            raise OptionsError(f"`{name}` and `{seen[path]}` are both {path!r}; give each output its own file", name)
        seen[path] = name
