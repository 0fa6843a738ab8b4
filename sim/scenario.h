// A scenario: everything a run needs, as typed option structs. Every option
// is documented here with its meaning, unit and default;
// scenarios/scenario.schema.json says the same to editors and a test keeps
// the two in agreement. input/scenario_reader.h reads them from JSON.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/distribution.h"
#include "base/enum_names.h"
#include "base/units.h"
#include "sim/flow_model.h"
#include "sim/learner.h"
#include "sim/method_options.h"
#include "sim/wan.h"
#include "sim/workload.h"
#include "topologies/builder.h"

namespace gossipsim {

// /network
// /network/real (emulate/real_network.h): connections: "fresh" (default),
// "persistent" or "warm" (emulate/sockets.h); congestion: "default" (the
// kernel's) or a congestion control's name, letters, digits and '_' (run
// --real checks that the kernel has it); dilation: k in [1, 1000] (default
// 1: real time); max_lag_ms: the bound in (0, 1e4] on the 99th percentile of
// how late events fire, in virtual ms, above which a run is invalid (default
// 2); queue_packets: the emulator's drop-tail queues, in [1, 1e6] (default
// 1000).
struct RealRunOptions {
  FlowModel::Connections connections = FlowModel::Connections::kFresh;
  std::string congestion = "default";
  double dilation = 1;
  double max_lag_ms = 2;
  int queue_packets = 1000;
};

struct NetworkOptions {
  // /network/access/{up_mbps,down_mbps}: each compute node's access capacity
  // in Mbit/s, drawn once per node (default 100 each). /network/links/
  // {latency_ms,bandwidth_mbps}: each link's one-way latency in ms (default
  // 10) and capacity per direction in Mbit/s (default 1000), drawn once per
  // link where the topology does not fix them.
  LinkDefaults links;
  // /network/profiles: capacities and latencies that change in virtual time
  // (sim/wan.h).
  std::vector<WanProfile> profiles;
  // /network/cross_traffic: background flows (sim/wan.h).
  std::vector<CrossTraffic> cross_traffic;
  // /network/model: "maxmin" (default), "tcp" (SimGrid's LV08) or
  // "slowstart" (slow start in rounds, max-min sharing; sim/flow_model.h).
  // /network/tcp, with "tcp" only: {latency_factor (default 13.01, > 0),
  // bandwidth_factor (0.97, in (0, 1]), weight_s_bytes (20537, >= 0),
  // window_bytes (4194304, > 0)}.
  // /network/slowstart, with "slowstart" only: {connections: "fresh"
  // (default: a new connection per transfer, handshake and slow start),
  // "persistent" (one per pair, slow start again after idle, no handshake)
  // or "warm" (neither); initial_window_bytes (14480: 10 segments of 1448,
  // Linux's initial window; in [1, 1e9]); payload_factor (1448/1500: the
  // payload share of a packet with TCP timestamps; (0, 1]);
  // max_window_bytes (4194304: Linux's largest send buffer;
  // [initial_window_bytes, 1e12]); congestion: "none" (default: loss-free,
  // no queues), "bbr", "cubic" or "reno" (drop-tail queues on every
  // resource, filled and drained as that congestion control does);
  // queue_packets (1000, a whole number in [1, 1e7]); packet_bytes (1500,
  // [576, 65536]); round_sending: "burst" (default: a round's window
  // leaves its host at the round's start), "acked" (as the last round's
  // ACKs come back) or, with congestion bbr only, "paced" (as Linux's BBR
  // paces its startup)}.
  FlowModel model;
  // /network/real: how `gossipsim run --real` runs the scenario for real
  // (emulate/real_network.h, docs/validation.md); a simulation ignores it.
  RealRunOptions real;
};

// /compute
struct ComputeOptions {
  // Each node's time per mini-batch iteration, in ms, drawn once per node
  // (heterogeneous nodes). Default 50.
  Distribution iteration_ms = Distribution::constant(50);
  // Per-iteration jitter: each iteration takes base * (1 + jitter * u), u
  // uniform in [-1, 1]. 0 (default) to 0.9.
  double jitter = 0;
  // Per-node values set by /overrides (sim/wan.h); empty without them.
  ComputeOverrides overrides;
  // /compute/profiles: iteration time factors that change in virtual time
  // (sim/wan.h).
  std::vector<WanProfile> profiles;
};

// One entry of /methods: sim/method_options.h, read through the method's
// row in sim/methods/registry.h.

// /stop: the first condition met ends a method's run. At least one of
// virtual_s and epochs is required.
struct StopOptions {
  double virtual_s = 0;        // virtual seconds; 0 = no limit
  double epochs = 0;           // passes over the training set by all nodes together; 0 = no limit
  double target_accuracy = 0;  // stop once /eval/target's accuracy reaches it; 0 = off
  double wall_s = 0;           // wall-clock budget per method, seconds; 0 = none
  // nonfinite_loss: what a training loss that is NaN or infinite does (a
  // model that diverged, or an own model whose forward gives NaN). true
  // (default): the method stops at the evaluation that first sees it (two
  // evaluations later when evaluations run ahead of the event loop), with
  // stop_reason "nonfinite_loss", one line naming the node, its step and the
  // virtual time, and exit code 3 for the run. false: it runs on, for users
  // who want to see the divergence; the summary still records the first
  // such step.
  bool nonfinite_loss = true;
};

// /eval
struct EvalOptions {
  double every_s = 10;  // virtual seconds between evaluations, > 0
  // /eval/test_samples: the first n test samples are evaluated (0: all of
  // them, and more than the test set holds is refused); not given: the
  // first kDefaultTestSamples, or all where the set holds fewer.
  std::optional<int64_t> test_samples;
  static constexpr int64_t kDefaultTestSamples = 2000;
  int64_t test_samples_or_default() const { return test_samples.value_or(kDefaultTestSamples); }
  // The samples an evaluation uses out of a test set of `available`.
  int64_t used_test_samples(int64_t available) const {
    const int64_t n = test_samples_or_default();
    return n > 0 ? std::min(n, available) : available;
  }
  std::vector<double> targets;  // accuracies for time-to-accuracy, in (0, 1]
  // What reaching a target means (and /stop/target_accuracy): "average"
  // (default), "node_mean" or "node_min" (sim/learner.h); the node ones need
  // per_node. summary.json gives the times under every metric it can.
  TargetMetric target = TargetMetric::kAverage;
  bool per_node = true;  // also evaluate every node's own model
  // A cut (a region, or a node without regions, against the rest) that no
  // finished transfer crosses for longer than this many virtual seconds is
  // reported as starved (summary.json "starved_cuts", and a warning). 0
  // (default): a quarter of the run's virtual time.
  double starved_s = 0;
};

// /limits: the sizes a scenario may ask for (SizeLimits in
// topologies/builder.h). Everything is checked before it is built, so a
// scenario too large is refused at once, with an estimate of the memory it
// would need, instead of running for hours or out of memory.
//   nodes      compute nodes (and graph vertices); default 100,000
//   links      links of the graph, and pairs an erdos-renyi draw or default
//              peers behind routers would visit; default 10,000,000
//   memory_gb  estimated memory of a run (estimate_memory below); default 16
//   profile_points  points held by all /network/profiles and
//              /compute/profiles together (each point 16 bytes; a compute
//              profile's points are held once for all its nodes), counted
//              while they are read or generated; default 10,000,000
//   wan_changes  changes all profiles apply over the run, estimated before
//              it starts (each profile's points before the run's end, every
//              period; the run's end is /stop/virtual_s or, with /stop/epochs
//              alone, the time its nodes need for those epochs at their mean
//              iteration time); each change re-solves the flows it touches;
//              default 100,000,000
// Raise them on a larger machine; the estimate is coarse (within about 2x).
struct LimitsOptions : SizeLimits {
  int64_t profile_points = 10'000'000;
  double wan_changes = 1e8;
};

struct Scenario {
  std::string file;  // where it was read from ("" when from a string)
  std::string name;
  std::string description;
  uint64_t seed = 1;        // master seed of every random stream
  nlohmann::json document;  // the scenario as read, with --set applied
  Topology topology;
  NetworkOptions network;
  ComputeOptions compute;
  WorkloadSpec workload;
  std::vector<MethodOptions> methods;
  StopOptions stop;
  EvalOptions eval;
  LimitsOptions limits;
  // Every file the scenario names and that was read (topology, regions,
  // CSV traces), with where it was named: a resume checks they are the
  // files the run began with.
  std::vector<NamedInput> inputs;
  // /churn: nodes that crash, leave and join (sim/wan.h). Every method but
  // one that trains alone (it has no network) plays it.
  Churn churn;
};

// The most evaluations one method's run may make (/stop/virtual_s / /eval/every_s).
inline constexpr double kMaxEvaluations = 1e6;

// What a run of the scenario takes in memory, about: the graph and per-node
// simulator state, the scheduler's gossiped tables (N^2) when a method uses
// them, and with training the nodes' models (parameters and momentum, from
// `model_bytes`) and the dataset in float32 (`data_bytes`).
double estimate_memory(const Scenario& sc, int64_t model_bytes = 0, int64_t data_bytes = 0);
// How long a run of the scenario lasts in virtual seconds, about:
// /stop/virtual_s, or with /stop/epochs alone the time its nodes take for
// that many epochs at their mean iteration time (a lower bound: it leaves
// out every wait for the network).
double estimated_run_s(const Scenario& sc);

// /eval/target's names: average, node_mean, node_min.
inline const EnumNames<TargetMetric>& target_metric_names() {
  static const EnumNames<TargetMetric> names{{"average", TargetMetric::kAverage},
                                             {"node_mean", TargetMetric::kNodeMean},
                                             {"node_min", TargetMetric::kNodeMin}};
  return names;
}

}  // namespace gossipsim
