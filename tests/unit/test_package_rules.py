"""The package's own rules (docs/architecture.md): the import check passes, `import pyhudi` loads no
pyspark, and every public result and error type is exported from `pyhudi`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyhudi

REPO = Path(__file__).resolve().parents[2]


def test_import_rules_hold_no_cycles_no_upward_imports() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check-imports")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "0 problem(s)" in done.stderr


def test_import_pyhudi_loads_no_pyspark() -> None:
    code = "import sys, pyhudi, pyhudi.cli.main; print(sorted(m for m in sys.modules if m.startswith('pyspark')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_result_and_error_type_is_exported() -> None:
    for name in (
        "CommitResult",
        "ServiceOutcome",
        "CleanResult",
        "ArchiveResult",
        "BootstrapResult",
        "TableExistsError",
        "HudiError",
    ):
        assert name in pyhudi.__all__
        assert getattr(pyhudi, name).__module__.startswith("pyhudi.")
    assert issubclass(pyhudi.TableExistsError, pyhudi.HudiError)
