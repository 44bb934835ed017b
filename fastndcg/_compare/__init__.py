"""Comparing rankers: paired significance tests, confidence intervals and segments.

:func:`compare` scores every system with :func:`fastndcg.evaluate` (the one
partition scorer), lines the per-query values up by query id, and turns them
into decisions:

* per system: mean NDCG@k and its percentile bootstrap interval;
* per system against the baseline: the mean difference and its (paired)
  bootstrap interval, an effect size (mean difference / standard deviation of
  the differences, Cohen's d_z), the two-sided p-values of a paired randomization
  (sign-flip) test, a paired t-test and a Wilcoxon signed-rank test, the same
  p-values corrected for multiple comparisons across every test reported (Holm by
  default), and win / tie / loss counts;
* with ``segment``, all of it for each value of a column (market, device, ...).

Resampling runs in Numba (:mod:`fastndcg._kernels.resample`), in parallel
across resamples, each resample drawing from its own counter-based stream: the
same seed gives the same numbers whatever the thread count. The t and Wilcoxon
p-values come from :mod:`fastndcg._compare.stats` and equal scipy.stats' ``ttest_rel``
and ``wilcoxon`` (scipy is not needed at run time).

Decisions written down here (where there was a choice):

* The statistic of the randomization test is the mean difference; its p-value is
  ``(1 + #{|mean of flipped| >= |observed|}) / (1 + n_resamples)`` (a valid
  p-value, never 0), or exact over all ``2**n`` sign patterns when
  ``2**n <= n_resamples``, as ``scipy.stats.permutation_test`` does.
* When every difference is exactly 0 (identical rankings), all three p-values
  are 1 (scipy's t and Wilcoxon give NaN: no evidence of a difference either
  way) and the effect size is 0. Constant non-zero differences give an infinite
  effect size and a t-test p-value of 0, as scipy does.
* A query is a win when system - baseline > 0, a tie when it is exactly 0 (the
  Wilcoxon test drops the same queries as zero differences).
* Queries whose NDCG is NaN (``zero_idcg="nan"``: no relevant item) are left out
  of every test and counted in ``n_left_out``.
* With ``segment``, the tables hold one block per segment value and no row for
  all queries together (call again without ``segment`` for it); the correction is
  applied across every test reported: segments x systems x cutoffs.
* The default ``seed`` is 0, so a run can be repeated; change it to see the
  Monte Carlo error of the intervals and randomization p-values.

**Large comparisons** (``method="auto"`` above ``SCALE_QUERIES`` = 1,000,000
queries, all segments together; or ``method="buckets"``). A log whose score columns
are the systems is read once, every system scored on each chunk of whole queries
(:mod:`fastndcg._compare.paired`), and each partition keeps mergeable sums instead of the
per-query values, so memory does not grow with the number of queries and
:mod:`fastndcg.dask` and :mod:`fastndcg.spark` give the very same Comparison. Each
query goes to one of ``buckets`` (default 1,000) buckets by a seeded hash of its
id; the sums are fixed-point integers, so they are exact and the same bits for any
partitioning, batch size and thread count. Up to 1,000,000 queries the per-query
values are kept as well and the query-level methods above run on them, giving the
same answers as before. Above it:

* **Intervals**: the bootstrap resamples buckets instead of queries (each resample
  draws ``buckets`` buckets with replacement; a mean is the drawn buckets' sum
  over their queries). Queries are assigned to buckets independently of their
  values, so bucket sums are independent and identically distributed, and
  resampling them estimates the sampling distribution of the ratio of means as
  resampling queries does -- the "bucket" (or block) method of large online
  experimentation platforms (Deng, Lu & Litz, WSDM 2017, "Trustworthy analysis of
  online A/B tests"; the Poisson bootstrap of Chamandy et al., Google, 2012, is
  the per-unit alternative, whose cost grows as queries x resamples). Its error
  in the interval width is about ``sqrt(1 / (2 * buckets))`` relative (2% for
  1,000), next to the Monte Carlo error of the resampling itself.
* **Randomization test**: the signs of whole buckets' difference sums are flipped.
  Under the null hypothesis each query's difference is symmetric about 0, so each
  bucket sum is too, and the test keeps its level exactly, as the query-level
  test does.
* **t-test and effect size**: from the exact sums of the differences and of their
  squares (the variance formed exactly, rounded once); they agree with
  ``scipy.stats.ttest_rel`` on the same values.
* **Wilcoxon** ranks every query's |difference| among all the others: it needs all
  the values at once, so it is not run above the size (the text report says so);
  asked for by name there, it is an error that says what to use instead.
* ``per_query`` is None: the per-query values were not kept.

Runs compared against qrels (separate files lined up by query id) are held in
memory query by query whatever their size; above 1,000,000 queries their tests
use the bucket methods too, so a comparison's method depends only on its size. A
log whose documents are judged by ``qrels`` (its score columns the systems)
streams as a labelled log does.

**Prediction-powered differences** (``human_qrels=``, :mod:`fastndcg._compare.ppi`)
come from exact sums of every pair's differences (:class:`fastndcg.ppi.Sums`, per
segment): a streamed log adds them partition by partition, each system ranked
once and scored under both sets of judgments, and merges them exactly, so they
are the very bits of the query-level method's, in flat memory.

The package, a module a step (each importing only those listed after it):
:mod:`~fastndcg._compare.run` (the entry point, :func:`compare`);
:mod:`~fastndcg._compare.stream` (a log streamed in one pass: the API that
:mod:`fastndcg.dask` and :mod:`fastndcg.spark` use as well);
:mod:`~fastndcg._compare.queries` and :mod:`~fastndcg._compare.buckets` (the two
methods); :mod:`~fastndcg._compare.ppi` (prediction-powered differences, with
``human_qrels=``); :mod:`~fastndcg._compare.values` (per-query values, lined up);
:mod:`~fastndcg._compare.paired` (mergeable sums of a partition);
:mod:`~fastndcg._compare.comparison` (the result, :class:`Comparison`);
:mod:`~fastndcg._compare.plot` and :mod:`~fastndcg._compare.render` (drawing and
printing it); :mod:`~fastndcg._compare.arguments` (the arguments, checked);
:mod:`~fastndcg._compare.stats` (t, Wilcoxon, corrections, intervals).
"""

from __future__ import annotations

from .arguments import CORRECTIONS, METHODS, SCALE_QUERIES, TESTS, check_arguments
from .comparison import Comparison
from .run import compare

__all__ = ["compare", "Comparison", "check_arguments", "TESTS", "CORRECTIONS", "METHODS",
           "SCALE_QUERIES"]
