#include "sim/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <optional>

#include "base/console.h"
#include "base/error.h"
#include "sim/cluster.h"
#include "sim/evaluations.h"
#include "sim/methods/method.h"
#include "sim/network.h"
#include "sim/simulator.h"
#include "sim/wan_dynamics.h"

namespace gossipsim {

const EnumNames<StopReason>& stop_reason_names() {
  static const EnumNames<StopReason> names = {
      {"virtual_s", StopReason::kVirtualTime},          {"epochs", StopReason::kEpochs},
      {"target_accuracy", StopReason::kTargetAccuracy}, {"wall_s", StopReason::kWallClock},
      {"interrupted", StopReason::kInterrupted},        {"nonfinite_loss", StopReason::kNonFiniteLoss}};
  return names;
}

int learner_nodes(const Scenario& sc, const MethodOptions& method) {
  return method.type->trains_alone ? 1 : sc.topology.node_count();
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The process's CPU time so far, every thread's, in seconds.
double process_cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// One method's run, as named steps over the state they share. run() wires
// the parts in a fixed order (the order of their first events, which
// checkpoints count on), replays a checkpoint if asked, runs the event loop
// until a stop rule fires, and hands back what was recorded.
class MethodRunner {
 public:
  MethodRunner(const Scenario& sc, const MethodOptions& method, Learner& learner, const RunOptions& opts)
      : sc_(sc),
        opts_(opts),
        real_net_(opts.real_network ? opts.real_network(sim_, sc) : nullptr),
        sim_net_(real_net_ ? nullptr : std::make_unique<Network>(sim_, sc.topology, sc.network.model)),
        learner_(learner),
        ctx_{sim_, real_net_ ? static_cast<Transport&>(*real_net_) : *sim_net_, learner_, sc, method, run_.recorder},
        cluster_(ctx_, learner_.node_count()),
        protocol_(make_method(cluster_)),
        evaluations_(learner_, run_.recorder.metrics, sc.stop.target_accuracy > 0,
                     [this](const MetricRow& row) { collected(row); }) {
    run_.method = method;
    run_.recorder.trace_enabled = opts.trace;
    run_.targets = sc.eval.targets;
    run_.target = sc.eval.target;
  }

  MethodRun run() {
    group_by_region();
    schedule_evaluations();
    wire_wan();
    wire_churn();
    protocol_->start();
    if (opts_.resume) resume(*opts_.resume);
    if (real_net_) {
      sim_.set_pacer(real_net_.get());
      real_net_->begin();
    }
    // A run that reached its target at the checkpoint it resumes from has ended.
    if (!reached_target_) sim_.run(until(), [this] { return keep_going(); });
    finish();
    return std::move(run_);
  }

 private:
  Time until() const { return sc_.stop.virtual_s > 0 ? seconds(sc_.stop.virtual_s) : Time::max(); }
  double epochs() const {
    return cluster_.total_iterations() * static_cast<double>(learner_.batch()) /
           static_cast<double>(learner_.train_size());
  }
  bool trains_alone() const { return run_.method.type->trains_alone; }

  // Regions as groups, for the region matrix and the consensus split; none
  // unless every node has a region.
  void group_by_region() {
    if (trains_alone()) return;
    const Topology& t = sc_.topology;
    for (Vertex v : t.nodes)
      if (t.graph[v].region.empty()) return;
    run_.recorder.node_group = region_ids(t, &run_.recorder.group_names);
    learner_.set_groups(run_.recorder.node_group);
  }

  // An evaluation at time 0 and every /eval/every_s after.
  void schedule_evaluations() {
    sim_.schedule(Time::zero(), [this] { evaluate_periodically(); });
  }
  void evaluate_periodically() {
    evaluate();
    sim_.schedule(seconds(sc_.eval.every_s), [this] { evaluate_periodically(); });
  }
  void evaluate() {
    MetricRow row;
    row.time = sim_.now();
    row.epochs = epochs();
    row.iterations = cluster_.total_iterations();
    row.bytes_sent = cluster_.bytes_sent();
    row.transfers = cluster_.transfers_done();
    row.merges = cluster_.merges();
    evaluations_.ask(row, sc_.eval.per_node && !trains_alone());
  }
  void collected(const MetricRow& row) {
    // The first nonfinite training loss: seen at the collection of an
    // evaluation, which happens at a fixed point of the event order (the
    // pipeline collects row k when row k + kRunAhead is asked for), so the
    // method stops at the same virtual time whatever the threads did.
    if (row.eval.nonfinite && !run_.nonfinite) {
      run_.nonfinite = row.eval.nonfinite;
      if (sc_.stop.nonfinite_loss && !stop_) {
        stop_ = StopReason::kNonFiniteLoss;
        sim_.stop();
      }
    }
    if (sc_.stop.target_accuracy > 0 && target_value(row.eval, sc_.eval.target) >= sc_.stop.target_accuracy &&
        !reached_target_) {
      reached_target_ = true;
      sim_.stop();
    }
    if (opts_.progress) report_progress(row);
  }
  // This method's share done, its ETA and the whole run's (the methods left
  // taken to cost what the ones so far cost on average, this one projected).
  void report_progress(const MetricRow& row) {
    const double done =
        std::min(1.0, sc_.stop.virtual_s > 0 ? row.time.seconds() / sc_.stop.virtual_s : row.epochs / sc_.stop.epochs);
    const double elapsed = seconds_since(wall_start_);
    const double eta = done > 0 ? elapsed * (1 - done) / done : 0.0;
    const double projected = done > 0 ? elapsed / done : elapsed;
    const int left = opts_.method_count - opts_.method_index - 1;
    const double all_eta = eta + left * (opts_.wall_before_s + projected) / (opts_.method_index + 1);
    const std::string line = fmt::format(
        "[{}/{}] {:<20} t={:8.1f}s epochs={:6.2f} acc={:.4f}  eta {:.0f}s, all methods {:.0f}s", opts_.method_index + 1,
        opts_.method_count, run_.method.label, row.time.seconds(), row.epochs, row.eval.accuracy, eta, all_eta);
    if (!opts_.progress_lines) {
      say(stderr, "\r{}   ", line);
      return;
    }
    if (done + 1e-9 >= next_line_share_ || elapsed - last_line_s_ >= 30) {
      say(stderr, "{}\n", line);
      last_line_s_ = elapsed;
      while (next_line_share_ <= done + 1e-9) next_line_share_ += 0.1;
    }
  }

  // Profiles, compute profiles and cross-traffic (a real run has none: the
  // emulated WAN's capacities are fixed; `run --real` refuses them).
  void wire_wan() {
    if (!sim_net_) return;
    std::vector<WanProfile> profiles = sc_.network.profiles;
    profiles.insert(profiles.end(), sc_.compute.profiles.begin(), sc_.compute.profiles.end());
    wan_ = std::make_unique<WanDynamics>(
        sim_, *sim_net_, run_.recorder, std::move(profiles), sc_.network.cross_traffic,
        [this](NodeId n, double factor) {
          if (n < cluster_.size()) cluster_.set_speed_factor(n, factor);
        },
        sc_.seed);
    wan_->start();
  }

  // Churn is the topology's nodes'; a method that trains alone has none.
  void wire_churn() {
    if (trains_alone()) return;
    for (NodeId n : sc_.churn.start_down) cluster_.start_down(n);
    for (const ChurnEvent& e : sc_.churn.events)
      sim_.schedule_at(e.at, [this, e] {
        if (e.down()) {
          cluster_.go_down(e.node, e.kind == ChurnEvent::Kind::kCrash);
          protocol_->on_down(e.node);
        } else {
          cluster_.come_up(e.node, e.model);
          protocol_->on_up(e.node);
        }
      });
  }

  // Replays the events up to the checkpoint without kernels, checks that
  // the replay arrived where the checkpoint was taken, then restores.
  void resume(const MethodCheckpoint& c) {
    learner_.set_replaying(true);
    if (c.events > 0) sim_.run(until(), [&] { return sim_.executed() < c.events; });
    learner_.set_replaying(false);
    if (sim_.executed() != c.events || sim_.now() != c.now || cluster_.total_iterations() != c.iterations ||
        cluster_.bytes_sent() != c.bytes_sent || cluster_.transfers_done() != c.transfers ||
        cluster_.merges() != c.merges || run_.recorder.metrics.size() != c.evaluations.size())
      throw InputError("checkpoint", "",
                       fmt::format("expected the replay of {} to reach the checkpoint ({} events, "
                                   "{} virtual s); it did not: the checkpoint belongs to another "
                                   "scenario, seed or build",
                                   run_.method.label, c.events, c.now.seconds()));
    try {
      learner_.load_state(c.learner_state);
      learner_.restore_live_snapshots(c.snapshots);
    } catch (const InputError& e) {
      if (c.source.empty()) throw;
      throw InputError(c.source, e.file(), e.expected());  // e.g. "k.checkpoint/current: learner state: ..."
    }
    if (!run_.recorder.node_group.empty())
      for (const auto& e : c.evaluations)
        if (std::isfinite(e.consensus) && std::isnan(e.consensus_within))
          throw InputError(c.source.empty() ? "checkpoint" : c.source, "",
                           "expected a checkpoint that kept the consensus split within and between regions; this "
                           "one was written by an older gossipsim, which dropped it (run the method again instead "
                           "of resuming it)");
    evaluations_.restore(c.evaluations);
    next_checkpoint_ = next_checkpoint_after(sim_.now());
    for (const auto& e : c.evaluations)
      if (sc_.stop.target_accuracy > 0 && target_value(e, sc_.eval.target) >= sc_.stop.target_accuracy)
        reached_target_ = true;
  }

  Time next_checkpoint_after(Time t) const {
    const Time every = opts_.checkpoint_every;
    return every > Time::zero() ? every * (t.ns() / every.ns() + 1) : Time::max();
  }
  void checkpoint() {
    evaluations_.collect_all();
    MethodCheckpoint c;
    c.label = run_.method.label;
    c.events = sim_.executed();
    c.now = sim_.now();
    c.iterations = cluster_.total_iterations();
    c.bytes_sent = cluster_.bytes_sent();
    c.transfers = cluster_.transfers_done();
    c.merges = cluster_.merges();
    for (const auto& row : run_.recorder.metrics) c.evaluations.push_back(row.eval);
    c.learner_state = learner_.save_state();
    c.snapshots = learner_.save_live_snapshots();
    opts_.on_checkpoint(c);
    next_checkpoint_ = next_checkpoint_after(sim_.now());
  }

  // After every event: the stop rules the event loop cannot see (virtual
  // time is its own; a target stops it from collected()), and checkpoints.
  bool keep_going() {
    if (sc_.stop.epochs > 0 && epochs() >= sc_.stop.epochs) return stop(StopReason::kEpochs);
    if (sc_.stop.wall_s > 0 && (++checks_ & 1023) == 0 && seconds_since(wall_start_) > sc_.stop.wall_s)
      return stop(StopReason::kWallClock);
    if (opts_.interrupted && *opts_.interrupted) {
      if (opts_.on_checkpoint) checkpoint();
      return stop(StopReason::kInterrupted);
    }
    if (sim_.now() >= next_checkpoint_ && opts_.on_checkpoint) checkpoint();
    return true;
  }
  bool stop(StopReason why) {
    if (!stop_) stop_ = why;  // the first reason stands (a nonfinite loss seen within the same event)
    return false;
  }

  // A last evaluation at the end, the per-node rows and the totals.
  void finish() {
    const auto& rows = run_.recorder.metrics;
    if (rows.empty() || rows.back().time != sim_.now()) evaluate();
    evaluations_.collect_all();
    if (opts_.progress && !opts_.progress_lines) say(stderr, "\n");
    cluster_.close();
    run_.stop = reached_target_ && stop_ != StopReason::kNonFiniteLoss ? StopReason::kTargetAccuracy
                                                                       : stop_.value_or(StopReason::kVirtualTime);
    run_.starved_after =
        sc_.eval.starved_s > 0 ? seconds(sc_.eval.starved_s) : std::max(seconds(1), Time::ns(sim_.now().ns() / 4));
    RunTotals& t = run_.totals;
    t.nodes = learner_.node_count();
    t.model_bytes = learner_.model_bytes().count;
    t.end = sim_.now();
    t.events = sim_.executed();
    t.bytes_sent = cluster_.bytes_sent();
    t.transfers = cluster_.transfers_done();
    t.merges = cluster_.merges();
    if (wan_) {
      t.cross_flows_started = wan_->cross_flows_started();
      t.cross_flows_finished = wan_->cross_flows_finished();
      t.cross_bytes = wan_->cross_bytes_finished();
      t.profile_start = wan_->starting_values();
    }
    t.wall_s = seconds_since(wall_start_);
    t.cpu_s = process_cpu_seconds() - cpu_start_;
    t.kernel_wall_s = learner_.kernel_seconds();
    t.evaluation_wall_s = learner_.evaluation_seconds();
    if (real_net_) {
      sim_.set_pacer(nullptr);
      run_.real = real_net_->report();
    }
  }

  const Scenario& sc_;
  const RunOptions& opts_;
  const Clock::time_point wall_start_ = Clock::now();
  const double cpu_start_ = process_cpu_seconds();
  double next_line_share_ = 0.1, last_line_s_ = 0;  // progress lines for a log
  MethodRun run_;
  Simulator sim_;
  std::unique_ptr<RealTimeNetwork> real_net_;  // `run --real`
  std::unique_ptr<Network> sim_net_;           // otherwise
  TrackingLearner learner_;
  MethodContext ctx_;
  Cluster cluster_;
  std::unique_ptr<Method> protocol_;
  std::unique_ptr<WanDynamics> wan_;
  EvaluationPipeline evaluations_;
  std::optional<StopReason> stop_;  // the rule that ended the event loop, if one did
  bool reached_target_ = false;     // the target accuracy was reached: it is the reason, whatever else
  Time next_checkpoint_ = next_checkpoint_after(Time::zero());
  uint64_t checks_ = 0;
};

}  // namespace

MethodRun run_method(const Scenario& sc, const MethodOptions& method, Learner& learner, const RunOptions& opts) {
  return MethodRunner(sc, method, learner, opts).run();
}

}  // namespace gossipsim
