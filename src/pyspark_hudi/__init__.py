"""Lets Spark find the `hudi` format on its own: Spark registers the `DefaultSource` of every
importable `pyspark_*` module as a Python data source in each new session."""

from pyhudi.spark.source import HudiDataSource as DefaultSource

__all__ = ["DefaultSource"]
