// Runs one method of a scenario on a fresh simulator, network and learner,
// and returns what it observed. Every method of a scenario sees the same
// network draw, compute speeds, data partition and initial model, because
// each is derived from the scenario's seed alone. analysis/summary.h turns
// a MethodRun into summary.json; analysis/writers.h writes its rows.
#pragma once

#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "sim/checkpoint.h"
#include "sim/learner.h"
#include "sim/recorder.h"
#include "sim/scenario.h"
#include "sim/transport.h"

namespace gossipsim {

struct RunOptions {
  bool trace = false;     // keep the Chrome trace events
  bool progress = false;  // report progress on stderr
  // How: false: one line rewritten in place (a terminal); true: whole lines
  // for a log, every 10% of the method's run or 30 s of wall time. Both
  // give this method's ETA and the whole run's, from `method_index` of
  // `method_count` methods and the wall seconds the earlier ones took.
  bool progress_lines = false;
  int method_index = 0, method_count = 1;
  double wall_before_s = 0;
  // Checkpoints (sim/checkpoint.h): at the first event at or after every
  // multiple of `checkpoint_every` of virtual time (zero: never), the run
  // hands its state to `on_checkpoint`. With `resume`, it first replays its
  // events up to that checkpoint without kernels and restores the learner.
  // When `*interrupted` turns true (SIGINT, SIGTERM) the run takes a last
  // checkpoint after the event in progress and stops with
  // StopReason::kInterrupted. Checkpoints never change what a run computes.
  Time checkpoint_every = Time::zero();
  std::function<void(const MethodCheckpoint&)> on_checkpoint;
  const MethodCheckpoint* resume = nullptr;
  const volatile std::sig_atomic_t* interrupted = nullptr;
  // `run --real`: makes the network that carries the run's transfers for
  // real, in real time (emulate/real_network.h); empty: the simulated one.
  std::function<std::unique_ptr<RealTimeNetwork>(Simulator&, const Scenario&)> real_network;
};

// Why a method's run ended: the first of /stop's limits it met, or a signal.
enum class StopReason { kVirtualTime, kEpochs, kTargetAccuracy, kWallClock, kInterrupted, kNonFiniteLoss };
// As summary.json writes them: "virtual_s", "epochs", "target_accuracy", "wall_s", "interrupted",
// "nonfinite_loss".
const EnumNames<StopReason>& stop_reason_names();

// What a run counted besides the recorder's rows.
struct RunTotals {
  int nodes = 0;
  int64_t model_bytes = 0;
  Time end;  // virtual time when it stopped
  uint64_t events = 0;
  int64_t bytes_sent = 0, transfers = 0, merges = 0;  // finished transfers, and merges
  int64_t cross_flows_started = 0, cross_flows_finished = 0, cross_bytes = 0;
  std::vector<ProfileStart> profile_start;  // profiled targets' values before their first change
  double wall_s = 0, kernel_wall_s = 0, evaluation_wall_s = 0;
  double cpu_s = 0;  // the process's CPU time over the method's run (user + system, every thread)
};

struct MethodRun {
  MethodOptions method;
  Recorder recorder;
  StopReason stop = StopReason::kVirtualTime;
  RunTotals totals;
  // What its summary needs of the scenario: /eval/targets, and how long a
  // cut may go without a crossing before it is reported (/eval/starved_s,
  // or a quarter of the run).
  std::vector<double> targets;
  TargetMetric target = TargetMetric::kAverage;  // /eval/target
  Time starved_after;
  // The first training step whose loss was not finite (/stop/nonfinite_loss).
  std::optional<NonFiniteLoss> nonfinite;
  // A real run's report (RealTimeNetwork::report); null for a simulated one.
  nlohmann::json real;
};

MethodRun run_method(const Scenario& sc, const MethodOptions& method, Learner& learner, const RunOptions& opts);

// Nodes a method trains: 1 for a method that trains alone, else the
// topology's compute nodes.
int learner_nodes(const Scenario& sc, const MethodOptions& method);

}  // namespace gossipsim
