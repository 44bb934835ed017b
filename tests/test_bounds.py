"""The kernels under Numba's bounds checking: no read or write outside an array.

An out-of-bounds read returns garbage or, when the address is unmapped, crashes
the process; neither shows in an ordinary run. ``NUMBA_BOUNDSCHECK=1`` compiles
the kernels with a check on every index (an IndexError instead), so a subprocess
with a fresh compile cache runs the public functions on shapes that take every
ranking path: short and long lists, cutoffs below and above the insertion path
(32 ranks), labels counted or selected, gain tables, every tie rule, the binary
measures' flagged groups (one score for all, too), the graded measures (with
DCG read off their whole ranking), and ``idcg``, whose scores
are an empty placeholder (it once read them). Heavy: the
checked kernels compile from scratch (a minute or two), so it runs with
``FASTNDCG_BOUNDSCHECK=1 python -m pytest tests/test_bounds.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(os.environ.get("FASTNDCG_BOUNDSCHECK") != "1",
                                 reason="run with FASTNDCG_BOUNDSCHECK=1 (every kernel "
                                        "compiled again with bounds checks: minutes)")]

CHILD = r"""
import numpy as np, fastndcg
rng = np.random.default_rng(0)
sizes = np.r_[rng.integers(1, 12, 300), rng.integers(100, 400, 20), [1000]]
mixed = np.r_[0, np.cumsum(sizes)]
n = mixed[-1]
scores = (rng.integers(0, 5, n) / 4).astype(np.float32)       # ties
labels = rng.integers(0, 5, n).astype(np.int8)
flabels = labels.astype(np.float64) + 0.5                        # not countable
wide = rng.integers(0, 60, n)                                    # past the label histogram
last = slice(mixed[-2], n)
for offsets, cut in ((mixed, slice(0, n)), (np.array([0, 1000]), last)):  # + one long list
    for k in ([1, 3, 10], [5, 70, 300], [1, 33, 100, 1000], [1, 64, 65], None):
        for lab in (labels, flabels, wide):
            lab = lab[cut]
            fastndcg.idcg(lab, offsets, k=k)
            fastndcg.idcg(lab, offsets, k=k, gain="linear")
            for ties in ("average", "stable", "optimistic", "pessimistic"):
                fastndcg.ndcg(scores[cut], lab, offsets, k=k, ties=ties)
                fastndcg.dcg(scores[cut], lab, offsets, k=k, ties=ties, gain="linear")
        fastndcg.ndcg(scores[cut], labels[cut], offsets, k=k, gain=[0, 1, 3, 7, 15])
        fastndcg.idcg(labels[cut], offsets, k=k, gain=[0, 1, 3, 7, 15])
    for ties in ("average", "stable", "optimistic", "pessimistic"):  # the flagged groups
        fastndcg.measure(scores[cut], labels[cut], offsets, ties=ties,
                         measure="AP RR P@5 R@100 Rprec Success@3 NumRelRet AP(rel=3) nDCG "
                         "Bpref Bpref(rel=3) SetP SetAP(rel=3) num_nonrel_judged_ret")
        fastndcg.measure(scores[cut] * 0, labels[cut], offsets, ties=ties, measure="AP RR@10")
        # the other measures: parameters, the judged bit, the graded step; NumRet alone
        # reads no flags at all
        fastndcg.measure(scores[cut], labels[cut] - 1, offsets, ties=ties, gain="linear",
                         negative_labels="keep",
                         measure="num_q relative_P.5 Rprec_mult.0.2,2 utility set_F.0.5 binG "
                                 "rbp_resid rbp_residual RBP(rel=2) rbp.p=0.5")
        fastndcg.measure(scores[cut], labels[cut], offsets, ties=ties, measure="NumRet")
        if ties in ("stable", "optimistic", "pessimistic"):
            fastndcg.measure(scores[cut], labels[cut], offsets, ties=ties, gain="linear",
                             measure="iprec_at_recall 11pt_avg ERR@20 ERR")
        if ties == "stable":
            fastndcg.measure(scores[cut], labels[cut] - 1, offsets, ties=ties, gain="linear",
                             negative_labels="keep", measure="infAP G ndcg_rel Rndcg")
        # DCG read off the graded step's whole ranking (deep cuts; float64 scores, which
        # the packed path does not take)
        graded = "ndcg_rel rbp.p=0.5" if ties in ("average", "stable") else "rbp.p=0.5"
        for s in (scores[cut], scores[cut].astype(np.float64)):
            fastndcg.measure(s, labels[cut], offsets, ties=ties, gain="linear",
                             measure="nDCG@100 nDCG@3 nDCG " + graded)
print("checked")
"""


def test_kernels_stay_inside_their_arrays(tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", FASTNDCG_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         env=env, timeout=1800)
    assert out.returncode == 0 and "checked" in out.stdout, out.stderr[-3000:]
