"""`kind: mcp` drivers over stdio, through the official MCP Python SDK (`pip install mkdocs-toolcatalog[mcp]`).

The server command comes from AIP-32's `server: {kind: binary, path, args}` or,
as a fallback, the driver's `bin`/`bin_args`. The MCP tool to call is the
`implements` entry's `metadata.mcp.tool_name`, else the key of `mcp_tools` that
maps to the tool's id. The result compared is `structuredContent`, else the
JSON in the first text content.

The server's stderr goes to a pipe that a thread reads, keeping only the last
64 KiB: nothing a server writes reaches the disk, and memory stays flat. The
server starts through a parent-death shim (`process.die_with_parent_argv`), so
it (or the sandbox around it) dies with the build, and a cancelled build (Ctrl-C,
SIGTERM) ends the session within a quarter of a second instead of at its
timeout.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from ..jsonvalues import MAX_DEPTH, too_deep
from ..model import Driver, Implementation, Run, Tool
from ..process import CANCELLED, cancel_requested, die_with_parent_argv
from ..statuses import RunStatus
from .effects import Declared
from .job import Context
from .judge import documents_failure, excerpt, last_line, settle, settle_failure
from .raw import mapping
from .raw import text as text_field


STDERR_TAIL = 64 * 1024


@functools.lru_cache(maxsize=1)
def sdk_problem() -> str | None:
    """Why the MCP SDK cannot be used, or None. An SDK that is installed but fails to import (an
    old `mcp` against a newer pydantic does) is reported with its import error, not as missing."""
    try:
        from mcp import ClientSession, StdioServerParameters  # noqa: F401
        from mcp.client.stdio import stdio_client  # noqa: F401
    except ModuleNotFoundError as error:
        if error.name == "mcp":
            return "the MCP SDK is not installed (pip install 'mkdocs-toolcatalog[mcp]')"
        return f"the MCP SDK does not import: {type(error).__name__}: {error}"
    except Exception as error:  # an SDK broken against its dependencies raises anything at import
        return f"the MCP SDK does not import: {type(error).__name__}: {error}"
    return None


def command(driver: Driver, ctx: Context) -> tuple[list[str] | None, str]:
    problem = sdk_problem()
    if problem:
        return None, f"not run: {problem}"
    fields = driver.fields
    transport = fields.get("transport", "stdio")
    if transport != "stdio":
        return None, f"not run: MCP transport `{transport}` is not run at build time (only stdio)"
    server = fields.get("server")
    if isinstance(server, dict):
        if server.get("kind") != "binary" or not isinstance(server.get("path"), str):
            return None, f"not run: MCP server kind `{server.get('kind')}` would need installing; only `kind: binary` runs"
        program, args = server["path"], server.get("args") or []
    elif isinstance(fields.get("bin"), str):
        program, args = fields["bin"], fields.get("bin_args") or []
    else:
        return None, "not run: no `server: {kind: binary, path}` (or `bin`) says how to start the MCP server"
    local = driver.abs_path.parent / program
    located = str(local) if ("/" in program and local.is_file()) else shutil.which(program, path=ctx.env.get("PATH"))
    if located is None:
        return None, f"not run: command not found: {program}"
    return [located, *[str(a) for a in args]], "ran"


def tool_name(driver: Driver, entry: Implementation, tool: Tool) -> str | None:
    named = text_field(mapping(entry.metadata.get("mcp")).get("tool_name"))
    if named is not None:
        return named
    tools = driver.fields.get("mcp_tools")
    if isinstance(tools, dict):
        for name, tool_id in tools.items():
            if tool_id == tool.id:
                return str(name)
    return None


def call(tool: Tool, example: Any, driver: Driver, entry: Implementation, prefix: list[str], ctx: Context, timeout: float, outputs: Any, run: Run,
         rules: Declared) -> Run:
    name = tool_name(driver, entry, tool)
    run.argv = [Path(prefix[0]).name, *(Path(a).name if Path(a).is_absolute() else a for a in prefix[1:])]
    if name is None:
        run.status, run.detail = RunStatus.SKIPPED, "not run: no `metadata.mcp.tool_name` or `mcp_tools` entry names the MCP tool"
        return run
    if not isinstance(example.input, dict):
        # MCP arguments are an object; sending `{}` instead would test something else.
        run.status, run.detail = RunStatus.SKIPPED, "not run: MCP tool arguments must be an object, and this input is not"
        return run
    renamed = mapping(mapping(entry.metadata.get("mcp")).get("argument_mapping"))
    arguments = {str(renamed.get(k, k)): v for k, v in example.input.items()}
    started = time.monotonic()
    result = _session(driver, prefix, ctx, timeout, rules, run, name, arguments)
    run.started = True
    run.duration_ms = int((time.monotonic() - started) * 1000)
    if result is None:
        return run
    return _judged(result, example, outputs, ctx, run)


def _session(driver: Driver, prefix: list[str], ctx: Context, timeout: float, rules: Declared, run: Run, name: str,
             arguments: dict[str, Any]) -> tuple[bool, Any, str] | None:
    """One MCP session calling the tool once: its result, or None with why in `run.detail`."""
    result = None
    here = driver.abs_path.parent
    errlog = _StderrTail(STDERR_TAIL)
    with errlog, ctx.launch(prefix, cwd=here, env=ctx.env, network=rules.network, hidden=rules.hidden) as launch:
        command, env, cwd = (launch.argv, launch.env, launch.cwd) if launch is not None else (prefix, ctx.env, here)
        try:
            import anyio  # the `mcp` extra's dependency: imported only when an MCP driver runs

            result = anyio.run(_call, die_with_parent_argv(command), env, cwd, name, arguments, timeout, errlog.writer,
                               cancel_requested)
        except TimeoutError:
            run.detail = f"timed out after {timeout:g}s"
        except Exception as exc:  # the SDK raises many kinds; each is a failed run, not a crashed build
            cause = _leaf(exc)  # the SDK's task groups wrap the real error in (nested) exception groups
            run.detail = CANCELLED if isinstance(cause, _Cancelled) else f"MCP call failed: {type(cause).__name__}: {cause}"[:500]
        stderr = errlog.tail()
        run.stderr = excerpt(stderr, scrub=ctx.scrub)
        if result is None and run.detail.startswith("MCP call failed") and last_line(stderr):
            run.detail += f" (server stderr: {last_line(stderr, ctx.scrub)})"
        if launch is not None:
            run.sandbox, run.observed = launch.mechanism, launch.observe()
    return result


def _judged(result: tuple[bool, Any, str], example: Any, outputs: Any, ctx: Context, run: Run) -> Run:
    """The run judged from the tool's result: its value against the example and the contract."""
    is_error, value, text = result
    if too_deep(value):  # the same limit as every other value read from a tool
        run.detail = f"the MCP result nests more than {MAX_DEPTH} levels deep, which is not accepted"
        return run
    if is_error:
        expected = example.output if example.has_output else None
        if documents_failure(expected):
            # An example that documents a failure: compare with the error as an AIP-14 envelope.
            error = value.get("error") if isinstance(value, dict) and isinstance(value.get("error"), dict) else None
            return settle_failure(run, expected, {"ok": False, "error": error if error is not None else {"message": text}}, ctx.scrub)
        run.detail = "the MCP tool returned an error: " + (text or "")[:300]
        return run
    return settle(run, example, value, outputs, ctx.scrub)


