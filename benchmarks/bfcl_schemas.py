"""BFCL schema conformance: convert every function spec to a kforge tool definition, validate
every expected call, and check that corrupted calls are rejected naming the field.

Prints a table and writes JSON. Usage: python benchmarks/bfcl_schemas.py [--data DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bfcl import CATEGORIES, CategoryReport, evaluate_category

__all__ = ["main"]

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "bfcl"
DEFAULT_JSON = Path("bench-results") / "bfcl_schemas.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the BFCL data folder")
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        help="write the results here (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if not (args.data / "possible_answer").is_dir():
        print(f"no BFCL data at {args.data} (expected possible_answer/ inside)", file=sys.stderr)
        return 2

    reports = [evaluate_category(args.data, category) for category in CATEGORIES]
    header = (
        f"{'category':<18} {'specs':>11} {'calls valid':>13} {'alt':>4} {'corrupted rejected':>19}"
    )
    print(header)
    print("-" * len(header))
    for r in reports:
        corrupted = sum(r.corruptions.values())
        rejected = sum(r.corruptions_rejected.values())
        print(
            f"{r.category:<18} {r.specs_converted:>5}/{r.specs:<5} {r.calls_valid:>6}/{r.calls:<6}"
            f" {r.calls_valid_with_alternative:>4} {rejected:>9}/{corrupted:<9}"
        )
    total = _totals(reports)
    print("-" * len(header))
    print(
        f"{'total':<18} {total['specs_converted']:>5}/{total['specs']:<5} "
        f"{total['calls_valid']:>6}/{total['calls']:<6} {total['calls_valid_with_alternative']:>4} "
        f"{total['corruptions_rejected']:>9}/{total['corruptions']:<9}"
    )
    for r in reports:
        for item in r.unrepresentable:
            print(f"cannot represent {item['id']}: {item['reason']}")
        for item in r.invalid_calls:
            print(f"expected call invalid {item['id']}: {item['reason']}")
        for miss in r.corruptions_missed:
            print(f"corruption not caught {miss['id']} ({miss['kind']} {miss['field']})")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"totals": total, "categories": [r.to_dict() for r in reports]}, indent=2),
        encoding="utf-8",
    )
    print(f"wrote {args.json}")
    return 0


def _totals(reports: list[CategoryReport]) -> dict[str, int]:
    return {
        "specs": sum(r.specs for r in reports),
        "specs_converted": sum(r.specs_converted for r in reports),
        "calls": sum(r.calls for r in reports),
        "calls_valid": sum(r.calls_valid for r in reports),
        "calls_valid_with_alternative": sum(r.calls_valid_with_alternative for r in reports),
        "corruptions": sum(sum(r.corruptions.values()) for r in reports),
        "corruptions_rejected": sum(sum(r.corruptions_rejected.values()) for r in reports),
    }


if __name__ == "__main__":
    raise SystemExit(main())
