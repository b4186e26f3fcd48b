"""convert.py VALUE FROM TO: print {"value", "unit"} as JSON."""
import json
import sys

# Factor to the base unit of each dimension (metre, kilogram).
LENGTH = {"m": 1.0, "km": 1000.0, "ft": 0.3048, "in": 0.0254, "mi": 1609.344}
MASS = {"kg": 1.0, "lb": 0.45359237}
TEMPERATURE = {"C", "F"}


def convert(value: float, src: str, dst: str) -> float:
    for table in (LENGTH, MASS):
        if src in table and dst in table:
            return value * table[src] / table[dst]
    if src in TEMPERATURE and dst in TEMPERATURE:
        if src == dst:
            return value
        return value * 9 / 5 + 32 if src == "C" else (value - 32) * 5 / 9
    raise ValueError(f"cannot convert {src} to {dst}")


def main(argv) -> int:
    if len(argv) != 3:
        print("usage: convert.py VALUE FROM TO", file=sys.stderr)
        return 2
    try:
        value = float(argv[0])
    except ValueError:
        print(f"not a number: {argv[0]!r}", file=sys.stderr)
        return 2
    try:
        result = round(convert(value, argv[1], argv[2]), 6)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 3
    if result.is_integer():
        result = int(result)
    json.dump({"value": result, "unit": argv[2]}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
