"""Where the work of ``evaluate`` and ``compare`` runs: here, on a Dask cluster
(``--scheduler``, ``--workers``) or on Spark (``--spark``). Each engine is
imported when it is asked for; a missing extra is one line naming the install.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

from .. import _validate as V
from .parser import UsageError


def engine(args) -> str | None:
    """Where the work runs: "spark", "dask" or None (here); contradictory flags are
    usage errors."""
    if args.scheduler and args.workers:
        raise UsageError("--scheduler (an existing cluster) and --workers (a new local one) "
                         "contradict each other; give one")
    if args.spark is not None and (args.scheduler or args.workers):
        raise UsageError("--spark and --scheduler/--workers choose different engines; give one")
    if args.order_col is not None and args.spark is None:
        raise UsageError("--order-col is read by --spark only (one machine keeps the input "
                         "order); drop it, or add --spark")
    if args.spark is not None:
        return "spark"
    return "dask" if (args.scheduler or args.workers) else None


def on_spark(args, run):
    """``run(spark, fastndcg.spark)`` in a Spark session of master ``--spark``, Spark's
    own log kept out of the terminal (and left in a file when something failed)."""
    try:
        from pyspark.sql import SparkSession
        from .. import spark as fspark
    except ImportError:
        raise ValueError("--spark needs pyspark: pip install 'fastndcg[spark]'") from None
    if not re.fullmatch(r"local(\[(\*|\d+)(,\s*\d+)?\])?|(spark|k8s|mesos)://\S+|yarn",
                        args.spark):
        raise UsageError(f"--spark takes a Spark master URL (local, local[4], local[*], "
                         f"spark://host:7077, yarn, k8s://...), got {V.shown(args.spark)}")
    import warnings
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    # the JVM Spark starts inherits this stderr for its life: its banner and log go to
    # a file, so the command's own output and errors stay one line each
    log = tempfile.NamedTemporaryFile(prefix="fastndcg-spark-", suffix=".log", delete=False)
    saved = os.dup(2)
    try:
        sys.stderr.flush()
        os.dup2(log.fileno(), 2)
        spark = (SparkSession.builder.master(args.spark).appName("fastndcg")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as err:  # the JVM's errors reach Python as Py4J exceptions
        first = " ".join(str(err).strip().splitlines()[0].split()) if str(err).strip() else ""
        raise ValueError(f"cannot start Spark with master {args.spark!r}: "
                         f"{first or type(err).__name__} (Spark's log: {log.name})") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        out = run(spark, fspark)
    except fspark.SparkJobFailed as err:
        raise ValueError(f"{err} (Spark's log: {log.name})") from None  # one line, exit 1
    finally:
        spark.stop()
    os.unlink(log.name)  # nothing went wrong: Spark's log is of no use
    return out


def on_dask(args, run):
    """``run(fastndcg.dask, workers=N)`` or ``run(fastndcg.dask, client=Client)``
    (``--scheduler``), the client closed afterwards."""
    try:
        import distributed
        from .. import dask as fdask
    except ImportError:
        raise ValueError("--scheduler and --workers need Dask: pip install 'fastndcg[dask]'") from None
    if args.workers:
        return run(fdask, workers=args.workers)
    try:
        client = distributed.Client(args.scheduler, timeout=10)
    except (OSError, ValueError, TypeError) as err:
        raise ValueError(f"cannot reach the Dask scheduler at {args.scheduler!r}: "
                         f"{' '.join(str(err).split()) or type(err).__name__}; check the "
                         f"address (e.g. tcp://host:8786)") from None
    with client:
        return run(fdask, client=client)
