"""Bootstrap of existing parquet/ORC tables: METADATA_ONLY skeletons and FULL_RECORD rewrites (layer 5)."""

from pyhudi.bootstrap.run import bootstrap, run_bootstrap_write
from pyhudi.model.results import BootstrapResult

__all__ = ["BootstrapResult", "bootstrap", "run_bootstrap_write"]
