"""Manifests and workspaces for tests: every test module writes its tools with these builders.

- `write`: a file (text is dedented), creating folders.
- `speccify_text`: a speccify TOOL.md as text; `speccify_tool`, `aip_tool`, `aip_driver` and
  `smart_tool` write a tool of each format (with its implementation files) into a workspace.
- `workspace_all_formats`: one valid, passing tool of every format where default discovery finds them.

Fixtures that wrap these (`write_file`, `write_tool`, `speccify_md`, `harvest_tmp`) are in conftest.py.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import yaml

from toolcatalog.conformance import job

PLATFORM = job.current_platform()  # the implementation file a speccify tool runs here is `<PLATFORM>.py`
OTHER_PLATFORM = "windows" if PLATFORM != "windows" else "linux"


def only(diagnostics: list[Any], code: str) -> Any:
    """The one diagnostic with `code` (asserting there is exactly one, listing them all if not)."""
    found = [d for d in diagnostics if d.code == code]
    assert len(found) == 1, f"expected one {code!r} diagnostic, got {[(d.code, d.message) for d in diagnostics]}"
    return found[0]


def write(path: Path, text: str | bytes) -> Path:
    """Write `text` (dedented, leading newlines dropped) or bytes to `path`, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def front_matter(data: dict[str, Any], body: str = "") -> str:
    """A manifest from a front-matter mapping and a Markdown body."""
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n" + textwrap.dedent(body)


# -- speccify ------------------------------------------------------------------------------------------

SPECCIFY_BODY = """
## Behaviour

Echoes its input.

## Examples

### echo one word
input: {"text": "hi"}
output: {"ok": true, "text": "hi"}
"""

SPECCIFY_FRONT = """\
name: {name}
description: Echo a text back.
inputs:
  type: object
  required: [text]
  properties:
    text: {{type: string}}
outputs:
  type: object
  required: [ok]
  properties:
    ok: {{type: boolean}}
    text: {{type: string}}
effects: none
"""


def speccify_text(name: str = "good-tool", front: str | None = None, body: str = SPECCIFY_BODY, extra: str = "") -> str:
    """A speccify TOOL.md. `front` replaces the whole front matter; `extra` is appended to it."""
    fm = SPECCIFY_FRONT.format(name=name) if front is None else textwrap.dedent(front)
    if not fm.endswith("\n"):
        fm += "\n"
    return f"---\n{fm}{textwrap.dedent(extra)}---\n{textwrap.dedent(body)}"


def speccify_tool(
    root: Path,
    name: str,
    cases: list[tuple[str, Any, Any]],
    files: dict[str, str] | None = None,
    outputs: dict[str, Any] | None = None,
    **front: Any,
) -> Path:
    """A speccify tool at `.agent/tools/<name>/`: TOOL.md with `cases` (title, input, output), plus
    `files` beside it (e.g. `{f"{PLATFORM}.py": ECHO_STDIN_PY}`). Returns the tool's folder.

    A case whose output is `...` gets no `output:` line (an incomplete case, which makes the tool invalid).
    """
    folder = root / ".agent" / "tools" / name
    data = {
        "name": name,
        "description": f"Test tool {name}.",
        "inputs": {"type": "object"},
        "outputs": outputs or {"type": "object"},
        "effects": "none",
        **front,
    }
    lines = ["", "## Examples", ""]
    for title, given, expected in cases:
        lines += [f"### {title}", f"input: {json.dumps(given)}"]
        if expected is not ...:
            lines.append(f"output: {json.dumps(expected)}")
        lines.append("")
    write(folder / "TOOL.md", front_matter(data) + "\n".join(lines))
    for rel, text in (files or {}).items():
        write(folder / rel, text)
    return folder


ECHO_STDIN_PY = "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"  # a speccify implementation

# A tool's own definitions of `struct iovec`, `struct msghdr` and `struct mmsghdr` (ctypes, imported
# as `ctypes` in the tool), for tools that call sendmmsg(2) themselves: Python has no wrapper for it.
MMSG_STRUCTS_PY = """
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

class MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(IoVec)),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]

class MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", MsgHdr), ("len", ctypes.c_uint)]
"""


