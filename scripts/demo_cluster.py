"""`make demo-cluster`: `pyhudi demo` on a local standalone cluster (a master and a 1-core worker
started from the pyspark distribution), stopped afterwards whatever happens."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pyhudi.cli.main import main
from pyhudi.spark.deploy import standalone_cluster


def run(path: str) -> int:
    with tempfile.TemporaryDirectory(prefix="pyhudi-cluster-") as logs:
        with standalone_cluster(Path(logs)) as master:
            print(f"== standalone cluster at {master} (logs in {logs})", flush=True)
            return main(["demo", "--path", path, "--master", master, "--rows", "2000"])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1] if len(sys.argv) > 1 else "demo-data"))
