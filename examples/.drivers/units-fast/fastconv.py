"""fastconv.py --value N --from U --to U: print {"value", "unit"} as JSON."""
import argparse
import json
import sys

FACTORS = {
    "m": ("length", 1.0), "km": ("length", 1000.0), "ft": ("length", 0.3048),
    "in": ("length", 0.0254), "mi": ("length", 1609.344),
    "kg": ("mass", 1.0), "lb": ("mass", 0.45359237),
}
TO_CELSIUS = {"C": lambda v: v, "F": lambda v: (v - 32) * 5 / 9}
FROM_CELSIUS = {"C": lambda v: v, "F": lambda v: v * 9 / 5 + 32}


def main() -> int:
    parser = argparse.ArgumentParser(prog="fastconv", description=__doc__)
    parser.add_argument("--value", type=float, required=True)
    parser.add_argument("--from", dest="src", required=True)
    parser.add_argument("--to", dest="dst", required=True)
    args = parser.parse_args()
    if args.src in TO_CELSIUS and args.dst in FROM_CELSIUS:
        value = FROM_CELSIUS[args.dst](TO_CELSIUS[args.src](args.value))
    else:
        src, dst = FACTORS.get(args.src), FACTORS.get(args.dst)
        if not src or not dst or src[0] != dst[0]:
            print(f"unsupported conversion {args.src} -> {args.dst}", file=sys.stderr)
            return 3
        value = args.value * src[1] / dst[1]
    value = round(value, 6)
    json.dump({"value": int(value) if value.is_integer() else value, "unit": args.dst}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