# -- agentproto ----------------------------------------------------------------------------------------


def aip_tool(root: Path, tool_id: str, examples: list[dict[str, Any]], **fields: Any) -> Path:
    """An AIP-14 tool at `.tools/<id>/TOOL.md` (read-only, auto-approved unless `fields` say otherwise)."""
    data = {
        "name": f"Tool {tool_id}",
        "id": tool_id,
        "description": f"Test tool {tool_id}.",
        "version": "1.0.0",
        "inputs": {"type": "object"},
        "outputs": {"type": "object"},
        "mutates": [],
        "approval": "auto",
        **fields,
        "examples": examples,
    }
    path = root / ".tools" / tool_id / "TOOL.md"
    write(path, front_matter(data, "\n## Description\n\nA test tool.\n"))
    return path


def aip_driver(root: Path, driver_id: str, tool_id: str, kind: str = "cli", entry: dict[str, Any] | None = None,
               files: dict[str, str] | None = None, **fields: Any) -> Path:
    """An AIP-30 driver at `.drivers/<id>/DRIVER.md` implementing `.tools/<tool_id>/TOOL.md`."""
    data = {
        "name": f"Driver {driver_id}",
        "id": driver_id,
        "description": f"Test driver {driver_id}.",
        "version": "1.0.0",
        "kind": kind,
        **fields,
        "implements": [{"tool": f".tools/{tool_id}/TOOL.md", "version": "^1.0.0", **(entry or {})}],
    }
    folder = root / ".drivers" / driver_id
    write(folder / "DRIVER.md", front_matter(data))
    for rel, text in (files or {}).items():
        write(folder / rel, text)
    return folder


def cli_entry(*argv: str) -> dict[str, Any]:
    """The `implements` entry metadata of a CLI driver that runs with `argv`."""
    return {"metadata": {"cli": {"argv": list(argv)}}}


# -- smart tools ---------------------------------------------------------------------------------------


BEHAVING_SMART_CLI = """
import json, os, sys, time
B = json.loads({behaviour!r})
TOOL = B["name"]
CAPS = [("stats", "deterministic", "Count the words of --text."), ("summarize", "model-backed", "Summarise --text with a model.")]


def main(args):
    if not args:
        print(json.dumps({{"error": {{"code": "usage", "message": "no capability", "remedy": f"run {{TOOL}} --help"}}}}))
        return 2
    first, rest = args[0], args[1:]
    if first == "--help":
        lines = [f'<skill_content name="{{TOOL}}">', "", f"# {{TOOL}}", "", "Guidance.", "", "## Capabilities", ""]
        for name, kind, summary in CAPS:
            lines.append(f"- `{{name}}` [{{kind}}] -- {{summary}}" if B["disclose"] else f"- `{{name}}` -- {{summary}}")
        lines.append("</skill_content>")
        print("\\n".join(lines))
        return 0
    if first == "-h":
        if B["hang_short"]:
            time.sleep(120)
        print(f"usage: {{TOOL}} <capability>")
        return 0
    if first not in ("stats", "summarize"):
        if B["traceback"]:
            raise LookupError(first)
        print(json.dumps({{"error": {{"code": "unknown_capability", "message": first, "remedy": "use stats or summarize"}}}}))
        return 2
    if "--help" in rest:
        lead = "Deterministic." if first == "stats" else "Model-backed."
        print(f'<skill_content name="{{TOOL}} {{first}}">\\n\\n# {{TOOL}} {{first}}\\n\\n{{lead}} Help for {{first}}.\\n</skill_content>')
        return 0
    if first == "stats":
        if "--env-out" in rest:
            with open(rest[rest.index("--env-out") + 1], "w") as handle:
                json.dump(dict(os.environ), handle)
        print(json.dumps({{"words": 2}}))
        return 0
    print(json.dumps({{"error": {{"code": "no_provider", "message": "no provider", "remedy": "set SMARTY_PROVIDER"}}}}))
    return 3


sys.exit(main(sys.argv[1:]))
"""


