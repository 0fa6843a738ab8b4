"""The tick labels of a sweep's figures (analysis/plots/sweep.py) against
labels written out by hand: an axis whose values are JSON objects (a
partition, a distribution, a list of overrides) is labelled one member a line,
not as its raw JSON, which ran into the neighbouring panel."""
import os
import sys
import unittest

import matplotlib

matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
from plots.sweep import tick_label  # noqa: E402


class TickLabels(unittest.TestCase):
    def test_an_object_is_one_member_a_line_its_kind_first(self):
        self.assertEqual(tick_label('{"by":"region","classes_per_node":3,"kind":"shards"}'),
                         "shards\nby=region\nclasses_per_node=3")
        self.assertEqual(tick_label('{"kind":"iid"}'), "iid")
        self.assertEqual(tick_label('{"dist":"empirical","values":[25,50,100]}'), "empirical\nvalues=[25,50,100]")
        self.assertEqual(tick_label('{"max":100,"min":10,"dist":"uniform"}'), "uniform\nmax=100\nmin=10")

    def test_a_list_of_objects_lists_each_in_turn(self):
        self.assertEqual(tick_label('[{"bandwidth_mbps":1,"region_pair":["us-west-2","ap-northeast-1"]}]'),
                         "bandwidth_mbps=1\nregion_pair=[us-west-2,ap-northeast-1]")

    def test_anything_else_is_kept_as_it_is(self):
        for text in ("64", "0.3078", "maxmin", "[]", "[1,2]", "", "{not json"):
            self.assertEqual(tick_label(text), text)


if __name__ == "__main__":
    unittest.main()
