"""`pyhudi metadata show PATH`: the metadata table's partitions, file groups, sizes and records;
`pyhudi metadata validate PATH`: the metadata table compared with the files (exit 1 on a difference)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pyhudi.cli.format import human_bytes, table
from pyhudi.metadata import FILES_PARTITION, MetadataTable, validate
from pyhudi.table.context import TableContext


def register(commands: argparse._SubParsersAction) -> None:
    metadata = commands.add_parser(
        "metadata", help="the metadata table (.hoodie/metadata) of a table"
    ).add_subparsers(dest="what", required=True)
    show = metadata.add_parser(
        "show",
        help="metadata partitions (file groups, files, bytes, merged records) and the data "
        "partitions the files partition lists",
    )
    show.add_argument("path", help="the data table's base path")
    show.add_argument("--as-of", help="read as of this data-table instant (default: latest)")
    show.add_argument(
        "--file-groups", action="store_true", help="also list every metadata file group"
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=show_command)
    check = metadata.add_parser(
        "validate",
        help="compare the metadata table with the files on storage (partitions, files and sizes, "
        "latest file slices, column stats, bloom filters, record index); exit 1 on a difference",
    )
    check.add_argument("path", help="the data table's base path")
    check.add_argument("--as-of", help="validate as of this data-table instant (default: latest)")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.set_defaults(handler=validate_command)


def validate_command(args: argparse.Namespace) -> int:
    report = validate(args.path, as_of=args.as_of)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0 if report.ok else 1
    when = f" as of {args.as_of}" if args.as_of else ""
    print(f"metadata table of {args.path}{when}: checked {', '.join(report.checks)}")
    for note in report.skipped:
        print(f"  not checked: {note}")
    if report.ok:
        print("no difference")
        return 0
    print(f"{len(report.differences)} difference(s):")
    for difference in report.differences:
        print(f"  {difference}")
    return 1


def show_command(args: argparse.Namespace) -> int:
    mdt = MetadataTable.open(TableContext.open(args.path), as_of=args.as_of)
    report = metadata_report(mdt)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"metadata table of {args.path}" + (f" as of {args.as_of}" if args.as_of else ""))
    rows = [
        [
            p["name"],
            len(p["file_groups"]),
            p["base_files"],
            p["log_files"],
            human_bytes(p["size_bytes"]),
            p["records"],
        ]
        for p in report["partitions"]
    ]
    print(table(["partition", "file groups", "base", "logs", "size", "records"], rows))
    if args.file_groups:
        groups = [
            [p["name"], g["file_id"], g["base_file"] or "-", len(g["log_files"]), g["size_bytes"]]
            for p in report["partitions"]
            for g in p["file_groups"]
        ]
        print()
        print(table(["partition", "file group", "base file", "logs", "bytes"], groups))
    if report["files"] is not None:
        data_rows = [
            [d["partition"] or "(non-partitioned)", d["files"], human_bytes(d["size_bytes"])]
            for d in report["files"]
        ]
        print()
        print(table(["data partition (files)", "files", "size"], data_rows))
    return 0


def metadata_report(mdt: MetadataTable) -> dict[str, Any]:
    """What `metadata show` prints, as plain data."""
    partitions = [
        {
            "name": s.name,
            "records": s.record_count,
            "size_bytes": s.size_bytes,
            "base_files": s.base_file_count,
            "log_files": s.log_file_count,
            "file_groups": [
                {
                    "file_id": g.file_id,
                    "base_file": g.base_file,
                    "log_files": list(g.log_files),
                    "size_bytes": g.size_bytes,
                }
                for g in s.file_groups
            ],
        }
        for s in mdt.summaries()
    ]
    files = None
    if FILES_PARTITION in mdt.partitions():
        files = [
            {"partition": p, "files": len(listed), "size_bytes": sum(listed.values())}
            for p, listed in mdt.all_files().items()
        ]
    return {"partitions": partitions, "files": files}