def behaving_smart_cli(name: str, *, disclose: bool = True, traceback: bool = False, hang_short: bool = False) -> str:
    """A smart-tool program with a deterministic `stats` and a model-backed `summarize` capability.
    `disclose`: its --help marks which is which; `traceback`: an unknown capability crashes;
    `hang_short`: `-h` never answers. `stats --env-out FILE` writes the environment it got."""
    behaviour = json.dumps({"name": name, "disclose": disclose, "traceback": traceback, "hang_short": hang_short})
    return BEHAVING_SMART_CLI.format(behaviour=behaviour)


def smart_tool(root: Path, name: str, cli: str | None = None, *, platforms: list[str] | None = None, smoke: list[str] | None = None,
               manifest_version: str = "0.1.0", descriptor: bool = True) -> Path:
    """A smart-tool distribution at `dists/<name>/`: SMART_TOOL.md, pyproject.toml, the program `cli`
    (run as `python3 cli.py`; by default `behaving_smart_cli(name)`) and, with `descriptor`,
    smart-tool.json. Returns its folder."""
    dist = root / "dists" / name
    write(dist / "cli.py", behaving_smart_cli(name) if cli is None else cli)
    write(dist / "pyproject.toml", f'[project]\nname = "{name}"\nversion = "0.1.0"\n')
    manifest = {
        "smart_tool_format": 1,
        "name": name,
        "version": manifest_version,
        "description": f"The {name} test tool.",
        "use_cases": ["Testing"],
        "platforms": platforms or ["linux", "macos"],
    }
    write(dist / "SMART_TOOL.md", front_matter(manifest, f"\n# {name}\n\nGuidance.\n"))
    if descriptor:
        data: dict[str, Any] = {"manifest": "SMART_TOOL.md", "cli_argv": ["python3", "cli.py"]}
        if smoke is not None:
            data["deterministic_smoke"] = smoke
        write(dist / "smart-tool.json", json.dumps(data))
    return dist


def counting_smart_cli(capabilities: int, calls_log: Path) -> str:
    """A conforming smart-tool program with `capabilities` deterministic capabilities (`cap-0`, ...)
    that appends every call's arguments to `calls_log`, one JSON list a line."""
    return textwrap.dedent(f"""\
        import json, sys
        with open({str(calls_log)!r}, "a") as log:
            log.write(json.dumps(sys.argv[1:]) + "\\n")
        CAPS = ["cap-%d" % i for i in range({capabilities})]
        args = sys.argv[1:]
        if args in (["--help"], ["-h"]):
            print("# tool\\n\\nNothing here is model-backed.\\n")
            for name in CAPS:
                print("- `%s` [deterministic] -- Does %s." % (name, name))
            sys.exit(0)
        if args and args[0] in CAPS:
            print("help for " + args[0] if "--help" in args else json.dumps({{"ok": True}}))
            sys.exit(0)
        print(json.dumps({{"error": {{"code": "unknown", "message": "no such capability", "remedy": "see --help"}}}}))
        sys.exit(2)
        """)


def mixed_workspace(root: Path) -> Path:
    """Four tools that really run: `adder` (speccify, passes), `other` (speccify, fails), `demo.echo`
    (AIP-14 through the `echo-cli` driver, passes) and `cached-smart` (smart tool, passes)."""
    impl = "import json, sys\ndata = json.load(sys.stdin)\nprint(json.dumps({'sum': data['a'] + data['b']}))\n"
    speccify_tool(root, "adder", [("one", {"a": 1, "b": 1}, {"sum": 2}), ("two", {"a": 2, "b": 2}, {"sum": 4})],
                  files={f"{PLATFORM}.py": impl})
    speccify_tool(root, "other", [("bad", {"a": 1, "b": 1}, {"sum": 3})], files={f"{PLATFORM}.py": impl})
    aip_tool(root, "demo.echo", examples=[{"name": "echo", "input": {"t": "hi"}, "output": {"t": "hi"}}])
    aip_driver(root, "echo-cli", "demo.echo", bin="python3", bin_args=["e.py"], output={"default_format": "json"},
               entry=cli_entry("${input.t}"), files={"e.py": "import json, sys\nprint(json.dumps({'t': sys.argv[1]}))\n"})
    smart_tool(root, "cached-smart", smoke=["stats"])
    return root


