"""Numba kernels, one module per step, loaded on first use.

* :mod:`.rank` -- ranking a query into tie groups (its ranked summary);
* :mod:`.measures` -- the measures: accumulators over the ranked summary (DCG,
  AP, RR, P, R, ...), and IDCG;
* :mod:`.score` -- the parallel driver: rank each query once, then measure;
* :mod:`.scan` -- the validation pass over scores and labels, and the pass that
  totals per-query values;
* :mod:`.join` -- the qrels join and trec_eval's document order, by kind of id
  (integers as numbers, strings through :mod:`.strings`' byte-order helpers);
* :mod:`.runs` -- where runs of equal query ids start;
* :mod:`.hashing` -- stable hashes of query ids;
* :mod:`.resample` -- bootstrap and sign-flip resampling for comparisons;
* :mod:`.paired` -- mergeable paired statistics: fixed-point sums per hashed bucket
  of queries, and resampling over buckets;
* :mod:`.nested` -- Numba typed dicts of dicts (ranx's Run and Qrels) as columns;
* :mod:`.codes` -- the integer mode codes (plain Python).

Importing this package costs nothing: Numba is imported (and cached kernels
loaded) only when a kernel is first looked up, so ``import fastndcg``, ``--help``
and usage errors never pay for the compiler.
"""

from __future__ import annotations

import importlib

from .codes import *  # noqa: F401,F403  (the mode codes, numba-free)

# kernel name -> the submodule defining it
_WHERE = {
    "score_batch": "score", "dcg_chunk": "measures", "idcg_chunk": "measures",
    "dcg_short_chunk": "measures", "idcg_hist_chunk": "measures",
    "measures_chunk": "measures", "measures_chunk_all": "measures", "ndcg_ratio": "measures",
    "scan_values": "scan", "scan_chunk": "scan", "column_totals": "scan",
    "join_docs": "join", "trec_keys": "join", "index_ids": "join", "lookup_ids": "join",
    "hash_int64": "hashing", "hash_strings": "hashing",
    "run_starts_int64": "runs", "argsort_order": "rank",
    "nested_columns": "nested",
    "bootstrap_means": "resample", "signflip_means": "resample", "signflip_exact": "resample",
    "sign_table": "resample",
    "bucket_sums": "paired", "fix_normalize": "paired", "fix_to_float": "paired",
    "fix_to_int": "paired", "bucket_bootstrap": "paired", "bucket_signflip": "paired",
    "FIX_LIMBS": "paired", "FIX_SHIFT": "paired",
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
