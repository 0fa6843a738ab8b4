"""How plot names a kind of run (analysis/plots/results.py) and draws it
(analysis/plots/figure.py), against names and styles written out by hand:
runs under different flow models, or the same model with other queues, are
never pooled under one name nor drawn alike."""
import os
import sys
import unittest

import matplotlib

matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
from plots.cli import network_assumed  # noqa: E402
from plots.figure import kind_style  # noqa: E402
from plots.results import run_kind  # noqa: E402


def kind(network):
    return run_kind({}, {"network": network})


class Kinds(unittest.TestCase):
    def test_each_model_and_its_queues_have_a_name_of_their_own(self):
        self.assertEqual(run_kind({"real": {"valid": True}}, {}), "real")
        self.assertEqual(kind({}), "sim maxmin")
        self.assertEqual(kind({"model": "slowstart"}), "sim slowstart")
        self.assertEqual(kind({"model": "slowstart", "slowstart": {"congestion": "none"}}), "sim slowstart")
        self.assertEqual(kind({"model": "slowstart", "slowstart": {"congestion": "bbr"}}), "sim slowstart+bbr")
        self.assertEqual(kind({"model": "slowstart", "slowstart": {"congestion": "bbr", "round_sending": "burst"}}),
                         "sim slowstart+bbr")
        self.assertEqual(kind({"model": "slowstart", "slowstart": {"congestion": "cubic", "round_sending": "acked"}}),
                         "sim slowstart+cubic+acked")
        self.assertEqual(kind({"model": "slowstart", "slowstart": {"congestion": "bbr", "round_sending": "paced"}}),
                         "sim slowstart+bbr+paced")
        # Options of a model not in use name nothing.
        self.assertEqual(kind({"model": "tcp", "slowstart": {"congestion": "bbr"}}), "sim tcp")

    def test_a_title_names_the_reading_of_the_rounds(self):
        def title(slowstart):
            return network_assumed({"network": {"model": "slowstart", "slowstart": slowstart}})
        self.assertEqual(title({"congestion": "bbr"}), "slowstart: fresh connections, bbr queues")
        self.assertEqual(title({"congestion": "bbr", "round_sending": "paced"}),
                         "slowstart: fresh connections, bbr queues, paced rounds")
        self.assertEqual(title({"connections": "warm", "congestion": "cubic", "round_sending": "acked"}),
                         "slowstart: warm connections, cubic queues, acked rounds")

    def test_the_two_readings_of_the_queues_are_drawn_apart(self):
        self.assertEqual(kind_style("sim slowstart+cubic")["ls"], "--")
        self.assertEqual(kind_style("sim slowstart+cubic+acked")["ls"], (0, (4, 1.5, 1, 1.5, 1, 1.5)))
        self.assertEqual(kind_style("sim slowstart+bbr+paced")["ls"], (0, (8, 2)))
        self.assertEqual(kind_style("real")["ls"], "-")


if __name__ == "__main__":
    unittest.main()
