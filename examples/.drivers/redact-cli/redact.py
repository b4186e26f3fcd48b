"""Mask email addresses in --text; print {"text", "count"} as JSON."""
import argparse
import json
import re
import sys

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def main() -> int:
    parser = argparse.ArgumentParser(prog="redact", description=__doc__)
    parser.add_argument("--text", required=True)
    parser.add_argument("--mask", default="***")
    args = parser.parse_args()
    if not args.mask or len(args.mask) > 32:
        print("mask must be 1 to 32 characters", file=sys.stderr)
        return 2
    redacted, count = EMAIL.subn(args.mask, args.text)
    json.dump({"text": redacted, "count": count}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
