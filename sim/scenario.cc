#include "sim/scenario.h"

#include <algorithm>

#include "sim/dataset_info.h"

namespace gossipsim {

double estimated_run_s(const Scenario& sc) {
  if (sc.stop.virtual_s > 0) return sc.stop.virtual_s;
  const WorkloadSpec& w = sc.workload;
  const double train = static_cast<double>(w.train_samples > 0 ? w.train_samples : published_dataset(w).train);
  const double iterations = sc.stop.epochs * train / static_cast<double>(w.batch);
  const double per_s = std::max(1, sc.topology.node_count()) / (sc.compute.iteration_ms.mean() / 1e3);
  return std::min(kMaxVirtualSeconds, iterations / per_s);
}

double estimate_memory(const Scenario& sc, int64_t model_bytes, int64_t data_bytes) {
  const double n = sc.topology.node_count();
  double bytes = graph_bytes_estimate(static_cast<double>(boost::num_vertices(sc.topology.graph)),
                                      static_cast<double>(boost::num_edges(sc.topology.graph)));
  for (const auto& peers : sc.topology.peers) bytes += 8.0 * peers.size();
  // The recorder keeps a row per evaluation and per transfer; transfers are
  // unknown in advance, so only the evaluations count here.
  if (sc.stop.virtual_s > 0) bytes += 200.0 * sc.stop.virtual_s / sc.eval.every_s * sc.methods.size();
  const bool gossiped = std::any_of(sc.methods.begin(), sc.methods.end(),
                                    [](const MethodOptions& m) { return m.info == Info::kGossiped; });
  if (gossiped) bytes += 24.0 * n * n;  // each node's view of every node's free times
  // A row of events.csv per cross-traffic flow, expected.
  for (const auto& c : sc.network.cross_traffic) bytes += 150.0 * c.expected_flows;
  // Parameters and momentum per node, plus a model per worker and evaluation copies.
  bytes += static_cast<double>(model_bytes) * (2.0 * n + 4.0 * sc.workload.workers);
  bytes += static_cast<double>(data_bytes);
  return bytes;
}

}  // namespace gossipsim
