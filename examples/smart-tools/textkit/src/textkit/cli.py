"""textkit CLI: `stats` (deterministic) and `summarize` (model-backed).

Never reads stdin. Every run prints one JSON document on stdout; `--help`
and `-h` print text instead.
"""
import json
import os
import sys
from pathlib import Path

TOOL = "textkit"
VERSION = "0.3.1"
REPOSITORY = "https://git.example.com/platform/textkit"
HERE = Path(__file__).resolve().parent
PROVIDER_ENV = "TEXTKIT_PROVIDER_KEY"

# (name, model_backed, summary)
CAPABILITIES = (
    ("stats", False, "Count words and characters."),
    ("summarize", True, "Summarise text with a model."),
)

CAPABILITY_BODIES = {
    "stats": """Deterministic. Counts the words, characters and lines of `--text`.
Needs no provider and no network; the same input always gives the same answer.

## Arguments

- `--text TEXT` (required): the text to measure.

## Result

One JSON object on stdout, exit 0, e.g. `{"words": 2, "chars": 11, "lines": 1}`.
Words are runs of non-whitespace; characters are Unicode code points.

## Failures

- `--text` missing: exit 2, error code `usage`.""",
    "summarize": f"""Model-backed. Asks the configured summarisation model for a short
summary of `--text`. Results vary between runs.

## Arguments

- `--text TEXT` (required): the text to condense.
- `--sentences N` (optional, 1-10, default 3): length of the summary.

## Result

One JSON object on stdout, exit 0: `{{"summary": "...", "sentences": 3}}`.

## Failures

- No `{PROVIDER_ENV}` in the environment: exit 3, error code `no_provider`,
  with the remedy in the envelope. There is no deterministic fallback.
- Bad arguments: exit 2, error code `usage`.""",
}

USAGE = f"""usage: {TOOL} <capability> [options]
       {TOOL} -h | --help | --version
capabilities: stats, summarize
`{TOOL} --help` prints the full guide; `{TOOL} <capability> --help` one capability."""


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")


def fail(code: str, message: str, remedy: str, status: int) -> int:
    emit({"error": {"code": code, "message": message, "remedy": remedy}})
    print(f"{TOOL}: {message}", file=sys.stderr)
    return status


def manifest_body() -> str:
    text = (HERE / "SMART_TOOL.md").read_text(encoding="utf-8")
    if text.startswith("---"):
        end = text.find("\n---", 3)
        text = text[end + 4:] if end != -1 else text
    return text.strip()


def skill(name: str, extra_header: list[str], body: str) -> str:
    lines = [
        f'<skill_content name="{name}">',
        f"Skill directory: {HERE}",
        f"Repository: {REPOSITORY}",
        "Relative paths in this skill are relative to the skill directory.",
        *extra_header,
        "",
        f"# {name}",
        "",
        body,
        "</skill_content>",
    ]
    return "\n".join(lines)


def full_help() -> str:
    caps = "\n".join(
        f"- `{name}` [{'model-backed' if mb else 'deterministic'}] -- {summary}"
        for name, mb, summary in CAPABILITIES
    )
    body = (
        f"{manifest_body()}\n\n## Capabilities\n\n"
        f"Each has its own skill: `{TOOL} <capability> --help`.\n\n{caps}\n\n"
        "<skill_resources>\n  <file>SMART_TOOL.md</file>\n  <file>cli.py</file>\n</skill_resources>"
    )
    return skill(TOOL, [], body)


def capability_help(name: str) -> str:
    header = ["", f"Part of `{TOOL}`; `{TOOL} --help` is the tool's skill."]
    return skill(f"{TOOL} {name}", header, CAPABILITY_BODIES[name])


def parse_options(args: list[str], allowed: set[str]) -> dict:
    options, i = {}, 0
    while i < len(args):
        arg = args[i]
        key, eq, value = arg.partition("=")
        if key not in allowed:
            raise ValueError(f"unexpected argument {arg!r}")
        if not eq:
            if i + 1 >= len(args):
                raise ValueError(f"{key} needs a value")
            i += 1
            value = args[i]
        options[key] = value
        i += 1
    return options


def run_stats(args: list[str]) -> int:
    try:
        options = parse_options(args, {"--text"})
        text = options["--text"]
    except (ValueError, KeyError) as exc:
        message = str(exc) if isinstance(exc, ValueError) else "--text is required"
        return fail("usage", message, f"Run `{TOOL} stats --help`.", 2)
    emit({"words": len(text.split()), "chars": len(text), "lines": len(text.splitlines())})
    return 0


def run_summarize(args: list[str]) -> int:
    if not os.environ.get(PROVIDER_ENV):
        return fail(
            "no_provider",
            f"summarize is model-backed and no provider is configured ({PROVIDER_ENV} is not set).",
            f"Set {PROVIDER_ENV}; see docs/providers.md. `{TOOL} stats` works without a provider.",
            3,
        )
    try:
        options = parse_options(args, {"--text", "--sentences"})
        text = options["--text"]
        sentences = int(options.get("--sentences", "3"))
        if not 1 <= sentences <= 10:
            raise ValueError("--sentences must be between 1 and 10")
    except (ValueError, KeyError) as exc:
        message = str(exc) if isinstance(exc, ValueError) else "--text is required"
        return fail("usage", message, f"Run `{TOOL} summarize --help`.", 2)
    # This distribution ships without a provider client (offline demo build).
    return fail(
        "provider_unavailable",
        f"a provider key is set but this build has no provider client (text of {len(text)} chars not sent).",
        "Install textkit from the platform index to get the provider client.",
        3,
    )


HANDLERS = {"stats": run_stats, "summarize": run_summarize}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(USAGE, file=sys.stderr)
        return fail("usage", "no capability given", f"Run `{TOOL} --help`.", 2)
    first, rest = args[0], args[1:]
    if first == "--help":
        print(full_help())
        return 0
    if first == "-h":
        print(USAGE)
        return 0
    if first == "--version":
        print(f"{TOOL} {VERSION}")
        return 0
    if first not in HANDLERS:
        known = ", ".join(HANDLERS)
        return fail(
            "unknown_capability",
            f"unknown capability {first!r}",
            f"Use one of: {known}. Run `{TOOL} --help` for the guide.",
            2,
        )
    if "--help" in rest:
        print(capability_help(first))
        return 0
    if "-h" in rest:
        print(f"usage: {TOOL} {first} " + ("--text TEXT" if first == "stats" else "--text TEXT [--sentences N]"))
        return 0
    return HANDLERS[first](rest)


if __name__ == "__main__":
    sys.exit(main())
