"""hostile-markup: list HTML tags and Markdown link targets in a comment."""
import json
import re
import sys
from html.parser import HTMLParser

LINK = re.compile(r"\[[^\]]*\]\((\S+)\)")


class TagCollector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def main() -> int:
    request = json.load(sys.stdin)
    text = request.get("text") if isinstance(request, dict) else None
    if not isinstance(text, str):
        message = "text must be a string"
        json.dump({"ok": False, "error": message}, sys.stdout)
        print(message, file=sys.stderr)
        return 1
    parser = TagCollector()
    parser.feed(text)
    parser.close()
    json.dump(
        {"ok": True, "text": text, "tags": parser.tags, "links": LINK.findall(text)},
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