def _leaf(exc: BaseException) -> BaseException:
    """The first innermost exception of an exception group (the error itself otherwise)."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not isinstance(inner, (list, tuple)) or not inner:
            return exc
        exc = inner[0]


class _Cancelled(Exception):
    """The build was cancelled while the session ran."""


class _StderrTail:
    """A pipe for a server's stderr and a thread that keeps only its last `cap` bytes.

    The write end goes to the server; closing it here (at the end of the `with`) leaves the server's
    copies, so the reader stops at end-of-file or, when a leftover process still holds the pipe,
    a quarter of a second later."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = bytearray()
        read_fd, write_fd = os.pipe()
        self.reader_fd = read_fd
        self.writer = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, name="toolcatalog-mcp-stderr", daemon=True)

    def __enter__(self) -> "_StderrTail":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._finish()
        os.close(self.reader_fd)

    def _read(self) -> None:
        if not hasattr(select, "poll"):  # Windows (untested): read to the end of the stream
            for chunk in iter(lambda: os.read(self.reader_fd, 64 << 10), b""):
                self.buffer = (self.buffer + chunk)[-self.cap:]
            return
        poller = select.poll()
        poller.register(self.reader_fd, select.POLLIN)
        while True:
            ready = poller.poll(250)
            chunk = os.read(self.reader_fd, 64 << 10) if ready else b""
            self.buffer += chunk
            if len(self.buffer) > self.cap:
                del self.buffer[: len(self.buffer) - self.cap]
            if (ready and not chunk) or self.stop.is_set():
                return  # end of file, or the session is over (what a leftover still writes is not wanted)

    def _finish(self) -> None:
        if not self.writer.closed:
            self.writer.close()
            self.stop.set()
            self.thread.join()

    def tail(self) -> bytes:
        """The last `cap` bytes written (the server's session is over: its pipe is closed here)."""
        self._finish()
        return bytes(self.buffer)


async def _call(command: list[str], env: dict[str, str], cwd: Path, name: str, arguments: dict[str, Any], timeout: float, errlog: Any,
                cancelled: Any) -> tuple[bool, Any, str]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(env), cwd=str(cwd))

    async def watch(scope: anyio.CancelScope) -> None:
        while not cancelled():
            await anyio.sleep(0.25)
        scope.cancel()

    with anyio.fail_after(timeout):
        async with anyio.create_task_group() as group:
            group.start_soon(watch, group.cancel_scope)
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool(name, arguments)
            group.cancel_scope.cancel()
    if cancelled():
        raise _Cancelled()
    is_error = bool(getattr(result, "is_error", getattr(result, "isError", False)))
    structured = getattr(result, "structured_content", getattr(result, "structuredContent", None))
    texts = [getattr(item, "text", None) for item in getattr(result, "content", []) or []]
    text = next((t for t in texts if isinstance(t, str)), "")
    if structured is not None:
        return is_error, structured, text
    try:
        return is_error, json.loads(text), text
    except (ValueError, RecursionError):
        return is_error, text, text
