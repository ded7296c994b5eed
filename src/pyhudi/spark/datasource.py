"""Spark's Python Data Source API: `df.write.format("hudi")` and `spark.read.format("hudi")`.

`register(spark)` is the one call a user's own SparkSession (local, cluster or Spark Connect)
needs: it registers the `hudi` format and sets the runtime SQL conf the reader's partition
pruning needs (`spark.sql.python.filterPushdown.enabled`). Without it the format is still found
by Spark through the `pyspark_hudi` module (no pruning), wherever pyhudi is installed.
"""

from __future__ import annotations

import weakref

from pyspark.sql import SparkSession

from pyhudi.exceptions import ConfigError
from pyhudi.spark_compat import has_python_data_sources
from pyhudi.spark_env import is_connect, s3a_conf
from pyhudi.storage.s3conf import use_conf

#: The runtime SQL conf Spark checks before it lets a Python data source push filters down.
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
_registered: weakref.WeakSet[SparkSession] = weakref.WeakSet()
#: Spark Connect hands out a new client object per `df.sparkSession`: remember the server session.
_registered_remote: set[str] = set()


#: The session settings of Hudi's Spark bundle, which name classes only the bundle's jar has.
HUDI_BUNDLE_SETTINGS = {
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}


def check_session_settings(spark: SparkSession) -> None:
    """A session set up for Hudi's bundle (its extension, catalog or Kryo registrator) fails on
    classes pyhudi does not ship (`CANNOT_LOAD_CATALOG.PLUGIN_CLASS_NOT_FOUND` on every SQL
    statement): say at once which settings to remove."""
    found = []
    for key, hudi_class in HUDI_BUNDLE_SETTINGS.items():
        value = spark.conf.get(key, None) or ""
        if hudi_class in value:
            found.append(f"{key}={value}")
    if found:
        raise ConfigError(
            "this SparkSession is set up for Apache Hudi's Spark bundle, whose classes pyhudi "
            f"does not ship: remove {'; '.join(found)} from its settings (pyhudi needs none: "
            "docs/migrating.md)"
        )


def is_registered(spark: SparkSession) -> bool:
    """`register(spark)` has run for this session."""
    if is_connect(spark):
        return str(getattr(spark, "session_id", "")) in _registered_remote
    return spark in _registered


def register(spark: SparkSession) -> None:
    """Register the `hudi` format with this SparkSession (idempotent). On pyspark 3.5, which has
    no Python data sources, only `pyhudi.register(spark)`'s routing serves the format."""
    remote = str(getattr(spark, "session_id", "")) if is_connect(spark) else ""
    if spark in _registered or remote in _registered_remote:
        return
    check_session_settings(spark)
    use_conf(s3a_conf(spark))  # its S3A settings, for the S3 tables pyhudi opens from here on
    # pyspark 3.5 has no Python Data Source API: the session is only marked, and
    # `pyhudi.spark.routing` serves `format("hudi")` reads and writes.
    if has_python_data_sources():
        from pyhudi.spark.source import ApacheHudiDataSource, PruningHudiDataSource

        spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
        spark.dataSource.register(PruningHudiDataSource)
        spark.dataSource.register(ApacheHudiDataSource)
    _registered.add(spark)
    if remote:
        _registered_remote.add(remote)
