// sweep.csv: one tidy table of a sweep's finished points, gathered from
// each point's summary.json (analysis/run_summary.h) and comm_matrix.csv.
//
// One row per point, method and target: the point's index and axis values,
// then
//   method, label, reference      the method, its label, 1 for the method under study
//   final_accuracy, best_accuracy, virtual_s, epochs, bytes_sent, transfers
//   target, time_to_target_s      virtual seconds to the target on /eval/target's
//                                 metric; empty: not reached before the run ended
//   time_to_target_node_mean_s, time_to_target_node_min_s   the same on the
//                                 nodes' own models (empty where not evaluated)
//   merges, staleness_mean_s      what the method did: its merges and their mean
//                                 age (empty where it merges nothing)
//   partners                      each receiver's effective number of senders
//                                 (effective_partners), mean over nodes
//   starved_cuts                  cuts that no transfer crossed for longer than
//                                 /eval/starved_s (the run's warning), counted
//   time_to_target_interp_s, time_to_target_node_mean_interp_s,
//   time_to_target_node_min_interp_s   the times to the target, interpolated
//                                 between the evaluations around the crossing
//   final_accuracy_node_mean, final_accuracy_node_min   the nodes' own models
//                                 at the last evaluation (empty where not evaluated)
//   cross_region                  the share of finished transfers between two
//                                 regions (cross_region_share); empty without regions
// A method without targets has one row with the target cells empty. Wall
// times are left out, so that resumed, sharded and straight sweeps gather
// the same bytes.
#pragma once

#include <string>

#include "input/sweep.h"

namespace gossipsim {

std::string gather_sweep_csv(const Sweep& sweep, const std::string& out);

// provenance.json beside sweep.csv: what made the points (analysis/
// provenance.h), each distinct provenance (compared without the fields that
// do not change numbers) with the points it made:
//   {"provenances": [{"provenance": {...}, "points": [0, 1, ...]}, ...]}
// More than one entry means the sweep's points came from different builds,
// libraries or machines; plot says so beside its tables.
std::string gather_sweep_provenance(const Sweep& sweep, const std::string& out);

// analysis.json beside sweep.csv: what the sweep file declared its tables
// test (input/sweep.h's SweepAnalysis), for plot.
std::string sweep_analysis_json(const Sweep& sweep);

// Who talks to whom, from a run's comm_matrix.csv: per receiving node,
// exp of the entropy of where its finished transfers came from (k senders
// in equal shares: k; one: 1), averaged over the nodes that received any.
// NaN where the file is missing or holds no finished transfer.
double effective_partners(const std::string& comm_matrix_csv);

// Where models travel between regions, from a run's comm_regions.csv: the
// share of its finished transfers whose sender and receiver are in two
// different regions. NaN where the file is missing (a topology without
// regions) or holds no finished transfer.
double cross_region_share(const std::string& comm_regions_csv);

}  // namespace gossipsim
