#include "analysis/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/methods/registry.h"

namespace gossipsim {

namespace {

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

// The longest time [from, from + length) in `times` (sorted) between 0 and `end`.
std::pair<Time, Time> longest_gap(const std::vector<Time>& times, Time end) {
  Time from = Time::zero(), longest_from, longest = Time::zero();
  for (size_t i = 0; i <= times.size(); ++i) {
    const Time to = i < times.size() ? times[i] : end;
    if (to - from > longest) {
      longest = to - from;
      longest_from = from;
    }
    from = to;
  }
  return {longest_from, longest};
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
    const auto [from, longest] = longest_gap(times, end);
    if (longest > threshold)
      out.push_back({{"cut", names[g] + (names.size() == 2 ? " | " + names[1] : " | rest")},
                     {"longest_gap_s", longest.seconds()},
                     {"from_s", from.seconds()},
                     {"to_s", (from + longest).seconds()},
                     {"crossings", times.size()}});
  }
  return out;
}

// Per target, the first evaluation that reached it (null: never).
}  // namespace

nlohmann::json time_to_accuracy(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                TargetMetric metric) {
  nlohmann::json out = nlohmann::json::object();
  for (double target : targets) {
    nlohmann::json hit;
    for (size_t k = 0; k < rows.size(); ++k) {
      const double a = target_value(rows[k].eval, metric);
      if (!(a >= target)) continue;
      // Where the accuracy crossed the target between the evaluation
      // before and this one, linearly: the grid of evaluations decides
      // nothing finer than its step otherwise.
      double crossed = rows[k].time.seconds();
      if (k > 0) {
        const double before = target_value(rows[k - 1].eval, metric), t0 = rows[k - 1].time.seconds();
        if (std::isfinite(before) && a > before) crossed = t0 + (target - before) / (a - before) * (crossed - t0);
      }
      hit = {{"virtual_s", rows[k].time.seconds()}, {"epochs", rows[k].epochs}, {"interpolated_s", crossed}};
      break;
    }
    out[fmt::format("{:g}", target)] = hit;
  }
  return out;
}

// The times to every target under every metric the evaluations have: the
// average model always, the node mean and the worst node when every node
// was evaluated, or the method trains alone (lone_model: its one model is
// every node's).
nlohmann::json time_to_accuracy_by(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                   bool lone_model) {
  nlohmann::json out = {{"average", time_to_accuracy(rows, targets, TargetMetric::kAverage)}};
  bool per_node = lone_model;
  for (const auto& r : rows) per_node = per_node || r.eval.per_node;
  if (per_node)
    for (TargetMetric m : {TargetMetric::kNodeMean, TargetMetric::kNodeMin})
      out[name_of(m, target_metric_names())] = time_to_accuracy(rows, targets, m);
  return out;
}

namespace {

nlohmann::json transfer_counts(const std::vector<TransferRow>& rows) {
  int64_t finished = 0, in_flight = 0, lost = 0;
  for (const auto& t : rows) {
    if (t.lost)
      ++lost;
    else if (t.finished)
      ++finished;
    else
      ++in_flight;
  }
  return {{"transfers_started", static_cast<int64_t>(rows.size())},
          {"transfers_finished", finished},
          {"transfers_in_flight", in_flight},
          {"transfers_lost", lost}};
}

nlohmann::json wan_counts(const MethodRun& run) {
  std::map<std::string, int64_t> n;  // one pass over events.csv's rows
  for (const auto& e : run.recorder.network_events) ++n[e.kind];
  const RunTotals& t = run.totals;
  nlohmann::json start = nlohmann::json::array();
  for (const ProfileStart& p : t.profile_start)
    start.push_back({{"kind", p.kind}, {"target", p.target}, {"value", p.value}});
  return {{"profile_start", start},
          {"capacity_changes", n["capacity"]},
          {"latency_changes", n["latency"]},
          {"speed_changes", n["speed"]},
          {"crashes", n["crash"]},
          {"leaves", n["leave"]},
          {"joins", n["join"]},
          {"cross_traffic_flows_started", t.cross_flows_started},
          {"cross_traffic_flows_finished", t.cross_flows_finished},
          {"cross_traffic_bytes", t.cross_bytes}};
}

}  // namespace

