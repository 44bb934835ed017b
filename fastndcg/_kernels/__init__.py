"""Numba kernels, one module per step, loaded on first use.

* :mod:`.rank` -- ranking a query into tie groups (its ranked summary);
* :mod:`.ndcg` -- DCG and IDCG at every cutoff from a ranked summary, and NDCG;
* :mod:`.binary` -- the binary measures: accumulators over a query's flagged tie
  groups (AP, RR, P, R, ...);
* :mod:`.graded` -- the graded measures, over a query's gains in rank order and its
  ideal gains (G, ndcg_rel, Rndcg, rbp, ERR);
* :mod:`.score` -- the parallel driver: rank each query once, then measure, each
  measure by the kernel of its family;
* :mod:`.bundles` -- the named bundles of arrays the kernels take (plain Python);
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
* :mod:`.agreement` -- kappa and alpha of two label sets, one counting pass a query;
* :mod:`.codes` -- the integer mode codes (plain Python).

Importing this package costs nothing: Numba is imported (and cached kernels
loaded) only when a kernel is first looked up, so ``import fastndcg``, ``--help``
and usage errors never pay for the compiler.
"""

from __future__ import annotations

import importlib

from .codes import *  # noqa: F401,F403  (the mode codes, numba-free)

# a kernel's (or a kernel bundle's) name -> the submodule defining it
_WHERE = {
    "score_batch": "score", "make_cuts": "score",
    "dcg_chunk": "ndcg", "idcg_chunk": "ndcg", "dcg_short_chunk": "ndcg",
    "dcg_packed_chunk": "ndcg", "dcg_sparse_chunk": "ndcg", "idcg_hist_chunk": "ndcg",
    "ndcg_ratio": "ndcg",
    "measures_chunk": "binary", "measures_chunk_all": "binary", "graded_chunk": "graded",
    "Lists": "bundles", "Ideal": "bundles", "Rules": "bundles", "Measures": "bundles",
    "Outputs": "bundles",
    "scan_values": "scan", "scan_chunk": "scan", "column_totals": "scan",
    "join_docs": "join", "trec_keys": "join", "tied_groups": "join", "index_ids": "join", "lookup_ids": "join",
    "id_hashes": "join", "line_up": "join",
    "pack_short": "join",
    "hash_int64": "hashing", "hash_strings": "hashing",
    "run_starts_int64": "runs", "argsort_order": "rank", "at_or_above_kth": "rank",
    "nested_columns": "nested",
    "bootstrap_means": "resample", "signflip_means": "resample", "signflip_exact": "resample",
    "sign_table": "resample",
    "bucket_sums": "paired", "fix_normalize": "paired", "fix_to_float": "paired",
    "fix_to_int": "paired", "fix_dot": "paired", "bucket_bootstrap": "paired",
    "bucket_signflip": "paired",
    "FIX_LIMBS": "paired", "FIX_SHIFT": "paired",
    "agreement_groups": "agreement", "N_STATS": "agreement", "pair_codes": "agreement",
}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
