// Writing a method's results: tidy CSV (one row per observation, with the
// method's label in every row so files concatenate), summary.json and the
// optional Chrome trace (chrome://tracing, Perfetto).
//
//   metrics.csv    method, time_s, epochs, iterations, accuracy, loss (average
//                  model), node_accuracy_{mean,min,max}, node_loss_{mean,min,max},
//                  consensus, bytes_sent, transfers, merges
//   transfers.csv  method, src, dst, bytes, snapshot_s, start_s, finish_s,
//                  merge_s, staleness_s, staleness_iterations (empty merge
//                  fields: the run ended before the merge, or the transfer
//                  was lost: events.csv says which)
//   nodes.csv      method, node, compute_s, idle_s, communicating_s,
//                  iterations, sent, received, down_s (churn)
//   events.csv     method, time_s, kind, target, value, detail: what happened
//                  to the WAN (NetworkEventRow in sim/recorder.h: capacity,
//                  latency and speed changes, crash/leave/join, lost
//                  transfers with their reason, cross-traffic flows)
//   comm_matrix.csv   method, src, dst, transfers, bytes, lost: per pair
//                  that ever started a transfer (finished ones counted)
//   comm_regions.csv  method, src_region, dst_region, transfers, bytes:
//                  every pair of regions (geo topologies only)
//   consensus_regions.csv  method, time_s, consensus, within, between: the
//                  consensus distance split within and between regions
//                  (geo topologies only; consensus = within + between)
// Times are virtual seconds with nanosecond precision.
#pragma once

#include <filesystem>
#include <string>

#include "sim/runner.h"

namespace gossipsim {

void write_metrics_csv(const std::filesystem::path& file, const MethodRun& run);
void write_transfers_csv(const std::filesystem::path& file, const MethodRun& run);
void write_nodes_csv(const std::filesystem::path& file, const MethodRun& run);
void write_events_csv(const std::filesystem::path& file, const MethodRun& run);
void write_comm_matrix_csv(const std::filesystem::path& file, const MethodRun& run);
// comm_regions.csv and consensus_regions.csv, when the run has regions.
void write_region_outputs(const std::filesystem::path& dir, const MethodRun& run);
void write_trace_json(const std::filesystem::path& file, const MethodRun& run);
// All of the above (trace only when recorded) and summary.json, into `dir`.
void write_method_outputs(const std::filesystem::path& dir, const MethodRun& run);

}  // namespace gossipsim
