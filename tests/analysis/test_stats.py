"""The statistics of analysis/plots/stats.py against values computed by hand
and by SciPy and statsmodels (Debian's python3-scipy, python3-statsmodels)."""
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
from plots import stats  # noqa: E402


class Censoring(unittest.TestCase):
    def test_kaplan_meier_and_restricted_mean_by_hand(self):
        # Seeds reach the target at 5, 10, 10 s; the fourth never does in
        # its 40 s. After 5 s 3/4 remain, after 10 s 3/4 x (1 - 2/3) = 1/4.
        times, reached = [5, 10, 10, 40], [True, True, True, False]
        self.assertEqual(stats.kaplan_meier(times, reached), [(5, 0.75), (10, 0.25)])
        # Area: 5 x 1 + 5 x 0.75 + 30 x 0.25 = 16.25, the mean of min(T, 40).
        self.assertAlmostEqual(stats.restricted_mean(times, reached, 40), 16.25)
        self.assertAlmostEqual(stats.restricted_mean(times, reached, 40),
                               np.mean(stats.restricted_times([5, 10, 10, None], 40)))

    def test_all_reached_none_reached_one_sided(self):
        self.assertAlmostEqual(stats.restricted_mean([4, 8], [True, True], 40), 6.0)
        self.assertAlmostEqual(stats.restricted_mean([40, 40], [False, False], 40), 40.0)
        self.assertEqual(stats.kaplan_meier([40, 40], [False, False]), [])
        # One method reaches in every seed, the other in none: the
        # restricted times keep the seeds a dropped-seed ratio would lose.
        ref = stats.restricted_times([10, 12, 9], 40)
        other = stats.restricted_times([None, math.inf, None], 40)
        self.assertEqual(other, [40, 40, 40])
        self.assertTrue(all(o > r for o, r in zip(other, ref)))
        # A censoring inside the run (a shorter run) leaves the risk set.
        curve = stats.kaplan_meier([2, 3, 6], [True, False, True])
        self.assertEqual([t for t, _ in curve], [2, 6])
        self.assertAlmostEqual(curve[0][1], 1 - 1 / 3)
        self.assertEqual(curve[1][1], 0.0)


class SignFlip(unittest.TestCase):
    def test_smallest_p_for_5_and_10_seeds(self):
        self.assertAlmostEqual(stats.signflip_p([0.1, 0.2, 0.3, 0.4, 0.5]), 2 / 32)
        self.assertAlmostEqual(stats.smallest_p([0.1] * 5), 0.0625)  # five seeds can never reach 5%
        self.assertAlmostEqual(stats.signflip_p(list(np.linspace(0.1, 1, 10))), 2 / 1024)
        self.assertAlmostEqual(stats.smallest_p([0.1] * 10), 2 / 1024)

    def test_ties_by_hand(self):
        # Zeros change no sum: |+-1 +-2 +-3| >= 6 only with one sign: 2/8.
        self.assertAlmostEqual(stats.signflip_p([0, 0, 1, 2, 3]), 0.25)
        self.assertAlmostEqual(stats.smallest_p([0, 0, 1, 2, 3]), 0.25)
        self.assertEqual(stats.signflip_p([0, 0, 0]), 1.0)

    def test_against_scipy_permutation_test(self):
        from scipy.stats import permutation_test
        rng = np.random.default_rng(3)
        for n in (5, 8, 10, 12):
            d = rng.normal(0.3, 1.0, n)
            ours = stats.signflip_p(d)
            theirs = permutation_test((d,), np.sum, permutation_type="samples", alternative="two-sided",
                                      n_resamples=2 ** n).pvalue
            # SciPy doubles the smaller one-sided p; for a symmetric null
            # both equal |sum| >= |observed| counting.
            self.assertAlmostEqual(ours, theirs, places=12, msg=f"n={n}")

    def test_the_halves_count_what_the_enumeration_counts(self):
        # 13 to 20 differences are counted in two halves: the same p as
        # enumerating all 2^n sign assignments, ties and zeros included.
        rng = np.random.default_rng(7)
        for n in (13, 16, 20):
            for d in (rng.normal(0.1, 1, n), np.round(rng.normal(0, 1, n), 1),
                      np.concatenate([np.zeros(3), rng.normal(0.5, 1, n - 3)]), np.full(n, 0.25)):
                whole = float(np.mean(np.abs(stats.signed_sums(d)) >= abs(d.sum()) - 1e-9 * max(1.0, abs(d.sum()))))
                self.assertEqual(stats.signflip_p(d), whole, (n, list(d)))
        self.assertEqual(stats.signflip_p(np.zeros(16)), 1.0)
        self.assertAlmostEqual(stats.signflip_p(np.linspace(0.1, 1, 20)), 2 / 2 ** 20)

    def test_interval_inverts_the_test(self):
        d = [0.1, 0.25, 0.05, 0.3, 0.2, 0.15, 0.4]
        low, high = stats.signflip_interval(d)
        self.assertLess(low, np.mean(d))
        self.assertGreater(high, np.mean(d))
        self.assertGreater(stats.signflip_p(np.array(d) - (low + 1e-6)), 0.05)
        self.assertLessEqual(stats.signflip_p(np.array(d) - (low - 1e-3)), 0.05)
        self.assertIsNone(stats.signflip_interval([0.1, 0.2, 0.3, 0.4, 0.5]))  # 5 seeds: no interval at 5%


class Multiplicity(unittest.TestCase):
    P = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.012]

    def test_holm_and_bh_against_statsmodels(self):
        from statsmodels.stats.multitest import multipletests
        for method, ours in (("holm", stats.holm), ("fdr_bh", stats.benjamini_hochberg)):
            theirs = multipletests(self.P, method=method)[1]
            np.testing.assert_allclose(ours(self.P), theirs, rtol=0, atol=1e-15, err_msg=method)

    def test_holm_by_hand(self):
        # Sorted 0.005, 0.01, 0.012, 0.03, 0.04, 0.2, 0.5 times 7, 6, 5, ...: 0.035, 0.06, 0.06 (running max), ...
        adjusted = stats.holm(self.P)
        self.assertAlmostEqual(adjusted[3], 0.035)
        self.assertAlmostEqual(adjusted[0], 0.06)
        self.assertAlmostEqual(adjusted[6], 0.06)


class Interpolation(unittest.TestCase):
    def test_linear_between_the_evaluations_around_the_crossing(self):
        # 0.6 at 10 s, 0.8 at 20 s: 0.7 is crossed at 15 s, 0.75 at 17.5 s.
        times, acc = [0, 10, 20, 30], [0.1, 0.6, 0.8, 0.9]
        self.assertAlmostEqual(stats.interpolated_crossing(times, acc, 0.7), 15.0)
        self.assertAlmostEqual(stats.interpolated_crossing(times, acc, 0.75), 17.5)
        self.assertEqual(stats.interpolated_crossing(times, acc, 0.05), 0)  # at the first evaluation
        self.assertEqual(stats.interpolated_crossing(times, acc, 0.8), 20)  # exactly at an evaluation
        self.assertIsNone(stats.interpolated_crossing(times, acc, 0.95))


if __name__ == "__main__":
    unittest.main()
