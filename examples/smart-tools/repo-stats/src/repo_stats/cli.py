"""repo-stats: line counts per extension, and LLM explanations of a directory."""
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def count_lines(path: Path) -> int:
    data = path.read_bytes()
    if b"\0" in data[:4096]:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def loc(args):
    root = Path(args[args.index("--path") + 1] if "--path" in args else ".")
    per_ext = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            ext = Path(name).suffix or "(none)"
            entry = per_ext.setdefault(ext, {"files": 0, "lines": 0})
            entry["files"] += 1
            entry["lines"] += count_lines(Path(dirpath) / name)
    total = sum(e["lines"] for e in per_ext.values())
    print(json.dumps({"path": str(root), "total_lines": total, "by_extension": per_ext}, sort_keys=True))
    return 0


def explain(args):
    if not os.environ.get("REPO_STATS_LLM_API_KEY"):
        print(json.dumps({"error": {"code": "no_provider",
                                    "message": "REPO_STATS_LLM_API_KEY is not set",
                                    "remedy": "Export REPO_STATS_LLM_API_KEY (see the llm-gateway README)."}}))
        return 3
    print(json.dumps({"error": {"code": "provider_unavailable",
                                "message": "this build ships without the gateway client",
                                "remedy": "Install repo-stats from the platform index."}}))
    return 3


HANDLERS = {"loc": loc, "explain": explain}

HELP = {
    "loc": "Deterministic. Counts files and lines per extension under `--path` "
           "(default `.`), skipping hidden entries. Prints one JSON object.",
    "explain": "Model-backed. Sends the file list and the first lines of each file under "
               "`--path` to the LLM gateway and prints a paragraph about the directory. "
               "Needs REPO_STATS_LLM_API_KEY; exits 3 without it.",
}


def main():
    args = sys.argv[1:]
    if not args or args[0] == "-h":
        print("usage: repo-stats loc [--path DIR]")
        return 0
    if args[0] == "--help":
        body = (HERE / "SMART_TOOL.md").read_text(encoding="utf-8").split("\n---\n", 1)[1].strip()
        print(f'<skill_content name="repo-stats">\nSkill directory: {HERE}\n'
              "Relative paths in this skill are relative to the skill directory.\n\n"
              f"# repo-stats\n\n{body}\n\n## Capabilities\n\n"
              "- `loc` [deterministic] -- Count lines and files per extension.\n"
              "</skill_content>")
        return 0
    verb, rest = args[0], args[1:]
    if "--help" in rest:
        print(f"# repo-stats {verb}\n\n{HELP[verb]}")
        return 0
    return HANDLERS[verb](rest)


if __name__ == "__main__":
    sys.exit(main())
