"""json-sum: total a list of numbers in blocks of three (speccify wire format)."""
import json
import math
import sys

BLOCK = 3


def main() -> int:
    request = json.load(sys.stdin)
    values = request.get("values") if isinstance(request, dict) else None
    if (
        not isinstance(values, list)
        or not values
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    ):
        message = "values must be a non-empty list of numbers"
        json.dump({"ok": False, "error": message}, sys.stdout)
        print(message, file=sys.stderr)
        return 1
    total = 0.0
    # Block-wise fsum keeps memory flat for very long lists.
    for start in range(0, len(values) - 1, BLOCK):
        total += math.fsum(values[start:start + BLOCK])
    total = round(total, 9)
    if total.is_integer():
        total = int(total)
    json.dump({"ok": True, "sum": total, "count": len(values)}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
