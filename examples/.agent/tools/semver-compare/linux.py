"""semver-compare: SemVer 2.0.0 precedence of `candidate` against `current`."""
import json
import re
import sys

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def parse(field, value):
    match = SEMVER.match(value) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"{field} is not a SemVer 2.0.0 version: {value!r}")
    core = tuple(int(part) for part in match.group(1, 2, 3))
    pre = match.group(4)
    return core, pre.split(".") if pre else []


def compare_pre(a, b):
    if not a or not b:  # no pre-release ranks above any pre-release
        return (len(a) == 0) - (len(b) == 0)
    for x, y in zip(a, b):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))


def main() -> int:
    try:
        request = json.load(sys.stdin)
        current = parse("current", request.get("current"))
        candidate = parse("candidate", request.get("candidate"))
    except (ValueError, AttributeError) as exc:
        json.dump({"ok": False, "error": str(exc)}, sys.stdout)
        print(exc, file=sys.stderr)
        return 1
    if candidate[0] != current[0]:
        order = 1 if candidate[0] > current[0] else -1
    else:
        order = compare_pre(candidate[1], current[1])
    relation = {-1: "older", 0: "same", 1: "newer"}[order]
    json.dump({"ok": True, "order": order, "relation": relation}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
