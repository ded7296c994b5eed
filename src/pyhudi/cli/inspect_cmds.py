"""`pyhudi show commits|timeline|fsview|properties|schema` and `pyhudi config list`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pyhudi.cli import concurrency_cmds
from pyhudi.cli.format import human_bytes, table
from pyhudi.config import all_options
from pyhudi.table.context import TableContext
from pyhudi.table.schema import latest_avro_schema
from pyhudi.timeline.archived import whole_timeline


def register(commands: argparse._SubParsersAction) -> None:
    show = commands.add_parser("show", help="inspect a table").add_subparsers(
        dest="what", required=True
    )
    for name, handler, doc in (
        ("commits", show_commits, "completed commits with their write stats"),
        ("timeline", show_timeline, "every instant of the active timeline, pending ones included"),
        ("fsview", show_fsview, "file groups and their latest file slices"),
        ("properties", show_properties, "hoodie.properties"),
        ("schema", show_schema, "the table schema (Avro)"),
    ):
        sub = show.add_parser(name, help=doc)
        sub.add_argument("path", help="table base path")
        sub.add_argument("--json", action="store_true", help="machine-readable output")
        if name in ("commits", "timeline"):
            sub.add_argument("--limit", type=int, default=0, help="only the newest N")
        if name == "fsview":
            sub.add_argument("--as-of", dest="as_of", default=None, help="instant time")
            sub.add_argument(
                "--all-slices", action="store_true", help="every slice, not only the latest"
            )
        sub.set_defaults(handler=handler)
    concurrency_cmds.register_show(show)
    config = commands.add_parser("config", help="option registry").add_subparsers(
        dest="what", required=True
    )
    listing = config.add_parser("list", help="every option key pyhudi knows, with default and doc")
    listing.add_argument("--grep", default="", help="only keys containing this text")
    listing.set_defaults(handler=config_list)


def show_commits(args: argparse.Namespace) -> int:
    ctx = TableContext.open(args.path)
    rows: list[dict[str, Any]] = []
    commits = list(ctx.active.timeline.commits())
    for instant in commits[-args.limit :] if args.limit else commits:
        m = ctx.active.commit_metadata(instant)
        rows.append(
            {
                "instant": instant.time,
                "action": instant.action.value,
                "operation": m.operation_type.value,
                "partitions": len(m.partition_to_write_stats),
                "files": len(m.write_stats()),
                "inserts": m.total("num_inserts"),
                "updates": m.total("num_update_writes"),
                "deletes": m.total("num_deletes"),
                "written": m.total("num_writes"),
                "bytes": m.total("total_write_bytes"),
                "replaced": len(m.replaced_file_ids()),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    headers = [
        "instant",
        "action",
        "operation",
        "partitions",
        "files",
        "inserts",
        "updates",
        "deletes",
        "written",
        "bytes",
        "replaced",
    ]
    print(
        table(
            headers, [[r[h] if h != "bytes" else human_bytes(r[h]) for h in headers] for r in rows]
        )
    )
    return 0


def show_timeline(args: argparse.Namespace) -> int:

    ctx = TableContext.open(args.path)
    active = {(i.time, i.action) for i in ctx.active.timeline}
    rows = [
        (
            i.time,
            i.action.value,
            i.state.value,
            "active" if (i.time, i.action) in active else "archived",
        )
        for i in whole_timeline(ctx)
    ]
    if args.limit:
        rows = rows[-args.limit :]
    if args.json:
        print(
            json.dumps(
                [dict(zip(("instant", "action", "state", "timeline"), r)) for r in rows], indent=2
            )
        )
    else:
        print(table(["instant", "action", "state", "timeline"], rows))
    return 0


def show_fsview(args: argparse.Namespace) -> int:
    ctx = TableContext.open(args.path)
    view = ctx.view()
    rows: list[dict[str, Any]] = []
    for group in view.file_groups(args.as_of):
        slices = group.slices if args.all_slices else group.slices[:1]
        for file_slice in slices:
            base = file_slice.base_file
            rows.append(
                {
                    "partition": group.partition_path,
                    "file_id": group.file_id,
                    "base_instant": file_slice.base_instant_time,
                    "base_file": base.file_name if base else None,
                    "base_size": base.size_bytes if base else 0,
                    "log_files": [log.file_name for log in file_slice.log_files],
                    "log_size": sum(log.size_bytes for log in file_slice.log_files),
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    headers = ["partition", "file_id", "base_instant", "base_size", "logs", "log_size"]
    print(
        table(
            headers,
            [
                [
                    r["partition"],
                    r["file_id"],
                    r["base_instant"],
                    human_bytes(r["base_size"]),
                    len(r["log_files"]),
                    human_bytes(r["log_size"]),
                ]
                for r in rows
            ],
        )
    )
    return 0


def show_properties(args: argparse.Namespace) -> int:
    ctx = TableContext.open(args.path)
    props = dict(sorted(ctx.config.props.items()))
    if args.json:
        print(json.dumps(props, indent=2))
    else:
        print(
            table(
                ["key", "value"],
                [(k, v if len(v) < 100 else v[:97] + "...") for k, v in props.items()],
            )
        )
    return 0


def show_schema(args: argparse.Namespace) -> int:

    ctx = TableContext.open(args.path)
    schema = latest_avro_schema(ctx)
    print(
        json.dumps(json.loads(schema), indent=2)
        if schema
        else "(no schema: the table has no commits)"
    )
    return 0


def config_list(args: argparse.Namespace) -> int:
    rows = [
        (o.key, o.kind, "" if o.default is None else o.default, o.doc)
        for o in all_options()
        if args.grep in o.key
    ]
    print(table(["key", "type", "default", "doc"], rows))
    return 0
