"""Statistics over seeds, each a plain function of numbers: t intervals of
means and of geometric means of ratios; times to a target as censored
quantities (Kaplan-Meier, restricted means); the exact paired sign-flip
test, its smallest reachable p and the interval that inverts it; Holm and
Benjamini-Hochberg adjustments; a target's crossing interpolated between
two evaluations. docs/outputs.md ("The statistics of the tables") says how
the tables use them; tests/analysis/test_stats.py checks them against hand
computations, SciPy and statsmodels."""
import functools
import math

import numpy as np

# Two-sided 95% quantiles of Student's t by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df):
    """The 0.975 quantile of t with df degrees of freedom (the next smaller
    tabulated df, so never too narrow; 1.96 beyond 30)."""
    if df > 30:
        return 1.96
    return T975[max(k for k in T975 if k <= df)]


def interval(values):
    """Mean and the half-width of its 95% t-interval (NaN below 2 values)."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    if len(v) < 2:
        return float(v.mean()), math.nan
    return float(v.mean()), t975(len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v))


def ratio_interval(ratios):
    """Geometric mean of paired ratios and its 95% interval (t on the logs)."""
    m, h = interval(np.log(ratios))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


# ---- Time to a target as a censored quantity, and exact paired tests.
#
# A run that did not reach a target by its end is censored there: its time
# is "more than the run's length", not missing. Dropping such seeds biases a
# comparison towards the method that misses more often (issue 34: in the
# scheduling map under label skew, scheduling alone missed the target in 51
# seed-cells, naive overlap alone in 0). Every run of a cell ends at the same
# virtual time, so every censoring happens at that one horizon tau; then the
# Kaplan-Meier estimate of P(T > t) is the share of seeds not yet at the
# target for t < tau, and the restricted mean time to the target (the area
# under that curve up to tau; Royston and Parmar, BMC Med Res Methodol 2013)
# is the mean of min(T, tau) over the seeds.


def kaplan_meier(times, reached):
    """The Kaplan-Meier curve of time to target: [(t, S(t))] at each time a
    seed reached it, S the share of seeds still short of it just after t.
    `reached[i]` False: seed i is censored at times[i]."""
    order = sorted(range(len(times)), key=lambda i: (times[i], not reached[i]))
    at_risk, s, curve = len(times), 1.0, []
    i = 0
    while i < len(order):
        t = times[order[i]]
        events = censored = 0
        while i < len(order) and times[order[i]] == t:
            events += 1 if reached[order[i]] else 0
            censored += 0 if reached[order[i]] else 1
            i += 1
        if events:
            s *= 1 - events / at_risk
            curve.append((t, s))
        at_risk -= events + censored
    return curve


def restricted_mean(times, reached, tau):
    """The restricted mean time to target up to tau: the area under the
    Kaplan-Meier curve on [0, tau]."""
    area, last_t, last_s = 0.0, 0.0, 1.0
    for t, s in kaplan_meier(times, reached):
        if t >= tau:
            break
        area += last_s * (t - last_t)
        last_t, last_s = t, s
    return area + last_s * (tau - last_t)


def restricted_times(times, tau):
    """min(T, tau) per seed, an unreached target (None or inf) counting as tau."""
    return [tau if t is None or not math.isfinite(t) else min(t, tau) for t in times]


def signflip_p(differences):
    """Exact two-sided p of the paired sign-flip (randomization) test that
    the differences are symmetric about 0: the share of the 2^n sign
    assignments whose |sum| is at least the observed |sum| (Fisher's
    randomization test for paired data). Zeros (ties) are kept: they change
    no sum, so they only lower the smallest reachable p less than dropping
    them would suggest. Exact by enumeration up to 20 differences; from 13
    on the 2^n sums are counted as pairs of sums of the two halves (sorted,
    2^(n/2) each), which counts the same assignments in a thousandth of the
    time, so that an interval of 20 seeds (a hundred tests) takes
    milliseconds, not minutes."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n == 0:
        return 1.0
    if n > 20:
        raise ValueError("signflip_p enumerates 2^n assignments: at most 20 differences")
    observed = abs(d.sum())
    # A tolerance for the sums' rounding: an assignment equal to the
    # observed one in exact arithmetic counts as at least as extreme.
    threshold = observed - 1e-9 * max(1.0, observed)
    if n <= 12:
        return np.count_nonzero(np.abs(signed_sums(d)) >= threshold) / 2 ** n
    if threshold <= 0:
        return 1.0
    # |a + b| >= threshold > 0: a + b >= threshold or a + b <= -threshold,
    # never both; for each sum a of the first half, count the b of the
    # second half on either side.
    a = signed_sums(d[: n // 2])
    b = np.sort(signed_sums(d[n // 2:]))
    above = len(b) - np.searchsorted(b, threshold - a, side="left")
    below = np.searchsorted(b, -threshold - a, side="right")
    return float((above.sum() + below.sum()) / 2 ** n)


def signed_sums(d):
    """The sums of d under each of its 2^len(d) sign assignments."""
    return sign_assignments(len(d)) @ d


@functools.lru_cache(maxsize=None)
def sign_assignments(n):
    """The 2^n sign assignments of n values, one a row (+1 or -1, as floats:
    an interval's bisection tests the same n a hundred times, and building
    the matrix cost more than the product)."""
    signs = (((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
    signs.flags.writeable = False
    return signs


def smallest_p(differences):
    """The smallest p the sign-flip test can give these differences: 2 /
    2^k for k nonzero differences (1 when all are zero)."""
    k = int(np.count_nonzero(np.asarray(differences, dtype=float)))
    return min(1.0, 2.0 / 2 ** k) if k else 1.0


def signflip_interval(differences, alpha=0.05):
    """The confidence interval of the location shift of the differences,
    by inverting the sign-flip test: every shift delta for which the test of
    (d - delta) keeps p > alpha. None where even the widest shift is kept
    (too few nonzero differences for level alpha)."""
    d = np.asarray(differences, dtype=float)
    # Shifted away from every difference, none is zero: the smallest p is
    # 2 / 2^n, and below level alpha no shift can be rejected.
    if len(d) == 0 or 2.0 / 2 ** len(d) > alpha:
        return None
    centre = float(d.mean())
    span = float(d.max() - d.min()) + 1e-12

    def kept(delta):
        return signflip_p(d - delta) > alpha

    def edge(inside, outside):
        for _ in range(60):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if kept(mid) else (inside, mid)
        return inside
    return edge(centre, centre - 2 * span), edge(centre, centre + 2 * span)


def holm(pvalues):
    """Holm's step-down adjusted p-values (family-wise error control;
    Holm, Scand J Stat 1979), in the order given."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def benjamini_hochberg(pvalues):
    """Benjamini-Hochberg adjusted p-values (false discovery rate control;
    Benjamini and Hochberg, JRSS B 1995), in the order given."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        adjusted[i] = min(1.0, running)
    return adjusted.tolist()


def interpolated_crossing(times, accuracies, target):
    """The virtual time the accuracy crossed `target`, by linear
    interpolation between the last evaluation below it and the first at or
    above (the first evaluation's time if it is already there); None when
    never reached."""
    for k, (t, a) in enumerate(zip(times, accuracies)):
        if a is None or not math.isfinite(a) or a < target:
            continue
        if k == 0:
            return t
        t0, a0 = times[k - 1], accuracies[k - 1]
        if a0 is None or not math.isfinite(a0) or a <= a0:
            return t
        return t0 + (target - a0) / (a - a0) * (t - t0)
    return None
