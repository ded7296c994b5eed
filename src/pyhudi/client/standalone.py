"""Running every pending service of a table once (bounded streams, `pyhudi services run`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyspark.sql import SparkSession

from pyhudi.client.post_commit import archival_step, clean_step
from pyhudi.exceptions import HudiError
from pyhudi.services.clustering.execute import pending_clusterings, run_clustering
from pyhudi.services.compaction.execute import pending_compactions, run_compaction
from pyhudi.services.runner import runner_for
from pyhudi.table.context import TableContext

log = logging.getLogger(__name__)


def run_pending_services(
    spark: SparkSession, ctx: TableContext, options: Mapping[str, str]
) -> list[str]:
    """Execute pending compactions and clusterings, then clean and archive as configured. A
    compaction or clustering that fails (e.g. a clustering whose input a later write changed) does
    not keep clean and archival from running; its error is raised after them."""

    runner_for(ctx.uri).wait()
    reports: list[str] = []
    failure: HudiError | None = None
    try:
        if ctx.config.is_merge_on_read and pending_compactions(ctx):
            reports += [str(o) for o in run_compaction(spark, ctx, options, schedule=False)]
        if pending_clusterings(ctx):
            reports += [str(o) for o in run_clustering(spark, ctx, options, schedule=False)]
    except HudiError as err:
        log.warning("pending services of %s: %s (clean and archival run still)", ctx.uri, err)
        failure = err

    reports += clean_step(ctx.uri, options, False)
    reports += archival_step(ctx.uri, options, False)
    for report in reports:
        log.info("%s", report)
    if failure is not None:
        raise failure
    return reports
