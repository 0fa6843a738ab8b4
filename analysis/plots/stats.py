"""Statistics over seeds: t intervals of means and of geometric means of
paired ratios."""
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
