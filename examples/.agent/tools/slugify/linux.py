"""slugify: title -> URL slug (speccify wire format)."""
import json
import re
import sys
import unicodedata


def slugify(title: str, max_length: int = 60) -> str:
    folded = unicodedata.normalize("NFKD", title)
    ascii_only = "".join(c for c in folded if not unicodedata.combining(c))
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")
    if len(slug) > max_length:
        cut = slug[: max_length + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut else slug[:max_length]
    return slug


def main() -> int:
    request = json.load(sys.stdin)
    title = request.get("title") if isinstance(request, dict) else None
    if not isinstance(title, str) or not title.strip():
        print("title must be a non-empty string", file=sys.stderr)
        return 1
    json.dump({"slug": slugify(title, int(request.get("max_length", 60)))}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
