"""What a driver reaches and needs, and how an AIP-14 contract asks to be executed, read from the
front matter into typed model fields (`model.Access`, `model.Execution`).

Only well-typed values are kept: a malformed field is dropped here (the format's schema check has
already reported it with its line), never replaced by a reassuring default. A driver that does not
declare `network.egress` has `egress = None` ("not declared"), which pages and the catalog show as
such; an empty list means "no network".
"""

from __future__ import annotations

from typing import Any

from ..model import Access, Execution, Retry

MAX_ITEMS = 200  # hosts, secrets, tags... kept per field (a hostile manifest cannot bloat the catalog)


def strings(value: Any) -> list[str] | None:
    """The strings of a list (non-strings dropped), at most MAX_ITEMS; None when not a list."""
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, str)][:MAX_ITEMS]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def retry(value: Any) -> Retry | None:
    """AIP-14 `retry` / AIP-30 `retry_override`; None when absent or not an object."""
    if not isinstance(value, dict):
        return None
    return Retry(_integer(value.get("max_attempts")), _text(value.get("backoff")), _integer(value.get("initial_ms")))


def execution(data: dict[str, Any]) -> Execution:
    """An AIP-14 TOOL.md's execution fields."""
    timeout = _integer(data.get("timeout_ms"))
    constraints = _mapping(data.get("driver_constraints"))
    metadata = data.get("metadata")
    return Execution(
        timeout_ms=timeout if timeout is not None and timeout > 0 else None,
        retry=retry(data.get("retry")),
        default_implementation=_text(data.get("default_implementation")),
        forbid_kinds=strings(constraints.get("forbid")) or [],
        require_kinds=strings(constraints.get("require_kind")) or [],
        metadata=metadata if isinstance(metadata, dict) else {},
    )


def _network(data: dict[str, Any]) -> dict[str, Any]:
    """`network` (AIP-30), or AIP-29's `sandbox.network`."""
    if isinstance(data.get("network"), dict):
        return dict(data["network"])
    return _mapping(_mapping(data.get("sandbox")).get("network"))


def _mcp(data: dict[str, Any], access: Access) -> None:
    """An MCP driver's server: the command line when `server: {kind: binary}` or `bin` gives one,
    else what names the server (`server_ref`, a package, an image, a URL)."""
    server = data.get("server")
    access.transport = _text(data.get("transport"))
    if isinstance(server, dict):
        kind = _text(server.get("kind"))
        args = strings(server.get("args")) or []
        if kind == "binary" and isinstance(server.get("path"), str):
            access.mcp_command = [server["path"], *args]
            return
        for key in ("package", "image", "url"):
            if isinstance(server.get(key), str):
                access.mcp_server = f"{kind or key}: {server[key]}"
                return
    if access.bin is not None:
        access.mcp_command = [access.bin, *access.bin_args]
    elif isinstance(data.get("server_ref"), str):
        access.mcp_server = data["server_ref"]


def driver(data: dict[str, Any], kind: str | None) -> Access:
    """A driver manifest's access fields (`kind`: the driver's kind, for the per-kind ones)."""
    network = _network(data)
    auth = _mapping(data.get("auth"))
    state = _mapping(auth.get("state"))
    health = data.get("health_check")
    cost = data.get("cost_override")
    access = Access(
        egress=strings(network.get("egress")),
        ingress=strings(network.get("ingress")),
        secrets=strings(state.get("env")) or [],
        auth_paths=strings(state.get("paths")) or [],
        auth_ref=_text(auth.get("ref")),
        region=strings(data.get("region")),
        policy_tags=strings(data.get("policy_tags")) or [],
        cost_override=cost if isinstance(cost, dict) else None,
        health_check=health if isinstance(health, dict) else None,
        bin=_text(data.get("bin")),
        bin_args=strings(data.get("bin_args")) or [],
    )
    if kind == "http":
        access.endpoint = _text(data.get("endpoint"))
        access.method = _text(data.get("method"))
    if kind == "mcp":
        _mcp(data, access)
    return access
