"""A minimal MCP server over stdio, with no SDK: newline-delimited JSON-RPC 2.0.

Handles `initialize` (echoing the client's protocol version), `ping`,
`tools/list` and `tools/call` for one tool, `add`. Notifications (messages
without an `id`) are ignored. Exits when stdin closes.
"""
import json
import sys

SERVER_INFO = {"name": "math-mcp", "version": "1.0.0"}
ADD = {
    "name": "add",
    "title": "Add two numbers",
    "description": "Add two numbers and return the sum.",
    "inputSchema": {
        "type": "object",
        "required": ["a", "b"],
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    },
    "outputSchema": {
        "type": "object",
        "required": ["sum"],
        "properties": {"sum": {"type": "number"}},
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def call_tool(params):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name != "add":
        raise LookupError(f"unknown tool: {name}")
    a, b = arguments.get("a"), arguments.get("b")
    if not (is_number(a) and is_number(b)):
        message = {"ok": False, "error": {"code": "input_invalid", "message": "`a` and `b` must be numbers"}}
        return {"content": [{"type": "text", "text": json.dumps(message)}], "isError": True}
    value = {"sum": a + b}
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, "isError": False}


def handle(message):
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [ADD]}
    if method == "tools/call":
        return call_tool(params)
    raise NotImplementedError(method)


def reply(message_id, result=None, error=None):
    response = {"jsonrpc": "2.0", "id": message_id}
    if error is not None:
        response["error"] = error
    else:
        response["result"] = result
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply(None, error={"code": -32700, "message": "parse error"})
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # a notification (or a response): nothing to answer
        try:
            reply(message["id"], handle(message))
        except NotImplementedError as exc:
            reply(message["id"], error={"code": -32601, "message": f"method not found: {exc}"})
        except LookupError as exc:
            reply(message["id"], error={"code": -32602, "message": str(exc)})


if __name__ == "__main__":
    main()
