"""``fastndcg demo``: a seeded synthetic log built, evaluated, and checked against
the pure-Python reference on a sample, with the times side by side."""

from __future__ import annotations

import os
import tempfile
import time

from .. import _validate as V
from .._cache import package_cache_dir
from .parser import UsageError, show_progress


def run(args) -> int:
    import numpy as np
    import pyarrow.parquet as pq

    from .. import reference
    from .._arrow import as_numpy
    from .._progress import Progress
    from .._evaluate import evaluate
    from ..synth import check_replaceable, synthetic_log, write_synthetic_log

    k = [1, 3, 5, 10]
    if args.keep is not None:
        try:
            V.output_path(args.keep, "--keep", exts=(".parquet", ".pq"))
            check_replaceable(args.keep, "--keep")
        except ValueError as err:
            raise UsageError(str(err)) from None
    with tempfile.TemporaryDirectory(prefix="fastndcg-demo-") as tmp:
        path = args.keep or os.path.join(tmp, "demo-log.parquet")
        print(f"1. building a synthetic search log: {args.queries:,} queries (seed {args.seed})")
        bar = Progress(None, enabled=show_progress(args))
        t = time.perf_counter()
        rows = write_synthetic_log(path, args.queries, seed=args.seed, on_block=bar.update)
        bar.close()
        size = os.path.getsize(path)
        print(f"   {rows:,} rows, {size / 2**20:,.0f} MiB Parquet, written in "
              f"{time.perf_counter() - t:.1f} s{'' if not args.keep else f' to {path}'}")

        t = time.perf_counter()
        evaluate(synthetic_log(3, seed=args.seed), k=k)  # loaded from a cache, or compiled
        where = ("compiled with the package" if package_cache_dir() is not None else
                 "compiled on the first run, then loaded from the cache")
        print(f"2. fastndcg.evaluate, k={k}, gain=exp2, ties=average (kernels ready in "
              f"{time.perf_counter() - t:.1f} s: {where})")
        report = evaluate(path, k=k, progress=show_progress(args))
        print("   " + report.format_table().replace("\n", "\n   "))

        n_sample = min(args.sample, report.n_queries)
        print(f"3. the pure-Python reference (fastndcg.reference) on the first {n_sample:,} queries")
        first = pq.ParquetFile(path).iter_batches(batch_size=max(1, n_sample) * 200,
                                                  columns=["query_id", "score", "label"])
        batch = next(first)
        qid = as_numpy(batch.column("query_id"), zero_copy_only=True)
        take = int(np.searchsorted(qid, qid[0] + n_sample))
        scores = as_numpy(batch.column("score"), zero_copy_only=True)[:take].tolist()
        labels = as_numpy(batch.column("label"), zero_copy_only=True)[:take].tolist()
        ids = qid[:take].tolist()
        t = time.perf_counter()
        expected = reference.ndcg(scores, labels, query_ids=ids, k=k)
        ref_seconds = time.perf_counter() - t
        got = np.column_stack([as_numpy(report.per_query.column(f"ndcg@{c}"))[:n_sample]
                               for c in k])
        diff = float(np.abs(np.asarray(expected) - got).max()) if n_sample else 0.0
        per_row = ref_seconds / max(take, 1)
        estimate = per_row * report.n_rows
        print(f"   {take:,} rows in {ref_seconds:.2f} s ({take / max(ref_seconds, 1e-9) / 1e3:,.0f}k "
              f"rows/s); largest difference from fastndcg: {diff:.1e}")
        print(f"   the whole log would take the reference about {estimate:,.0f} s: fastndcg "
              f"was {estimate / report.seconds:,.0f}x faster ({report.seconds:.2f} s end to end, "
              f"reading Parquet included)")
        if diff > 1e-12:
            raise ValueError(f"fastndcg and the reference differ by {diff:.3g} on the sample")
    return 0
