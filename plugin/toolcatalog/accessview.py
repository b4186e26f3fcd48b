"""Data and access: where a tool's data may go and what it needs, derived once per tool for the page
("Data and access" section), the catalog (`access`, each driver's `access`) and `toolcatalog diff`.

The sources are the contract's own requirements (AIP-14 `requires.network`/`requires.secrets`,
speccify's requirement lines) and every driver implementing it: `network.egress`, `auth.state.env`,
`region`, `policy_tags`, `cost_override` (the driver's, or its `implements[]` entry's), the HTTP
endpoint, `health_check`, a CLI's `bin`/`bin_args` + argv, an MCP server's command and tool name.
Nothing is assumed: a driver that does not declare its egress is listed as "not declared", never as
"no network".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Driver, Implementation, Tool


@dataclass
class DriverAccess:
    """One driver's access, as seen from one tool it implements."""

    driver: Driver
    egress: list[str] | None
    secrets: list[str]
    region: list[str] | None
    policy_tags: list[str]
    cost: dict[str, Any] | None  # the entry's `cost_override`, else the driver's
    endpoint: str | None  # "POST /v1/predictions" (the entry's metadata.http, else the driver's)
    command: list[str] | None  # CLI: bin + bin_args + argv; MCP: the server command
    mcp_tool: str | None
    health_check: dict[str, Any] | None

    def as_dict(self) -> dict[str, Any]:
        a = self.driver.access
        return {
            "egress": self.egress, "ingress": a.ingress, "secrets": list(self.secrets), "auth_paths": list(a.auth_paths),
            "auth_ref": a.auth_ref, "region": self.region, "policy_tags": list(self.policy_tags), "cost": self.cost,
            "endpoint": self.endpoint, "health_check": self.health_check, "bin": a.bin, "bin_args": list(a.bin_args),
            "command": self.command, "mcp_server": a.mcp_server, "mcp_tool": self.mcp_tool, "transport": a.transport,
        }


@dataclass
class ToolAccess:
    """Everything a reviewer needs to judge where a tool's data goes, over the contract and its drivers."""

    egress: list[str] = field(default_factory=list)  # every declared host, sorted, deduplicated
    egress_undeclared: list[str] = field(default_factory=list)  # ids of drivers that do not declare egress
    secrets: list[str] = field(default_factory=list)
    region: list[str] = field(default_factory=list)
    policy_tags: list[str] = field(default_factory=list)
    cost_class: str | None = None
    drivers: list[DriverAccess] = field(default_factory=list)

    @property
    def declared(self) -> bool:
        return bool(self.egress or self.egress_undeclared or self.secrets or self.region or self.policy_tags
                    or self.cost_class or self.drivers)

    def as_dict(self) -> dict[str, Any]:
        return {
            "egress": list(self.egress), "egress_undeclared": list(self.egress_undeclared), "secrets": list(self.secrets),
            "region": list(self.region), "policy_tags": list(self.policy_tags), "cost_class": self.cost_class,
        }


def _endpoint(driver: Driver, entry: Implementation | None) -> str | None:
    meta = entry.metadata.get("http") if entry is not None else None
    meta = meta if isinstance(meta, dict) else {}
    url = meta.get("endpoint") if isinstance(meta.get("endpoint"), str) else driver.access.endpoint
    if url is None:
        return None
    method = meta.get("method") if isinstance(meta.get("method"), str) else driver.access.method
    return f"{method} {url}" if method else url


def _command(driver: Driver, entry: Implementation | None) -> list[str] | None:
    a = driver.access
    if driver.kind == "mcp":
        return list(a.mcp_command) if a.mcp_command else None
    if a.bin is None:
        return None
    meta = entry.metadata.get("cli") if entry is not None else None
    argv = meta.get("argv") if isinstance(meta, dict) else None
    return [a.bin, *a.bin_args, *(str(x) for x in argv if isinstance(x, (str, int, float)))] if isinstance(argv, list) else [a.bin, *a.bin_args]


def _mcp_tool(driver: Driver, entry: Implementation | None, tool: Tool) -> str | None:
    if driver.kind != "mcp":
        return None
    meta = entry.metadata.get("mcp") if entry is not None else None
    if isinstance(meta, dict) and isinstance(meta.get("tool_name"), str):
        return str(meta["tool_name"])
    mapping = driver.fields.get("mcp_tools")
    if isinstance(mapping, dict):
        return next((str(name) for name, ref in mapping.items() if ref == tool.id), None)
    return None


def of_driver(driver: Driver, tool: Tool) -> DriverAccess:
    entry = driver.entry_for(tool.id)
    a = driver.access
    cost = entry.cost_override if entry is not None and entry.cost_override is not None else a.cost_override
    return DriverAccess(
        driver=driver, egress=a.egress, secrets=list(a.secrets), region=a.region, policy_tags=list(a.policy_tags),
        cost=cost, endpoint=_endpoint(driver, entry), command=_command(driver, entry),
        mcp_tool=_mcp_tool(driver, entry, tool), health_check=a.health_check,
    )


def _add(into: list[str], values: list[str] | None) -> None:
    for value in values or []:
        if value not in into:
            into.append(value)


def of(tool: Tool) -> ToolAccess:
    """The tool's data and access record (pages, catalog and diff read this one)."""
    out = ToolAccess(cost_class=tool.effects.cost_class)
    for requirement in tool.effects.requires:
        if requirement.kind == "network":
            _add(out.egress, [requirement.name])
        elif requirement.kind == "secret":
            _add(out.secrets, [requirement.name])
    for driver in tool.drivers:
        view = of_driver(driver, tool)
        out.drivers.append(view)
        if view.egress is None:
            out.egress_undeclared.append(driver.id)
        _add(out.egress, view.egress)
        _add(out.secrets, view.secrets)
        _add(out.region, view.region)
        _add(out.policy_tags, view.policy_tags)
    out.egress.sort()
    out.secrets.sort()
    return out
