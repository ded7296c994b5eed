"""The `pyhudi` command line (in the spirit of hudi-cli): inspect tables, logs and run services."""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from collections.abc import Callable, Sequence

import pyhudi
from pyhudi.exceptions import HudiError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyhudi", description="Apache Hudi tables on PySpark, no Hudi jars."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"pyhudi {package_version()}",
        help="print the version and exit",
    )
    commands = parser.add_subparsers(dest="command")
    from pyhudi.cli import demo, inspect_cmds

    inspect_cmds.register(commands)
    demo.register(commands)
    for optional in (
        "pyhudi.cli.log_cmds",
        "pyhudi.cli.service_cmds",
        "pyhudi.cli.bootstrap_cmd",
        "pyhudi.cli.metadata_cmds",
        "pyhudi.cli.savepoint_cmds",
        "pyhudi.cli.version_cmds",
    ):
        try:
            module = __import__(optional, fromlist=["register"])
        except ImportError:
            continue
        module.register(commands)
    return parser


def package_version() -> str:
    """The installed distribution's version; the package's own `__version__` when pyhudi runs
    from a source tree that was never installed."""
    try:
        return importlib.metadata.version("pyhudi")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(pyhudi, "__version__", "unknown"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `pyhudi`: what it can do, not an error
        parser.print_help()
        return 0
    handler: Handler = args.handler
    try:
        return handler(args)
    except HudiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
