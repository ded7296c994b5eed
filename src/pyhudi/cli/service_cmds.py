"""`pyhudi compaction|clustering schedule|run|show`, `pyhudi clean`, `pyhudi archive`."""

from __future__ import annotations

import argparse
import json

from pyhudi.cli.format import table
from pyhudi.config.archival import ArchivalConfig
from pyhudi.config.unknown import check_service_options
from pyhudi.exceptions import ConfigError
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.services.archival.execute import archive
from pyhudi.services.archival.plan import plan_archival
from pyhudi.services.clean.execute import CleanConfig, run_clean
from pyhudi.table.context import TableContext


def _options(values: list[str] | None) -> dict[str, str]:
    options = {}
    for item in values or []:
        if "=" not in item:
            raise ConfigError(f"--option takes key=value, got {item!r}")
        key, value = item.split("=", 1)
        options[key.strip()] = value.strip()
    check_service_options(options)  # a misspelt -o key is an error, as in HudiTable's methods
    return options


def _add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="table base path")
    parser.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="a Hudi option (repeatable)"
    )


def register(commands: argparse._SubParsersAction) -> None:
    for service in ("compaction", "clustering"):
        group = commands.add_parser(service, help=f"{service} plans and runs").add_subparsers(
            dest="action", required=True
        )
        schedule = group.add_parser("schedule", help=f"write a {service} plan (.requested instant)")
        _add(schedule)
        schedule.set_defaults(handler=lambda a, s=service: _schedule(a, s))
        run = group.add_parser(
            "run", help=f"execute pending {service} plans (schedules one if none)"
        )
        _add(run)
        run.add_argument("--instant", default=None, help="only this pending instant")
        run.set_defaults(handler=lambda a, s=service: _run(a, s))
        show = group.add_parser("show", help=f"pending {service} plans")
        _add(show)
        show.add_argument("--json", action="store_true")
        show.set_defaults(handler=lambda a, s=service: _show(a, s))
    clean = commands.add_parser("clean", help="delete file versions no retained instant needs")
    _add(clean)
    clean.set_defaults(handler=_clean)
    archive = commands.add_parser("archive", help="move old instants to .hoodie/archived")
    _add(archive)
    archive.add_argument("--dry-run", action="store_true", help="only list what would be archived")
    archive.set_defaults(handler=_archive)


def _service(ctx: TableContext, service: str):  # type: ignore[no-untyped-def]
    from pyhudi.services.namespaces import ClusteringService, CompactionService

    return CompactionService(ctx) if service == "compaction" else ClusteringService(ctx)


def _schedule(args: argparse.Namespace, service: str) -> int:
    instant = _service(TableContext.open(args.path), service).schedule(_options(args.option))
    print(
        f"scheduled {service} {instant.time}"
        if instant
        else f"nothing to {service[:-3] if service.endswith('ing') else service}: no file slice qualifies"
    )
    return 0


def _run(args: argparse.Namespace, service: str) -> int:
    from pyhudi.spark.session import local_session

    spark = local_session(f"pyhudi-{service}")
    outcomes = _service(TableContext.open(args.path), service).run(
        spark, _options(args.option), instant=args.instant
    )
    for outcome in outcomes:
        print(outcome)
    if not outcomes:
        print(f"no {service} to run")
    return 0


def _show(args: argparse.Namespace, service: str) -> int:

    ctx = TableContext.open(args.path)
    rows = []
    for instant in _service(ctx, service).pending():
        plan = read_requested_plan(ctx.active, instant)
        if service == "compaction":
            units = [
                (op["partitionPath"], op["fileId"], len(op["deltaFilePaths"] or []))
                for op in plan["operations"]
            ]
        else:
            units = [
                (s["partitionPath"], s["fileId"], len(s["deltaFilePaths"] or []))
                for g in plan["clusteringPlan"]["inputGroups"]
                for s in g["slices"]
            ]
        rows += [
            {
                "instant": instant.time,
                "state": instant.state.value,
                "partition": p,
                "file_id": f,
                "log_files": n,
            }
            for p, f, n in units
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print(
            table(
                ["instant", "state", "partition", "file_id", "log_files"],
                [list(r.values()) for r in rows],
            )
        )
    else:
        print(f"no pending {service}")
    return 0


def _clean(args: argparse.Namespace) -> int:

    options = _options(args.option)
    result = run_clean(
        TableContext.open(args.path), CleanConfig.from_options(options), lock_options=options
    )
    print(result if result else "nothing to clean")
    return 0


def _archive(args: argparse.Namespace) -> int:

    ctx = TableContext.open(args.path)
    options = _options(args.option)
    config = ArchivalConfig.from_options(options)
    if args.dry_run:
        instants = plan_archival(ctx, config)
        print("\n".join(str(i) for i in instants) if instants else "nothing to archive")
        return 0
    print(archive(ctx, config, lock_options=options))
    return 0
