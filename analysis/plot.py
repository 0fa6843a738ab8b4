#!/usr/bin/python3
"""Plots and tables for gossipsim results.

    plot.py RESULTS_DIR [RESULTS_DIR ...] [--out DIR] [--window START,END] [--methods a,b] [--side-by-side]

Each RESULTS_DIR is a folder written by `gossipsim run`. Several folders of
the same scenario with different seeds draw one curve per method: the mean
over seeds with a band of its 95% confidence interval, clipped to the range
the metric can take. Folders are pooled as seeds only when their
scenario.json files differ in /seed alone; otherwise the plot refuses, naming
the first difference, unless --side-by-side draws each folder's methods as
separate configurations. Runs that were not evaluated (--kernels none) get
no accuracy, loss or consensus figure and no time-to-accuracy table. Writes
into --out (default: the first folder):
  accuracy.png        accuracy of the average model vs virtual time and vs epochs
  loss.png            test loss of the average model vs virtual time
  consensus.png       consensus distance vs virtual time
  staleness.png       histogram of staleness (virtual seconds, snapshot to merge)
  activity.png        the whole run from transfers.csv: transfers finished
                      per second, and each node's share of time with a
                      transfer of its own in flight (median and 10-90% band)
  comm_matrix.png     per method, transfers from each node to each node (heat
                      maps on one colour scale from 0)
  comm_regions.png    the same between regions (geo topologies)
  consensus_regions.png  consensus distance within and between regions (geo)
  timeline-<m>.png    Gantt chart per node, for methods run with --trace: down
                      periods, lost transfers, cross-traffic, and the values
                      that profiles applied beneath; the first 10 virtual s
                      unless --window START,END says otherwise
  figures.json        what each figure shows, for checks without pixels:
                      methods drawn, axis ranges, confidence-band edges,
                      colour-scale bounds, timeline windows, what was skipped
  time_to_accuracy.md / .csv   final accuracy and virtual time to each target
                      (mean and 95% interval over seeds, and in how many
                      seeds it was reached), and the speed-up of the
                      method under study (the one whose summary says
                      traits.reference) over each other method: the geometric
                      mean of the per-seed ratios with its 95% interval, and
                      whether that interval excludes 1
Simulation against reality: given results of `gossipsim run --real` and
simulated results of the same scenario (which may differ in /seed and in
/network's flow model alone), each method is drawn once per kind of run,
"label [real]" and "label [sim <model>]", repetitions of a kind pooled, on
the same figures; and beside them
  sim_vs_real.md / .csv   per method and kind of run: transfer durations
                      (median, p90), staleness (mean, p95), merges,
                      iterations, final accuracy and the time to each target, each the mean
                      over the kind's runs with the real runs' range, and
                      each simulation's difference from the real mean in %
                      (marked when it lies outside the real runs' range).
                      A real run marked invalid (summary.json) is refused.
A folder written by `gossipsim sweep` gets sweep.png instead (time to the
first target against the first axis, and the speed-up of the method under study,
with 95% intervals over seeds), and the same time_to_accuracy tables with
one section per combination of the axes other than /seed.
Uses matplotlib and numpy from Debian's archive only.
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Methods that never reach a target leave NaN points; matplotlib says so.
warnings.filterwarnings("ignore", message=".*(All-NaN|masked element).*")

from plots.cli import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:], __doc__))