namespace {
nlohmann::json final_accuracy_by(const Evaluation& e, bool lone_model) {
  nlohmann::json out = {{"average", number_or_null(e.accuracy)}};
  if (e.per_node || lone_model)
    for (TargetMetric m : {TargetMetric::kNodeMean, TargetMetric::kNodeMin})
      out[name_of(m, target_metric_names())] = number_or_null(target_value(e, m));
  return out;
}

nlohmann::json traits_json(const MethodTraits& t) {
  nlohmann::json j = {{"trains_alone", t.trains_alone}, {"reference", t.reference}, {"merge", t.merge}};
  if (!t.ready.empty()) j["ready"] = t.ready;  // which reading of the send rule its results assume
  return j;
}
}  // namespace

nlohmann::json method_summary(const MethodRun& run) {
  const auto& rows = run.recorder.metrics;
  const MetricRow& last = rows.back();
  const RunTotals& t = run.totals;
  double best = -1;
  for (const auto& r : rows)
    if (std::isfinite(r.eval.accuracy)) best = std::max(best, r.eval.accuracy);
  const MethodTraits traits = traits_of(run.method);
  nlohmann::json s = {
      {"method", run.method.name},
      {"label", run.method.label},
      {"traits", traits_json(traits)},
      {"nodes", t.nodes},
      {"model_bytes", t.model_bytes},
      {"stop_reason", name_of(run.stop, stop_reason_names())},
      {"virtual_s", t.end.seconds()},
      {"epochs", last.epochs},
      {"iterations", last.iterations},
      {"final_accuracy", number_or_null(last.eval.accuracy)},
      // The last evaluation's accuracy on every metric it has (the nodes'
      // own models' mean and worst where they were evaluated).
      {"final_accuracy_by", final_accuracy_by(last.eval, run.method.type->trains_alone)},
      {"final_loss", number_or_null(last.eval.loss)},
      {"best_accuracy", best >= 0 ? nlohmann::json(best) : nlohmann::json()},
      {"target", name_of(run.target, target_metric_names())},
      {"time_to_accuracy", time_to_accuracy(rows, run.targets, run.target)},
      {"time_to_accuracy_by", time_to_accuracy_by(rows, run.targets, run.method.type->trains_alone)},
      {"bytes_sent", t.bytes_sent},
      {"transfers", t.transfers},
      {"merges", t.merges},
      {"staleness", staleness(run.recorder.transfers)},
      {"starved_cuts", run.method.type->trains_alone ? nlohmann::json::array()
                                                     : starved_cuts(run.recorder, t.nodes, t.end, run.starved_after)},
      {"events", t.events},
      {"wall_s", t.wall_s},
      {"kernel_wall_s", t.kernel_wall_s},
      {"evaluation_wall_s", t.evaluation_wall_s},
  };
  // The first training step whose loss was NaN or infinite (null: none).
  s["nonfinite_loss"] = run.nonfinite ? nlohmann::json{{"node", run.nonfinite->node},
                                                       {"step", run.nonfinite->step},
                                                       {"virtual_s", run.nonfinite->at.seconds()},
                                                       {"loss", std::isnan(run.nonfinite->loss) ? "nan"
                                                                : run.nonfinite->loss > 0       ? "inf"
                                                                                                : "-inf"}}
                                      : nlohmann::json();
  s.update(transfer_counts(run.recorder.transfers));
  s.update(wan_counts(run));
  s["cpu_s"] = run.totals.cpu_s;  // the process's CPU time over this method's run (every thread)
  if (!run.real.is_null()) s["real"] = run.real;
  return s;
}

}  // namespace gossipsim
