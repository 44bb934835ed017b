"""Agreement of two label sets: one counting pass per group of paired grades.

A group (a query, or the cells of the whole confusion matrix) is a run of pairs ``(ca[i], cb[i])``: the
codes of the two grades a document got, codes being positions in the sorted
distinct grades ``values``. Per group the kernel counts each code's uses by
either set, ranks the codes the group uses (the labels scikit-learn's
``cohen_kappa_score`` would see on that group alone), and sums what Cohen's kappa
and Krippendorff's alpha read:

* kappa with weights w (0/1, |i - j|, (i - j)^2 over those ranks) is
  ``1 - m * sum(w * confusion) / sum_kl(r_k c_l w_kl)``, r and c the two sets'
  counts of each rank and m the pairs;
* alpha of two coders (every document judged by both) is
  ``1 - (n - 1) * 2 * sum_u d(a_u, b_u) / sum_ck(n_c n_k d_ck)``, n = 2m pooled
  grades, n_c their counts, d the squared distance of the level: nominal 0/1,
  interval (v_c - v_k)^2, and ordinal, which is the interval distance between
  the grades' mid-ranks ``M_(g-1) + n_g / 2`` (M the cumulative pooled counts).

A group with a single distinct grade has no kappa or alpha (NaN): scikit-learn
returns NaN there and the ``krippendorff`` package refuses it.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .threads import run_chunks

# the columns of agreement_groups' output
KAPPA, KAPPA_LINEAR, KAPPA_QUADRATIC, ALPHA_NOMINAL, ALPHA_ORDINAL, ALPHA_INTERVAL = range(6)
N_STATS = 6


@kernel(inner=True)
def _group(ca, cb, weights, s, e, values, ra, rb, touched, rank, mid, out):
    weighted = len(weights) > 0
    m = 0
    n_touched = 0
    for i in range(s, e):  # count each code's uses; note the codes used, once each
        w = weights[i] if weighted else 1
        m += w
        a = ca[i]
        if ra[a] == 0 and rb[a] == 0:
            touched[n_touched] = a
            n_touched += 1
        ra[a] += w
        b = cb[i]
        if ra[b] == 0 and rb[b] == 0:
            touched[n_touched] = b
            n_touched += 1
        rb[b] += w
    used = touched[:n_touched]
    used.sort()
    # ranks, pooled counts, mid-ranks, and the marginal sums over the codes used
    mf = float(m)
    n = 2.0 * mf
    same = 0.0     # sum_k r_k c_k
    below_c = 0.0  # sum_{l < j} c_l
    below_lc = 0.0  # sum_{l < j} l c_l
    tot_lc = 0.0
    pooled_sq = 0.0  # sum_c n_c^2
    cum = 0.0
    val_sum = 0.0
    mid_sum = 0.0
    rank_sum = 0.0
    for j in range(n_touched):
        code = used[j]
        rank[code] = j
        r = float(ra[code])
        c = float(rb[code])
        tot_lc += j * c
        same += r * c
        nc = r + c
        pooled_sq += nc * nc
        mid[code] = cum + nc / 2.0
        cum += nc
        val_sum += nc * values[code]
        mid_sum += nc * mid[code]
        rank_sum += nc * j
    val_mean = val_sum / n
    mid_mean = mid_sum / n
    rank_mean = rank_sum / n
    # sum_kl r_k c_l |k - l| and (k - l)^2, and sum_c n_c (x_c - mean)^2
    e_lin = 0.0
    r_dev = 0.0
    c_dev = 0.0
    r_dev2 = 0.0
    c_dev2 = 0.0
    val_ss = 0.0
    mid_ss = 0.0
    for j in range(n_touched):
        code = used[j]
        r = float(ra[code])
        c = float(rb[code])
        above_c = mf - below_c - c
        above_lc = tot_lc - below_lc - j * c
        e_lin += r * (j * below_c - below_lc + above_lc - j * above_c)
        below_c += c
        below_lc += j * c
        dj = j - rank_mean
        r_dev += r * dj
        c_dev += c * dj
        r_dev2 += r * dj * dj
        c_dev2 += c * dj * dj
        dv = values[code] - val_mean
        val_ss += (r + c) * dv * dv
        dm = mid[code] - mid_mean
        mid_ss += (r + c) * dm * dm
    e_quad = mf * c_dev2 + mf * r_dev2 - 2.0 * r_dev * c_dev
    # the pairs again: the disagreements at each weight and level
    differ = 0
    lin = 0
    quad = 0
    val_d = 0.0
    mid_d = 0.0
    for i in range(s, e):
        a = ca[i]
        b = cb[i]
        if a != b:
            w = weights[i] if weighted else 1
            differ += w
            d = rank[a] - rank[b]
            lin += w * abs(d)
            quad += w * d * d
            dv = values[a] - values[b]
            val_d += w * dv * dv
            dm = mid[a] - mid[b]
            mid_d += w * dm * dm
    for j in range(n_touched):  # leave the counts zero for the next group
        ra[used[j]] = 0
        rb[used[j]] = 0
    nan = np.nan
    if n_touched < 2:
        for k in range(6):
            out[k] = nan
        return
    e_none = mf * mf - same
    out[0] = 1.0 - mf * differ / e_none if e_none > 0 else nan
    out[1] = 1.0 - mf * lin / e_lin if e_lin > 0 else nan
    out[2] = 1.0 - mf * quad / e_quad if e_quad > 0 else nan
    out[3] = 1.0 - (n - 1.0) * 2.0 * differ / (n * n - pooled_sq)
    out[4] = 1.0 - (n - 1.0) * mid_d / (n * mid_ss)
    out[5] = 1.0 - (n - 1.0) * val_d / (n * val_ss)


def agreement_groups(offsets, ca, cb, weights, values, chunks, out):
    """Kappa (unweighted, linear, quadratic) and alpha (nominal, ordinal, interval)
    of each group g of pairs ``offsets[g]:offsets[g + 1]`` into ``out[g]``; pair i
    counts ``weights[i]`` times (once each when ``weights`` is empty: the cells of
    a confusion matrix are pairs weighted by their counts). Chunks of groups
    (boundaries ``chunks``) run on several threads (:func:`.threads.run_chunks`)."""
    run_chunks(len(chunks) - 1, lambda c: _groups_chunk(chunks[c], chunks[c + 1], offsets, ca,
                                                        cb, weights, values, out))


@kernel
def _groups_chunk(g0, g1, offsets, ca, cb, weights, values, out):
    n_codes = len(values)
    ra = np.zeros(n_codes, np.int64)
    rb = np.zeros(n_codes, np.int64)
    touched = np.empty(n_codes, np.int64)
    rank = np.zeros(n_codes, np.int64)
    mid = np.zeros(n_codes, np.float64)
    for g in range(g0, g1):
        _group(ca, cb, weights, offsets[g], offsets[g + 1], values, ra, rb, touched, rank, mid,
               out[g])


@kernel
def pair_codes(offsets, match, la, lb, lo, size, ca, cb, n_both, cells):
    """The pairs of grades of two lined-up sets of judgments, coded: for each
    judgment t of the first set (groups ``offsets``) that the second set judges
    too (at ``match[t]`` >= 0), in order, ``ca[k]`` <- ``la[t] - lo`` and ``cb[k]``
    <- ``lb[match[t]] - lo`` (integral grades, none below ``lo``);
    ``n_both[g]`` <- group g's pairs; and, unless ``cells`` is empty, the pairs
    counted in it (``cells[ca * size + cb]``, a zeroed array of size * size
    cells, ``size`` the codes). Returns the number of pairs."""
    count = len(cells) > 0
    k = 0
    for g in range(len(offsets) - 1):
        k0 = k
        for t in range(offsets[g], offsets[g + 1]):
            m = match[t]
            if m >= 0:
                a = np.int64(la[t] - lo)
                b = np.int64(lb[m] - lo)
                ca[k] = a
                cb[k] = b
                if count:
                    cells[a * size + b] += 1
                k += 1
        n_both[g] = k - k0
    return k
