"""`pyhudi log inspect FILE` and `pyhudi log verify PATH`: the log inspector the seed's author wished for."""

from __future__ import annotations

import argparse
import json
import os

from pyhudi.codec.log.inspect import inspect_log, verify_paths


def register(commands: argparse._SubParsersAction) -> None:
    log = commands.add_parser("log", help="inspect and verify Hudi log files").add_subparsers(
        dest="what", required=True
    )
    inspect = log.add_parser(
        "inspect", help="every block of a log file: offsets, sizes, headers, counts"
    )
    inspect.add_argument("file", help="a log file (.<fileId>_<instant>.log.<version>_<token>)")
    inspect.add_argument(
        "--records", action="store_true", help="also print the records of data and delete blocks"
    )
    inspect.add_argument("--json", action="store_true", help="machine-readable output")
    inspect.set_defaults(handler=inspect_command)
    verify = log.add_parser("verify", help="exit 0 when every block of every log file is valid")
    verify.add_argument("path", help="a log file, or a table / folder to search for log files")
    verify.add_argument("--json", action="store_true", help="machine-readable output")
    verify.set_defaults(handler=verify_command)


def inspect_command(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.file):
        print(f"error: no such log file: {args.file}")
        return 2
    report = inspect_log(args.file, with_records=args.records)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.format_text())
    return 0 if report.is_valid else 1


def verify_command(args: argparse.Namespace) -> int:
    if not os.path.exists(args.path):
        print(f"error: no such path: {args.path}")
        return 2
    reports = verify_paths([args.path])
    bad = [r for r in reports if not r.is_valid]
    if args.json:
        print(json.dumps({"files": len(reports), "invalid": [r.to_dict() for r in bad]}, indent=2))
    else:
        for report in bad:
            print(report.format_text())
        print(f"{len(reports)} log file(s) checked, {len(bad)} with corrupt blocks")
    return 1 if bad else 0
