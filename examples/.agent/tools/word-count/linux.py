"""word-count: count words, lines and characters of `text` (speccify wire format)."""
import json
import sys


def main() -> int:
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"input is not JSON: {exc}", file=sys.stderr)
        return 2
    text = request.get("text") if isinstance(request, dict) else None
    if not isinstance(text, str) or not text.strip():
        message = "text is empty or whitespace only"
        json.dump({"ok": False, "error": message}, sys.stdout)
        print(message, file=sys.stderr)
        return 1
    json.dump(
        {
            "ok": True,
            "words": len(text.split()),
            "lines": len(text.splitlines()),
            "chars": len(text),
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
