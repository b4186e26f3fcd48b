"""Append `- <line>` to notes/<filename> inside a throwaway temp workspace."""
import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(prog="append-note", description=__doc__)
    parser.add_argument("--filename", required=True)
    parser.add_argument("--line", required=True)
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*\.md", args.filename):
        print("filename must be a lower-case .md name", file=sys.stderr)
        return 2
    line = " ".join(args.line.splitlines()).strip()
    if not line:
        print("line must not be empty", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="notes-demo-"))
    try:
        notes = root / "notes"
        notes.mkdir()
        target = notes / args.filename
        with target.open("a", encoding="utf-8") as fh:
            fh.write(f"- {line}\n")
        size = target.stat().st_size
    finally:
        shutil.rmtree(root, ignore_errors=True)
    json.dump({"path": f"/notes/{args.filename}", "bytes": size}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
