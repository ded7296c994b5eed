"""Bootstrap of existing parquet/ORC tables: METADATA_ONLY skeletons and FULL_RECORD rewrites (layer 5)."""

from pyhudi.bootstrap.run import BootstrapResult, bootstrap, run_bootstrap_write

__all__ = ["BootstrapResult", "bootstrap", "run_bootstrap_write"]
