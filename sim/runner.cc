#include "sim/runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "sim/cluster.h"
#include "sim/methods/method.h"
#include "sim/network.h"
#include "sim/simulator.h"
#include "sim/wan.h"
#include "sim/base/error.h"

namespace gossipsim {

int learner_nodes(const Scenario& sc, const MethodOptions& method) {
  return method.type->trains_alone ? 1 : sc.topology.node_count();
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

// Mean, median, 95th percentile (nearest rank) and maximum; null when empty.
nlohmann::json spread(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto rank = [&](double q) { return v[static_cast<size_t>(std::ceil(q * v.size())) - 1]; };
  return {{"mean", sum / v.size()}, {"p50", rank(0.5)}, {"p95", rank(0.95)}, {"max", v.back()}};
}

// Staleness of the merged transfers: the age of the model when merged, in
// seconds and in the sender's iterations.
nlohmann::json staleness(const std::vector<TransferRow>& rows) {
  std::vector<double> s, it;
  for (const auto& t : rows)
    if (t.merged) {
      s.push_back((t.merge - t.snapshot).seconds());
      it.push_back(static_cast<double>(t.sender_iterations_at_merge - t.sender_iterations_at_snapshot));
    }
  return {{"merged", s.size()}, {"seconds", spread(s)}, {"iterations", spread(it)}};
}

// Cuts (a group against the rest; each node is its own group without
// groups) that no finished transfer crossed for longer than `threshold`:
// the longest such gap of each, from the start to the end of the run.
nlohmann::json starved_cuts(const Recorder& rec, int nodes, Time end, Time threshold) {
  std::vector<int> group = rec.node_group;
  std::vector<std::string> names = rec.group_names;
  if (group.empty()) {
    for (int n = 0; n < nodes; ++n) {
      group.push_back(n);
      names.push_back(fmt::format("n{}", n));
    }
  }
  nlohmann::json out = nlohmann::json::array();
  if (names.size() < 2) return out;
  std::vector<std::vector<Time>> crossings(names.size());
  for (const auto& t : rec.transfers)
    if (t.finished && !t.lost && group[t.src] != group[t.dst]) {
      crossings[group[t.src]].push_back(t.finish);
      crossings[group[t.dst]].push_back(t.finish);
    }
  // Two groups are one cut.
  const size_t cuts = names.size() == 2 ? 1 : names.size();
  for (size_t g = 0; g < cuts; ++g) {
    auto& times = crossings[g];
    std::sort(times.begin(), times.end());
    Time from = Time::zero(), longest_from, longest = Time::zero();
    for (size_t i = 0; i <= times.size(); ++i) {
      const Time to = i < times.size() ? times[i] : end;
      if (to - from > longest) {
        longest = to - from;
        longest_from = from;
      }
      from = to;
    }
    if (longest > threshold)
      out.push_back({{"cut", names[g] + (names.size() == 2 ? " | " + names[1] : " | rest")},
                     {"longest_gap_s", longest.seconds()},
                     {"from_s", longest_from.seconds()},
                     {"to_s", (longest_from + longest).seconds()},
                     {"crossings", times.size()}});
  }
  return out;
}

}  // namespace

MethodRun run_method(const Scenario& sc, const MethodOptions& method, Learner& real_learner, const RunOptions& opts) {
  MethodRun run;
  run.method = method;
  run.recorder.trace_enabled = opts.trace;
  const auto wall_start = Clock::now();

  Simulator sim;
  Network net(sim, sc.topology, sc.network.model);
  TrackingLearner learner(real_learner);
  MethodContext ctx{sim, net, learner, sc, method, run.recorder};
  Cluster cluster(ctx, learner.node_count());
  auto protocol = make_method(cluster);
  // Regions as groups, for the region matrix and the consensus split.
  if (!method.type->trains_alone) {
    std::map<std::string, int> ids;
    for (NodeId n = 0; n < sc.topology.node_count(); ++n) {
      const std::string& region = sc.topology.graph[sc.topology.nodes[n]].region;
      if (region.empty()) {
        ids.clear();
        break;
      }
      ids.emplace(region, 0);
    }
    if (!ids.empty()) {
      int next = 0;
      for (auto& [name, id] : ids) {
        id = next++;
        run.recorder.group_names.push_back(name);
      }
      for (NodeId n = 0; n < sc.topology.node_count(); ++n)
        run.recorder.node_group.push_back(ids.at(sc.topology.graph[sc.topology.nodes[n]].region));
      learner.set_groups(run.recorder.node_group);
    }
  }

  const double samples_per_epoch = static_cast<double>(learner.train_size());
  auto epochs = [&] { return cluster.total_iterations() * static_cast<double>(learner.batch()) / samples_per_epoch; };
  std::string stop_reason = "virtual_s";
  bool reached_target = false;

  // Evaluations are handed to the learner and collected later, so that the
  // event loop runs ahead of the kernels. It waits for one only when it is
  // more than kRunAhead evaluations ahead (which bounds the copies of models
  // that pending evaluations hold), or when the run stops on a target
  // accuracy and needs the value at once. (The learner bounds the rest of
  // the queued work itself.)
  constexpr size_t kRunAhead = 2;
  std::vector<PendingEvaluation> pending;  // of metrics rows [collected, end)
  size_t collected = 0;
  auto collect = [&](size_t upto) {
    for (; collected < upto; ++collected) {
      MetricRow& row = run.recorder.metrics[collected];
      row.eval = pending[collected].get();
      if (sc.stop.target_accuracy > 0 && row.eval.accuracy >= sc.stop.target_accuracy && !reached_target) {
        reached_target = true;
        stop_reason = "target_accuracy";
        sim.stop();
      }
      if (opts.progress) {
        double done = sc.stop.virtual_s > 0 ? row.time.seconds() / sc.stop.virtual_s : row.epochs / sc.stop.epochs;
        double elapsed = seconds_since(wall_start);
        fmt::print(stderr, "\r{:<24} t={:8.1f}s epochs={:6.2f} acc={:.4f}  eta {:5.0f}s   ", method.label,
                   row.time.seconds(), row.epochs, row.eval.accuracy,
                   done > 0 ? elapsed * (1 - std::min(1.0, done)) / done : 0.0);
      }
    }
  };
  auto observe = [&] {
    MetricRow row;
    row.time = sim.now();
    row.epochs = epochs();
    row.iterations = cluster.total_iterations();
    row.bytes_sent = cluster.bytes_sent();
    row.transfers = cluster.transfers_done();
    row.merges = cluster.merges();
    run.recorder.metrics.push_back(row);
    pending.push_back(learner.evaluate_async(sc.eval.per_node && !method.type->trains_alone));
    const size_t rows = pending.size();
    collect(sc.stop.target_accuracy > 0 ? rows : rows - std::min(rows, kRunAhead));
  };
  const Time every = seconds(sc.eval.every_s);
  std::function<void()> periodic = [&] {
    observe();
    sim.schedule(every, periodic);
  };
  sim.schedule(Time::zero(), periodic);
  std::vector<WanProfile> profiles = sc.network.profiles;
  profiles.insert(profiles.end(), sc.compute.profiles.begin(), sc.compute.profiles.end());
  WanDynamics wan(sim, net, run.recorder, std::move(profiles), sc.network.cross_traffic,
                  [&](NodeId n, double factor) {
                    if (n < cluster.size()) cluster.set_speed_factor(n, factor);
                  },
                  sc.seed);
  wan.start();
  // Churn is the topology's nodes'; a method that trains alone has none.
  if (!method.type->trains_alone) {
    for (NodeId n : sc.churn.start_down) cluster.start_down(n);
    for (const ChurnEvent& e : sc.churn.events)
      sim.schedule_at(e.at, [&, e] {
        if (e.down()) {
          cluster.go_down(e.node, e.kind == ChurnEvent::Kind::kCrash);
          protocol->on_down(e.node);
        } else {
          cluster.come_up(e.node, e.model);
          protocol->on_up(e.node);
        }
      });
  }
  protocol->start();

  const Time until = sc.stop.virtual_s > 0 ? seconds(sc.stop.virtual_s) : Time::max();
  const Time every_checkpoint = opts.checkpoint_every;
  auto next_checkpoint_after = [&](Time t) {
    return every_checkpoint > Time::zero() ? every_checkpoint * (t.ns() / every_checkpoint.ns() + 1) : Time::max();
  };
  Time next_checkpoint = next_checkpoint_after(Time::zero());
  auto checkpoint = [&] {
    collect(pending.size());
    MethodCheckpoint c;
    c.label = method.label;
    c.events = sim.executed();
    c.now = sim.now();
    c.iterations = cluster.total_iterations();
    c.bytes_sent = cluster.bytes_sent();
    c.transfers = cluster.transfers_done();
    c.merges = cluster.merges();
    for (const auto& row : run.recorder.metrics) c.evaluations.push_back(row.eval);
    c.learner_state = learner.save_state();
    c.snapshots = learner.save_live_snapshots();
    opts.on_checkpoint(c);
    next_checkpoint = next_checkpoint_after(sim.now());
  };

  if (opts.resume) {
    // Replay the events up to the checkpoint without kernels, check that the
    // replay arrived where the checkpoint was taken, then restore.
    const MethodCheckpoint& c = *opts.resume;
    learner.set_replaying(true);
    if (c.events > 0) sim.run(until, [&] { return sim.executed() < c.events; });
    learner.set_replaying(false);
    if (sim.executed() != c.events || sim.now() != c.now || cluster.total_iterations() != c.iterations ||
        cluster.bytes_sent() != c.bytes_sent || cluster.transfers_done() != c.transfers ||
        cluster.merges() != c.merges || run.recorder.metrics.size() != c.evaluations.size())
      throw InputError("checkpoint", "", fmt::format("expected the replay of {} to reach the checkpoint ({} events, "
                                                     "{} virtual s); it did not: the checkpoint belongs to another "
                                                     "scenario, seed or build",
                                                     method.label, c.events, c.now.seconds()));
    try {
      learner.load_state(c.learner_state);
      learner.restore_live_snapshots(c.snapshots);
    } catch (const InputError& e) {
      if (c.source.empty()) throw;
      throw InputError(c.source, e.file(), e.expected());  // e.g. "k.checkpoint/current: learner state: ..."
    }
    for (size_t i = 0; i < c.evaluations.size(); ++i) {
      run.recorder.metrics[i].eval = c.evaluations[i];
      std::promise<Evaluation> ready;
      ready.set_value(c.evaluations[i]);
      pending[i] = ready.get_future().share();
    }
    collected = c.evaluations.size();
    next_checkpoint = next_checkpoint_after(sim.now());
    for (const auto& e : c.evaluations)
      if (sc.stop.target_accuracy > 0 && e.accuracy >= sc.stop.target_accuracy) reached_target = true;
  }

  uint64_t checks = 0;
  // A run that reached its target at the checkpoint it resumes from has ended.
  if (!reached_target) sim.run(until, [&] {
    if (sc.stop.epochs > 0 && epochs() >= sc.stop.epochs) {
      stop_reason = "epochs";
      return false;
    }
    if (sc.stop.wall_s > 0 && (++checks & 1023) == 0 && seconds_since(wall_start) > sc.stop.wall_s) {
      stop_reason = "wall_s";
      return false;
    }
    if (opts.interrupted && *opts.interrupted) {
      if (opts.on_checkpoint) checkpoint();
      stop_reason = "interrupted";
      return false;
    }
    if (sim.now() >= next_checkpoint && opts.on_checkpoint) checkpoint();
    return true;
  });
  if (run.recorder.metrics.empty() || run.recorder.metrics.back().time != sim.now()) observe();
  collect(pending.size());
  if (opts.progress) fmt::print(stderr, "\n");
  cluster.close();

  const auto& rows = run.recorder.metrics;
  const MetricRow& last = rows.back();
  auto count_transfers = [&](bool (*which)(const TransferRow&)) {
    return static_cast<int64_t>(std::count_if(run.recorder.transfers.begin(), run.recorder.transfers.end(), which));
  };
  std::map<std::string, int64_t> events_of_kind;  // one pass over events.csv's rows
  for (const auto& e : run.recorder.network_events) ++events_of_kind[e.kind];
  auto count_events = [&](const std::string& kind) {
    auto it = events_of_kind.find(kind);
    return it == events_of_kind.end() ? int64_t{0} : it->second;
  };
  nlohmann::json targets = nlohmann::json::object();
  for (double target : sc.eval.targets) {
    nlohmann::json hit;  // null when never reached
    for (const auto& r : rows)
      if (r.eval.accuracy >= target) {
        hit = {{"virtual_s", r.time.seconds()}, {"epochs", r.epochs}};
        break;
      }
    targets[fmt::format("{:g}", target)] = hit;
  }
  double best = -1;
  for (const auto& r : rows)
    if (std::isfinite(r.eval.accuracy)) best = std::max(best, r.eval.accuracy);
  run.summary = {
      {"method", method.name},
      {"label", method.label},
      {"nodes", learner.node_count()},
      {"model_bytes", learner.model_bytes().count},
      {"stop_reason", reached_target ? "target_accuracy" : stop_reason},
      {"virtual_s", sim.now().seconds()},
      {"epochs", last.epochs},
      {"iterations", last.iterations},
      {"final_accuracy", number_or_null(last.eval.accuracy)},
      {"final_loss", number_or_null(last.eval.loss)},
      {"best_accuracy", best >= 0 ? nlohmann::json(best) : nlohmann::json()},
      {"time_to_accuracy", targets},
      {"bytes_sent", cluster.bytes_sent()},
      {"transfers", cluster.transfers_done()},
      {"transfers_started", static_cast<int64_t>(run.recorder.transfers.size())},
      {"transfers_finished", count_transfers([](const TransferRow& t) { return t.finished && !t.lost; })},
      {"transfers_in_flight", count_transfers([](const TransferRow& t) { return !t.finished && !t.lost; })},
      {"transfers_lost", count_transfers([](const TransferRow& t) { return t.lost; })},
      {"capacity_changes", count_events({"capacity"})},
      {"latency_changes", count_events({"latency"})},
      {"speed_changes", count_events({"speed"})},
      {"crashes", count_events({"crash"})},
      {"leaves", count_events({"leave"})},
      {"joins", count_events({"join"})},
      {"cross_traffic_flows_started", wan.cross_flows_started()},
      {"cross_traffic_flows_finished", wan.cross_flows_finished()},
      {"cross_traffic_bytes", wan.cross_bytes_finished()},
      {"merges", cluster.merges()},
      {"staleness", staleness(run.recorder.transfers)},
      {"starved_cuts", method.type->trains_alone
                           ? nlohmann::json::array()
                           : starved_cuts(run.recorder, learner.node_count(), sim.now(),
                                          sc.eval.starved_s > 0 ? seconds(sc.eval.starved_s)
                                                                : std::max(seconds(1), Time::ns(sim.now().ns() / 4)))},
      {"events", sim.executed()},
      {"wall_s", seconds_since(wall_start)},
      {"kernel_wall_s", learner.kernel_seconds()},
      {"evaluation_wall_s", learner.evaluation_seconds()},
  };
  return run;
}

}  // namespace gossipsim