# -- one workspace with every format -------------------------------------------------------------------

SPECCIFY_TOOL = """
---
name: add-numbers
description: Adds two numbers and says whether the sum is even.
inputs:
  type: object
  required: [a, b]
  properties:
    a: {type: number, description: The first addend.}
    b: {type: number}
outputs:
  type: object
  required: [sum]
  properties:
    sum: {type: number}
effects: none; pure computation
requires: python3
platforms: linux, macos
---

## Behaviour

Adds `a` and `b`.

## Examples

### two and two
input: {"a": 2, "b": 2}
output: {"sum": 4}
"""

AIP14_TOOL = """
---
name: Echo text
id: text.echo
description: Echoes its input text back.
version: 1.2.0
mutates: []
risk_level: 0
idempotent: true
inputs:
  type: object
  required: [text]
  properties:
    text: {type: string}
outputs:
  type: object
  properties:
    text: {type: string}
tags: [text]
examples:
  - name: hello
    input: {text: hello}
    output: {text: hello}
---

## Description

Echo.
"""

AIP30_DRIVER = """
---
name: Echo CLI
id: echo-cli
description: Runs echo.py.
version: 1.0.0
kind: cli
bin: python3
bin_args: [echo.py]
output: {default_format: json}
implements:
  - tool: .tools/text.echo/TOOL.md
    version: "^1.0.0"
    metadata:
      cli:
        argv: ["--text", "${input.text}"]
---
"""

SMART_TOOL_MD = """
---
smart_tool_format: 1
name: tiny-smart
version: 0.3.0
description: A tiny smart tool for tests.
use_cases:
  - Testing
platforms:
  - linux
---

# tiny-smart

Guidance.
"""


ADD_NUMBERS_PY = """
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"sum": data["a"] + data["b"]}))
"""

ECHO_PY = """
import argparse, json
parser = argparse.ArgumentParser()
parser.add_argument("--text", required=True)
print(json.dumps({"text": parser.parse_args().text}))
"""

TINY_SMART_CLI = r'''
import json, sys
HELP = """# tiny-smart

## Capabilities

- `count` [deterministic] -- Count words.
- `guess` [model-backed] -- Guess what the text means.
"""
args = sys.argv[1:]
if args in (["--help"], []):
    print(HELP)
elif args == ["-h"]:
    print("usage: tiny-smart <capability> [--help]")
elif args == ["count", "--help"]:
    print("# tiny-smart count\n\nDeterministic. Counts words.")
elif args == ["guess", "--help"]:
    print("# tiny-smart guess\n\nModel-backed. Needs a provider.")
elif args[:1] == ["count"]:
    print(json.dumps({"words": len(" ".join(args[1:]).split())}))
else:
    print(json.dumps({"error": {"code": "unknown_capability", "message": args[0], "remedy": "run --help"}}))
    sys.exit(2)
'''


def workspace_all_formats(root: Path) -> Path:
    """One valid, passing tool of every format, laid out where default discovery finds them:
    add-numbers (speccify), text.echo (AIP-14) with the echo-cli driver (AIP-30), tiny-smart."""
    write(root / ".agent/tools/add-numbers/TOOL.md", SPECCIFY_TOOL)
    write(root / ".agent/tools/add-numbers/linux.py", ADD_NUMBERS_PY)
    write(root / ".tools/text.echo/TOOL.md", AIP14_TOOL)
    write(root / ".drivers/echo-cli/DRIVER.md", AIP30_DRIVER)
    write(root / ".drivers/echo-cli/echo.py", ECHO_PY)
    dist = root / "packages/tiny-smart"
    descriptor = {"manifest": "src/tiny_smart/SMART_TOOL.md", "cli_argv": ["python3", "cli.py"], "deterministic_smoke": ["count", "a b"]}
    write(dist / "smart-tool.json", json.dumps(descriptor))
    write(dist / "pyproject.toml", '[project]\nname = "tiny-smart"\nversion = "0.3.0"\n')
    write(dist / "src/tiny_smart/SMART_TOOL.md", SMART_TOOL_MD)
    write(dist / "cli.py", TINY_SMART_CLI)
    return root
