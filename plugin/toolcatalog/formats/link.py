"""Cross-manifest checks: duplicate ids, and attaching AIP-30 drivers to AIP-14 tools.

A driver's own problems are diagnostics on the driver (and so in the catalog
under the tool's `drivers`); they never change the validity of the tool it
implements. A driver that implements nothing in the catalog is a
catalog-level diagnostic, since no tool page would show it; one that implements
some tools here and others that are absent stays valid, with a warning.

A driver's `tool:` path that does not resolve is still attached when it names one
existing tool by a conventional variant of its path (agentproto's own examples write
`./tools/image-create/TOOL.md` for a tool kept at `.tools/image.create/TOOL.md`): a
warning says which TOOL.md was used. Otherwise the error names the closest paths.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Callable

import nodesemver  # no stubs or py.typed: pyproject.toml's [tool.mypy] override ignores its missing types

from . import aip14
from ..model import ERROR, WARNING, Catalog, Diagnostic, Driver, Implementation, Tool

COST_ORDER = {"trivial": 0, "metered": 1, "expensive": 2}


def link(catalog: Catalog) -> None:
    _duplicate_ids(catalog)
    contracts = [t for t in catalog.tools if t.format == "aip-14"]
    folders: dict[str, list[Tool]] = {}  # tool folder name as `_folder_key` spells it -> tools
    for tool in contracts:
        folders.setdefault(_folder_key(tool.abs_path.parent.name), []).append(tool)
    ids: dict[str, list[Tool]] = {}  # tool id as `_folder_key` spells it -> tools
    for tool in contracts:
        ids.setdefault(_folder_key(tool.id), []).append(tool)
    by_path = {os.path.realpath(t.abs_path): t for t in contracts}
    by_id: dict[str, Tool] = {}
    for tool in catalog.tools:
        if tool.format == "aip-14":
            by_id.setdefault(tool.id, tool)
    attached_to: dict[int, set[int]] = {}  # id(tool) -> id(driver): identity, not dataclass equality (O(1))
    for driver in catalog.drivers:
        attached = False
        absent: list[tuple[Implementation, str]] = []  # entries naming no tool here, with what is close
        for entry in driver.implements:
            found = _resolve(entry, driver, catalog.root, by_path, by_id)
            if found is None:
                found = _variant(entry, driver, catalog.root, by_path, folders, ids)
                if found is not None:
                    driver.diagnostics.append(_variant_note(entry, driver, found))
            if found is None:
                absent.append((entry, _closest(entry.tool_ref, driver, catalog.root, contracts, folders)))
                continue
            tool = found
            entry.tool_id = tool.id
            try:
                _check_entry(driver, entry, tool)
            except Exception as exc:  # a bug this pair triggers: say so on the driver, link the rest
                driver.diagnostics.append(
                    Diagnostic(ERROR, f"internal error while checking this entry ({type(exc).__name__}: {str(exc)[:200]}); please report it",
                               driver.source, entry.line, "internal-error")
                )
            seen = attached_to.setdefault(id(tool), set())
            if id(driver) not in seen:
                seen.add(id(driver))
                tool.drivers.append(driver)
            attached = True
        _report_absent(driver, absent, attached)
        if not attached:
            catalog.diagnostics.append(
                Diagnostic(
                    ERROR if driver.implements else WARNING,
                    f"driver {driver.id!r} implements no tool in this catalog, so no page shows it",
                    driver.source,
                    None,
                    "driver-orphan",
                )
            )
    for tool in catalog.tools:
        tool.drivers.sort(key=lambda d: (d.id, d.source))
        _check_default_implementation(tool)


def _report_absent(driver: Driver, absent: list[tuple[Implementation, str]], attached: bool) -> None:
    """Entries naming tools not in this catalog. A driver that implements nothing here has an
    error per entry; one that implements some tools here stays valid for them (a team often
    publishes a subset of what a shared driver implements), with one warning naming the rest."""
    if not absent:
        return
    what = "which is not an AIP-14 TOOL.md path or id in this catalog"
    if not attached:
        for entry, closest in absent:
            driver.diagnostics.append(Diagnostic(
                ERROR, f"`implements` names tool {entry.tool_ref!r}, {what}{closest}", driver.source, entry.line, "driver-unresolved"))
        return
    named = "; ".join(f"{entry.tool_ref!r}" + (f" (line {entry.line})" if entry.line else "") + closest for entry, closest in absent)
    tools = "tool" if len(absent) == 1 else "tools"
    driver.diagnostics.append(Diagnostic(
        WARNING,
        f"`implements` names {len(absent)} {tools} not in this catalog: {named}; the driver is kept for the tools it "
        "implements here",
        driver.source, absent[0][0].line, "driver-tools-absent",
    ))


def _duplicate_ids(catalog: Catalog) -> None:
    groups: dict[str, list[Tool]] = {}
    for tool in catalog.tools:
        groups.setdefault(tool.id, []).append(tool)
    for tool_id, tools in sorted(groups.items()):
        if len(tools) < 2:
            continue
        # The paths once, at the catalog level; each tool names the count and one other path (N
        # tools each listing the N-1 others would be N² text).
        sources = ", ".join(t.source for t in tools)
        catalog.diagnostics.append(
            Diagnostic(ERROR, f"{len(tools)} tools share the id {tool_id!r}: {sources}", tools[0].source, None, "duplicate-id")
        )
        for tool in tools:
            tool.error(_shared(f"the id {tool_id!r}", tool, tools) + "; ids must be unique in a catalog", None, "duplicate-id")
    by_driver_id: dict[str, list[Driver]] = {}
    for driver in catalog.drivers:
        by_driver_id.setdefault(driver.id, []).append(driver)
    for driver_id, drivers in sorted(by_driver_id.items()):
        if len(drivers) < 2:
            continue
        for driver in drivers:
            driver.diagnostics.append(
                Diagnostic(ERROR, _shared(f"the driver id {driver_id!r}", driver, drivers), driver.source, None, "duplicate-id")
            )


def _variant_note(entry: Implementation, driver: Driver, tool: Tool) -> Diagnostic:
    return Diagnostic(
        WARNING,
        f"`implements` names tool `{entry.tool_ref}`, which does not exist; it was attached to "
        f"`{tool.source}` (`{tool.id}`), the one AIP-14 TOOL.md that path can mean: write that path",
        driver.source, entry.line, "driver-path-variant",
    )


def _shared(what: str, item: object, group: list[Any]) -> str:
    """"the id 'x' is also used by a/TOOL.md", or with more: "... is used by 5 manifests: this one,
    a/TOOL.md and 3 more (all listed in the catalog's problems)"."""
    others = [other.source for other in group if other is not item]
    if len(others) == 1:
        return f"{what} is also used by {others[0]}"
    return f"{what} is used by {len(group)} manifests: this one, {others[0]} and {len(others) - 1} more (all listed in the catalog's problems)"


def _resolve(entry: Implementation, driver: Driver, root: Path, by_path: dict[str, Tool], by_id: dict[str, Tool]) -> Tool | None:
    ref = entry.tool_ref.strip()
    if ref.endswith(".md") or "/" in ref:
        # A workspace-relative path. The agentproto workspace is the folder holding `.drivers/`
        # (or `.tools/`); the harvest root and the folder searched come next, then the driver's own
        # folder, which some authors assume.
        for base in (*_workspaces(driver.abs_path), root, driver.search_root, driver.abs_path.parent):
            if base is None:
                continue
            candidate = os.path.realpath(base / ref)
            if candidate in by_path:
                return by_path[candidate]
        return None
    return by_id.get(ref)


def _workspaces(path: Path) -> list[Path]:
    parents = list(path.parents)
    return [parent.parent for parent in parents if parent.name in (".drivers", ".tools", ".cli")][:1]


def _folder_key(name: str) -> str:
    """A tool folder or id as a path variant may spell it: `image.create` and `image-create` alike."""
    return name.lower().replace(".", "-")


def _variant(entry: Implementation, driver: Driver, root: Path, by_path: dict[str, Tool],
             folders: dict[str, list[Tool]], ids: dict[str, list[Tool]]) -> Tool | None:
    """The one AIP-14 tool an unresolved `tool:` path names by a conventional variant, or None.

    Variants: `tools/X/TOOL.md` for `.tools/X/TOOL.md` (the same path under AIP-14's hidden folder),
    or a folder named after the tool's folder or id with `-` for `.` (`tools/image-create/TOOL.md`
    for `.tools/image.create/`). Only a path under a `tools` or `.tools` folder (or a bare folder
    name) is read this way, and only when exactly one tool fits."""
    ref = entry.tool_ref.strip()
    if not (ref.endswith(".md") or "/" in ref):
        return None
    parts = [p for p in PurePosixPath(ref).parts if p not in (".", "/")]
    if parts and parts[-1] == "TOOL.md":
        parts = parts[:-1]
    if not parts or any(p == ".." for p in parts) or (len(parts) > 1 and parts[-2] not in ("tools", ".tools")):
        return None
    hidden = [".tools" if p == "tools" else p for p in parts]
    for base in (*_workspaces(driver.abs_path), root):
        candidate = os.path.realpath(base.joinpath(*hidden, "TOOL.md"))
        if candidate in by_path:
            return by_path[candidate]
    wanted = _folder_key(parts[-1])
    by_folder = folders.get(wanted, [])
    if by_folder:  # two tools in folders of that name: which one is not for us to guess
        return by_folder[0] if len(by_folder) == 1 else None
    by_id = ids.get(wanted, [])
    return by_id[0] if len(by_id) == 1 else None


def _closest(ref: str, driver: Driver, root: Path, contracts: list[Tool], folders: dict[str, list[Tool]]) -> str:
    """What to suggest for an unresolved reference: "; the closest: `a`, `b`" (AIP-14 TOOL.md paths
    as the driver would write them, from its workspace, or tool ids when it named an id), else where
    the catalog's AIP-14 tools are. Paths are compared by their tool folder's name, the part that
    tells tools apart."""
    if not contracts:
        return "; the catalog has no AIP-14 tool"
    ref = ref.strip()
    base = (_workspaces(driver.abs_path) or [root])[0]
    if ref.endswith(".md") or "/" in ref:
        parts = [p for p in PurePosixPath(ref).parts if p not in (".", "/")]
        name = _folder_key(parts[-2] if len(parts) > 1 and parts[-1] == "TOOL.md" else parts[-1] if parts else "")
        close = difflib.get_close_matches(name, sorted(folders), n=3, cutoff=0.75)
        found = sorted({_written(t, base) for key in close for t in folders[key]})[:3]
    else:
        found = difflib.get_close_matches(ref, sorted({t.id for t in contracts}), n=3, cutoff=0.75)
    if found:
        return "; the closest: " + ", ".join(f"`{c}`" for c in found)
    places = sorted({str(PurePosixPath(_written(t, base)).parent.parent) for t in contracts})
    where = ", ".join(f"`{p}/`" for p in places[:3]) + (f" and {len(places) - 3} more folders" if len(places) > 3 else "")
    return f"; no AIP-14 tool here has a name close to it (they are in {where})"


def _written(tool: Tool, base: Path) -> str:
    """The tool's TOOL.md as a driver in workspace `base` would write it."""
    return Path(os.path.relpath(tool.abs_path, base)).as_posix()


Report = Callable[[str, str], None]  # (message, code): an error on the driver's `implements[]` entry


def _check_entry(driver: Driver, entry: Implementation, tool: Tool) -> None:
    def problem(message: str, code: str) -> None:
        driver.diagnostics.append(Diagnostic(ERROR, message, driver.source, entry.line, code))

    _check_narrowing(entry, tool, problem)
    _check_version(entry, tool, problem)
    _check_kind(driver, tool, problem)
    _check_timeout(driver, entry, tool, problem)
    _check_retry(driver, entry, tool, problem)
    _check_cost(driver, entry, tool, problem)


def _check_narrowing(entry: Implementation, tool: Tool, problem: Report) -> None:
    for key, names in (("inputs", entry.drop_inputs), ("outputs", entry.drop_outputs)):
        schema = getattr(tool, key)
        schema = schema if isinstance(schema, dict) else {}
        # The contract may be invalid (`properties: [..]`, `required: 5`): only well-formed parts count.
        properties = schema.get("properties")
        declared = set(properties) if isinstance(properties, dict) else set()
        for name in names:
            if name not in declared:
                problem(f"`schema_narrowing.drop_{key}` names {name!r}, which {tool.id!r} does not declare in `{key}`", "driver-narrowing")
        if key == "inputs":
            listed = schema.get("required")
            required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
            for name in names:
                if name in required:
                    problem(f"`schema_narrowing.drop_inputs` drops {name!r}, which {tool.id!r} requires", "driver-narrowing")


def _check_version(entry: Implementation, tool: Tool, problem: Report) -> None:
    if not (entry.version_range and tool.version):
        return
    valid_range, satisfied = _admits(entry.version_range, tool.version)
    if not valid_range:
        problem(f"`version` {entry.version_range!r} is not a valid semver range", "driver-version")
    elif not satisfied:
        problem(f"`version` range {entry.version_range!r} does not admit {tool.id!r} version {tool.version}", "driver-version")


def _check_kind(driver: Driver, tool: Tool, problem: Report) -> None:
    forbid, require = tool.execution.forbid_kinds, tool.execution.require_kinds
    if driver.kind and driver.kind in forbid:
        problem(f"{tool.id!r} forbids `{driver.kind}` drivers (`driver_constraints.forbid`)", "driver-kind")
    if driver.kind and require and driver.kind not in require:
        problem(f"{tool.id!r} requires a driver of kind {', '.join(require)} (`driver_constraints.require_kind`), not `{driver.kind}`", "driver-kind")


def _check_timeout(driver: Driver, entry: Implementation, tool: Tool, problem: Report) -> None:
    tool_timeout = aip14.timeout_ms(tool)
    for where, value in (("timeout_override_ms", driver.fields.get("timeout_override_ms")), ("implements[].timeout_override_ms", entry.timeout_override_ms)):
        if isinstance(value, int) and not isinstance(value, bool) and value > tool_timeout:
            problem(f"`{where}` {value} widens the tool's timeout of {tool_timeout} ms; drivers may only narrow it", "driver-widens")


def _check_retry(driver: Driver, entry: Implementation, tool: Tool, problem: Report) -> None:
    tool_retry = tool.fields.get("retry")
    if not isinstance(tool_retry, dict):
        return
    for where, value in (("retry_override", driver.fields.get("retry_override")), ("implements[].retry_override", entry.retry_override)):
        if isinstance(value, dict):
            mine, theirs = value.get("max_attempts"), tool_retry.get("max_attempts")
            if isinstance(mine, int) and isinstance(theirs, int) and mine > theirs:
                problem(f"`{where}.max_attempts` {mine} widens the tool's {theirs} attempts; drivers may only narrow it", "driver-widens")


def _check_cost(driver: Driver, entry: Implementation, tool: Tool, problem: Report) -> None:
    tool_cost = tool.fields.get("cost_class", "trivial")
    if not isinstance(tool_cost, str) or tool_cost not in COST_ORDER:
        return
    for where, value in (("cost_override", driver.fields.get("cost_override")), ("implements[].cost_override", entry.cost_override)):
        cost = value.get("cost_class") if isinstance(value, dict) else None
        if isinstance(cost, str) and cost in COST_ORDER and COST_ORDER[cost] > COST_ORDER[tool_cost]:
            problem(f"`{where}.cost_class` {cost!r} is costlier than the tool's {tool_cost!r}; drivers may only narrow it", "driver-widens")


@lru_cache(maxsize=4096)
def _admits(version_range: str, version: str) -> tuple[bool, bool]:
    """(the range is valid, it admits `version`). Cached: drivers repeat the same few ranges, and
    node-semver takes most of a millisecond for each answer."""
    try:
        # satisfies() answers False for a range it cannot parse; say that it is the range that is wrong.
        valid_range = nodesemver.valid_range(version_range, loose=False) is not None
        return valid_range, valid_range and nodesemver.satisfies(version, version_range, loose=False)
    except (ValueError, TypeError, RecursionError):
        return False, False


def _check_default_implementation(tool: Tool) -> None:
    if tool.format != "aip-14":
        return
    default = tool.fields.get("default_implementation")
    if isinstance(default, str) and default not in {d.id for d in tool.drivers}:
        known = ", ".join(sorted({d.id for d in tool.drivers})) or "none"
        tool.warning(
            f"`default_implementation` {default!r} names no driver of this tool in the catalog (drivers: {known})",
            None,
            "default-implementation",
        )
