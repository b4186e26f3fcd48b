"""broken-manifest CLI: `convert` (deterministic) and `parse` (model-backed)."""
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

TOOL = "broken-manifest"
HERE = Path(__file__).resolve().parent
PROVIDER_ENV = "STAMP_PROVIDER_API_KEY"
CAPABILITIES = (
    ("convert", False, "Convert Unix epoch seconds to ISO-8601 UTC."),
    ("parse", True, "Read a plain-language time phrase with a model."),
)
BODIES = {
    "convert": "Deterministic. `--epoch SECONDS` (integer) prints "
               '`{"iso": "1970-01-01T00:00:00Z"}`. Bad input exits 2 with error code `usage`.',
    "parse": "Model-backed. `--phrase TEXT` asks the model for an exact UTC time. "
             f"Without {PROVIDER_ENV} it exits 3 with error code `no_provider`.",
}
USAGE = f"usage: {TOOL} convert --epoch SECONDS | {TOOL} parse --phrase TEXT | {TOOL} --help"


def fail(code, message, remedy, status):
    print(json.dumps({"error": {"code": code, "message": message, "remedy": remedy}}))
    print(f"{TOOL}: {message}", file=sys.stderr)
    return status


def option(args, name):
    if name in args and args.index(name) + 1 < len(args):
        return args[args.index(name) + 1]
    return None


def full_help():
    text = (HERE / "SMART_TOOL.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1].strip()
    caps = "\n".join(f"- `{n}` [{'model-backed' if mb else 'deterministic'}] -- {s}"
                     for n, mb, s in CAPABILITIES)
    return (f'<skill_content name="{TOOL}">\nSkill directory: {HERE}\n'
            "Relative paths in this skill are relative to the skill directory.\n\n"
            f"# {TOOL}\n\n{body}\n\n## Capabilities\n\n"
            f"Each has its own skill: `{TOOL} <capability> --help`.\n\n{caps}\n</skill_content>")


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if not args:
        return fail("usage", "no capability given", f"Run `{TOOL} --help`.", 2)
    verb, rest = args[0], args[1:]
    if verb == "--help":
        print(full_help())
        return 0
    if verb == "-h":
        print(USAGE)
        return 0
    if verb not in BODIES:
        return fail("unknown_capability", f"unknown capability {verb!r}",
                    "Use `convert` or `parse`; see `--help`.", 2)
    if "--help" in rest or "-h" in rest:
        print(f'<skill_content name="{TOOL} {verb}">\n'
              f"Part of `{TOOL}`; `{TOOL} --help` is the tool's skill.\n\n"
              f"# {TOOL} {verb}\n\n{BODIES[verb]}\n</skill_content>")
        return 0
    if verb == "parse":
        if not os.environ.get(PROVIDER_ENV):
            return fail("no_provider", f"{PROVIDER_ENV} is not set",
                        f"Export {PROVIDER_ENV}; see docs/provider.md.", 3)
        return fail("provider_unavailable", "this build ships without the gateway client",
                    "Install from the platform index.", 3)
    raw = option(rest, "--epoch")
    try:
        moment = datetime.fromtimestamp(int(raw), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return fail("usage", f"--epoch needs an integer number of seconds, got {raw!r}",
                    f"Run `{TOOL} convert --help`.", 2)
    print(json.dumps({"epoch": int(raw), "iso": moment.strftime("%Y-%m-%dT%H:%M:%SZ")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
