"""Cross-manifest checks: duplicate ids, and attaching AIP-30 drivers to AIP-14 tools.

A driver's own problems are diagnostics on the driver (and so in the catalog
under the tool's `drivers`); they never change the validity of the tool it
implements. A driver that implements nothing in the catalog is a
catalog-level diagnostic, since no tool page would show it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import nodesemver

from . import aip14
from ..model import ERROR, WARNING, Catalog, Diagnostic, Driver, Implementation, Tool

COST_ORDER = {"trivial": 0, "metered": 1, "expensive": 2}


def link(catalog: Catalog) -> None:
    _duplicate_ids(catalog)
    by_path = {os.path.realpath(t.abs_path): t for t in catalog.tools if t.format == "aip-14"}
    by_id: dict[str, Tool] = {}
    for tool in catalog.tools:
        if tool.format == "aip-14":
            by_id.setdefault(tool.id, tool)
    attached_to: dict[int, set[int]] = {}  # id(tool) -> id(driver): identity, not dataclass equality (O(1))
    for driver in catalog.drivers:
        attached = False
        for entry in driver.implements:
            tool = _resolve(entry, driver, catalog.root, by_path, by_id)
            if tool is None:
                driver.diagnostics.append(
                    Diagnostic(
                        ERROR,
                        f"`implements` names tool {entry.tool_ref!r}, which is not an AIP-14 TOOL.md path or id in this catalog",
                        driver.source,
                        entry.line,
                        "driver-unresolved",
                    )
                )
                continue
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


def _duplicate_ids(catalog: Catalog) -> None:
    groups: dict[str, list[Tool]] = {}
    for tool in catalog.tools:
        groups.setdefault(tool.id, []).append(tool)
    for tool_id, tools in sorted(groups.items()):
        if len(tools) < 2:
            continue
        sources = ", ".join(t.source for t in tools)
        catalog.diagnostics.append(
            Diagnostic(ERROR, f"{len(tools)} tools share the id {tool_id!r}: {sources}", tools[0].source, None, "duplicate-id")
        )
        for tool in tools:
            others = ", ".join(t.source for t in tools if t is not tool)
            tool.error(f"the id {tool_id!r} is also used by {others}; ids must be unique in a catalog", None, "duplicate-id")
    by_driver_id: dict[str, list[Driver]] = {}
    for driver in catalog.drivers:
        by_driver_id.setdefault(driver.id, []).append(driver)
    for driver_id, drivers in sorted(by_driver_id.items()):
        if len(drivers) < 2:
            continue
        for driver in drivers:
            others = ", ".join(d.source for d in drivers if d is not driver)
            driver.diagnostics.append(
                Diagnostic(ERROR, f"the driver id {driver_id!r} is also used by {others}", driver.source, None, "duplicate-id")
            )


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
    return [parent.parent for parent in parents if parent.name in (".drivers", ".tools")][:1]


def _check_entry(driver: Driver, entry: Implementation, tool: Tool) -> None:
    def problem(message: str, code: str) -> None:
        driver.diagnostics.append(Diagnostic(ERROR, message, driver.source, entry.line, code))

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

    if entry.version_range and tool.version:
        valid_range, satisfied = _admits(entry.version_range, tool.version)
        if not valid_range:
            problem(f"`version` {entry.version_range!r} is not a valid semver range", "driver-version")
        else:
            if not satisfied:
                problem(f"`version` range {entry.version_range!r} does not admit {tool.id!r} version {tool.version}", "driver-version")

    constraints = tool.fields.get("driver_constraints") if isinstance(tool.fields.get("driver_constraints"), dict) else {}
    forbid = [k for k in constraints.get("forbid") or [] if isinstance(k, str)] if isinstance(constraints.get("forbid"), list) else []
    require = [k for k in constraints.get("require_kind") or [] if isinstance(k, str)] if isinstance(constraints.get("require_kind"), list) else []
    if driver.kind and driver.kind in forbid:
        problem(f"{tool.id!r} forbids `{driver.kind}` drivers (`driver_constraints.forbid`)", "driver-kind")
    if driver.kind and require and driver.kind not in require:
        problem(f"{tool.id!r} requires a driver of kind {', '.join(require)} (`driver_constraints.require_kind`), not `{driver.kind}`", "driver-kind")

    tool_timeout = aip14.timeout_ms(tool)
    for where, value in (("timeout_override_ms", driver.fields.get("timeout_override_ms")), ("implements[].timeout_override_ms", entry.timeout_override_ms)):
        if isinstance(value, int) and not isinstance(value, bool) and value > tool_timeout:
            problem(f"`{where}` {value} widens the tool's timeout of {tool_timeout} ms; drivers may only narrow it", "driver-widens")
    tool_retry = tool.fields.get("retry") if isinstance(tool.fields.get("retry"), dict) else None
    for where, value in (("retry_override", driver.fields.get("retry_override")), ("implements[].retry_override", entry.retry_override)):
        if isinstance(value, dict) and tool_retry is not None:
            mine, theirs = value.get("max_attempts"), tool_retry.get("max_attempts")
            if isinstance(mine, int) and isinstance(theirs, int) and mine > theirs:
                problem(f"`{where}.max_attempts` {mine} widens the tool's {theirs} attempts; drivers may only narrow it", "driver-widens")
    tool_cost = tool.fields.get("cost_class", "trivial")
    for where, value in (("cost_override", driver.fields.get("cost_override")), ("implements[].cost_override", entry.cost_override)):
        if isinstance(value, dict) and isinstance(value.get("cost_class"), str) and isinstance(tool_cost, str) \
                and value["cost_class"] in COST_ORDER and tool_cost in COST_ORDER:
            if COST_ORDER[value["cost_class"]] > COST_ORDER[tool_cost]:
                problem(f"`{where}.cost_class` {value['cost_class']!r} is costlier than the tool's {tool_cost!r}; drivers may only narrow it", "driver-widens")


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
