#include "sim/wan.h"

#include <fmt/format.h>

#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/network.h"
#include "sim/recorder.h"
#include "sim/simulator.h"
#include "topologies/builder.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

// The most points one profile may hold (generated or given).
constexpr size_t kMaxPoints = 1000000;

std::map<std::string, Vertex> vertex_names(const Topology& t) {
  std::map<std::string, Vertex> names;
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) names.emplace(t.graph[*it].name, *it);
  return names;
}

NodeId node_of(const JsonReader& v, const Topology& t, const std::map<std::string, Vertex>& names) {
  if (v.value().is_number()) {
    const int64_t id = v.as_integer();
    if (id < 0 || id >= t.node_count()) v.fail(fmt::format("a node id in [0, {})", t.node_count()));
    return static_cast<NodeId>(id);
  }
  auto it = names.find(v.as_string());
  if (it != names.end())
    for (NodeId n = 0; n < t.node_count(); ++n)
      if (t.nodes[n] == it->second) return n;
  v.fail("a node id or the name of a compute node");
}

std::pair<Vertex, Vertex> link_of(const JsonReader& r, const std::string& key, const Topology& t,
                                  const std::map<std::string, Vertex>& names) {
  JsonReader pair = r.at(key);
  if (pair.array_size() != 2) pair.fail("two vertex names");
  Vertex ends[2];
  for (size_t i = 0; i < 2; ++i) {
    const std::string name = pair.element(i).as_string();
    std::string look = name;
    if (key == "region_pair") look = "router:" + name;
    auto it = names.find(look);
    if (it == names.end())
      pair.element(i).fail(key == "region_pair" ? "a region of the geo topology" : "the name of a vertex");
    ends[i] = it->second;
  }
  if (!boost::edge(ends[0], ends[1], t.graph).second) pair.fail("two vertices joined by a link");
  return {ends[0], ends[1]};
}

// Points read from a CSV file of time_s,value rows.
std::vector<std::pair<double, double>> read_csv_points(const JsonReader& r, const std::string& key) {
  fs::path path = r.string(key);
  if (path.is_relative() && !r.file().empty()) path = fs::path(r.file()).parent_path() / path;
  if (!fs::exists(path)) r.fail(key, "an existing CSV file (" + path.string() + " not found)");
  check_input_file(path.string(), "a CSV file of time_s,value rows");
  std::ifstream in(path);
  std::vector<std::pair<double, double>> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    double t, v;
    char comma;
    if (!(row >> t >> comma >> v) || comma != ',') {
      if (number == 1 && out.empty()) continue;  // a header
      throw InputError(path.string(), fmt::format("line {}", number), "expected time_s,value (two numbers)");
    }
    if (!std::isfinite(t) || !std::isfinite(v))
      throw InputError(path.string(), fmt::format("line {}", number), "expected finite numbers");
    out.emplace_back(t, v);
  }
  if (out.empty()) throw InputError(path.string(), "", "expected at least one time_s,value row");
  return out;
}

Profile parse_profile(const JsonReader& r, Rng rng) {
  r.expect_object();
  std::vector<std::pair<double, double>> pts;  // seconds, mbps
  int kinds = 0;
  for (const char* kind : {"points", "csv", "diurnal", "random_walk", "on_off"}) kinds += r.has(kind) ? 1 : 0;
  if (kinds != 1) r.fail("exactly one of points, csv, diurnal, random_walk, on_off");
  if (r.has("points")) {
    JsonReader list = r.at("points");
    for (size_t i = 0; i < list.array_size(); ++i) {
      JsonReader p = list.element(i);
      if (p.array_size() != 2) p.fail("a [time_s, mbps] pair");
      pts.emplace_back(p.element(0).as_number(), p.element(1).as_number());
    }
    if (pts.empty()) r.fail("points", "at least one [time_s, mbps] pair");
  }
  if (r.has("csv")) {
    try {
      pts = read_csv_points(r, "csv");
    } catch (const InputError& e) {
      throw r.inside_named_file(e, "csv", "CSV file");
    }
  }
  auto until = [&](const JsonReader& g) {
    const double u = g.number("until_s");
    g.require(u > 0 && u <= kMaxVirtualSeconds, "until_s", "a number of seconds in (0, 1e9]");
    return u;
  };
  auto step = [&](const JsonReader& g, double span) {
    const double s = g.number("step_s");
    g.require(s > 0 && span / s <= kMaxPoints, "step_s", fmt::format("a step > 0 giving at most {} points", kMaxPoints));
    return s;
  };
  double generated_period = 0;
  if (auto g = r.child("diurnal")) {
    const double mean = g->number("mean"), amplitude = g->number("amplitude"), period = g->number("period_s");
    const double phase = g->number("phase_s", 0.0);
    g->require(mean > 0, "mean", "a capacity > 0 in Mbit/s");
    g->require(amplitude >= 0 && amplitude <= 1, "amplitude", "a fraction in [0, 1]");
    g->require(period > 0 && period <= kMaxVirtualSeconds, "period_s", "a number of seconds in (0, 1e9]");
    const double s = step(*g, period);
    g->done();
    for (double t = 0; t < period - 1e-9; t += s)
      pts.emplace_back(t, mean * (1 + amplitude * std::sin(2 * M_PI * (t - phase) / period)));
    generated_period = period;
  }
  if (auto g = r.child("random_walk")) {
    double value = g->number("start");
    const double sigma = g->number("sigma"), lo = g->number("min"), hi = g->number("max");
    g->require(sigma >= 0 && sigma <= 10, "sigma", "a number in [0, 10]");
    g->require(lo > 0 && lo <= hi, "min", "a capacity > 0, <= max");
    g->require(value >= lo && value <= hi, "start", "a capacity within [min, max]");
    const double end = until(*g), s = step(*g, end);
    g->done();
    boost::random::normal_distribution<double> normal(0, 1);
    for (double t = 0; t < end; t += s) {
      pts.emplace_back(t, value);
      value = std::clamp(value * std::exp(sigma * normal(rng)), lo, hi);
    }
  }
  if (auto g = r.child("on_off")) {
    const double on = g->number("on"), off = g->number("off", 0.0);
    const Distribution up = Distribution::parse(g->at("up_s"), Distribution::Domain::kPositive, {1e-6, 1e9});
    const Distribution down = Distribution::parse(g->at("down_s"), Distribution::Domain::kPositive, {1e-6, 1e9});
    const double end = until(*g);
    g->done();
    g->require(on == 0 || (on >= kCapacityMbps.min_draw && on <= kCapacityMbps.max), "on", "a capacity in Mbit/s");
    g->require(off == 0 || (off >= kCapacityMbps.min_draw && off <= kCapacityMbps.max), "off", "a capacity in Mbit/s");
    for (double t = 0; t < end && pts.size() <= kMaxPoints;) {
      pts.emplace_back(t, on);
      t += up.sample(rng);
      if (t >= end) break;
      pts.emplace_back(t, off);
      t += down.sample(rng);
    }
  }
  Profile p;
  const double period = r.number("period_s", generated_period);
  r.require(period >= 0 && period <= kMaxVirtualSeconds, "period_s", "a number of seconds in [0, 1e9]");
  p.period = seconds(period);
  if (pts.size() > kMaxPoints) r.fail(fmt::format("at most {} points", kMaxPoints));
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto [t, v] = pts[i];
    const std::string where = fmt::format("point {} (time {:g} s)", i, t);
    if (!(t >= 0 && t <= kMaxVirtualSeconds)) r.fail(where + ": a time in [0, 1e9] s");
    if (i > 0 && !(t > pts[i - 1].first)) r.fail(where + ": a time after the previous point's (times strictly increase)");
    if (period > 0 && !(t < period)) r.fail(where + ": a time within the period (< period_s)");
    if (!(v == 0 || (v >= kCapacityMbps.min_draw && v <= kCapacityMbps.max)))
      r.fail(where + fmt::format(": a capacity of 0 or in [{:g}, {:g}] Mbit/s", kCapacityMbps.min_draw, kCapacityMbps.max));
    p.points.emplace_back(seconds(t), v);
  }
  // Rounding to the nanosecond must not merge two points.
  for (size_t i = 1; i < p.points.size(); ++i)
    if (p.points[i].first <= p.points[i - 1].first) r.fail("points at least 1 ns apart");
  return p;
}

}  // namespace

void apply_topology_overrides(const JsonReader& list, Topology& t, const Streams& streams, ComputeOverrides& compute) {
  const auto names = vertex_names(t);
  const size_t n = t.node_count();
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    std::vector<NodeId> nodes;
    int selectors = 0;
    if (auto v = e.child("nodes")) {
      ++selectors;
      for (size_t i = 0; i < v->array_size(); ++i) nodes.push_back(node_of(v->element(i), t, names));
    }
    if (auto v = e.child("range")) {
      ++selectors;
      if (v->array_size() != 2) v->fail("[first, last] node ids");
      const NodeId first = node_of(v->element(0), t, names), last = node_of(v->element(1), t, names);
      if (last < first) v->element(1).fail("a node id >= the first");
      for (NodeId i = first; i <= last; ++i) nodes.push_back(i);
    }
    if (e.has("region")) {
      ++selectors;
      const std::string region = e.string("region");
      for (NodeId i = 0; i < t.node_count(); ++i)
        if (t.graph[t.nodes[i]].region == region) nodes.push_back(i);
      if (nodes.empty()) e.fail("region", "a region that holds compute nodes");
    }
    if (e.boolean("all", false)) {
      ++selectors;
      for (NodeId i = 0; i < t.node_count(); ++i) nodes.push_back(i);
    }
    std::optional<std::pair<Vertex, Vertex>> link;
    for (const char* key : {"link", "region_pair"})
      if (e.has(key)) {
        ++selectors;
        link = link_of(e, key, t, names);
      }
    if (selectors != 1) e.fail("exactly one of nodes, range, region, all, link, region_pair");

    if (link) {
      auto [edge, found] = boost::edge(link->first, link->second, t.graph);
      Rng rng = streams.stream("override-link", k);
      if (e.has("bandwidth_mbps"))
        t.graph[edge].capacity =
            mbps(Distribution::parse(e.at("bandwidth_mbps"), Distribution::Domain::kPositive, kCapacityMbps).sample(rng));
      if (e.has("latency_ms"))
        t.graph[edge].latency =
            milliseconds(Distribution::parse(e.at("latency_ms"), Distribution::Domain::kNonNegative, kLatencyMs).sample(rng));
      e.done();
      continue;
    }
    std::optional<Distribution> iteration, up, down;
    if (e.has("iteration_ms"))
      iteration = Distribution::parse(e.at("iteration_ms"), Distribution::Domain::kPositive, {1e-3, 1e7});
    if (e.has("up_mbps")) up = Distribution::parse(e.at("up_mbps"), Distribution::Domain::kPositive, kCapacityMbps);
    if (e.has("down_mbps")) down = Distribution::parse(e.at("down_mbps"), Distribution::Domain::kPositive, kCapacityMbps);
    std::optional<double> jitter;
    if (e.has("jitter")) {
      jitter = e.number("jitter");
      e.require(*jitter >= 0 && *jitter <= 0.9, "jitter", "a number in [0, 0.9]");
    }
    e.done();
    if ((iteration || jitter) && compute.empty()) {
      compute.iteration_ms.assign(n, NAN);
      compute.jitter.assign(n, NAN);
    }
    for (NodeId i : nodes) {
      Rng rng = streams.stream(fmt::format("override-{}", k), static_cast<uint64_t>(i));
      if (iteration) compute.iteration_ms[i] = iteration->sample(rng);
      if (jitter) compute.jitter[i] = *jitter;
      auto& v = t.graph[t.nodes[i]];
      if (up) v.up = mbps(up->sample(rng));
      if (down) v.down = mbps(down->sample(rng));
    }
  }
}

std::vector<CapacityProfile> parse_profiles(const JsonReader& list, const Topology& t, const Streams& streams) {
  const auto names = vertex_names(t);
  std::vector<CapacityProfile> out;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    const Profile p = parse_profile(e.at("capacity_mbps"), streams.stream("profile", k));
    int targets = 0;
    for (const char* key : {"link", "region_pair"})
      if (e.has(key)) {
        ++targets;
        auto [a, b] = link_of(e, key, t, names);
        CapacityProfile c;
        c.target = CapacityProfile::Target::kLink;
        c.a = a;
        c.b = b;
        c.name = fmt::format("link {}--{}", t.graph[a].name, t.graph[b].name);
        c.mbps = p;
        out.push_back(c);
      }
    if (e.has("access")) {
      ++targets;
      const NodeId n = node_of(e.at("access"), t, names);
      const std::string dir = e.string("direction", "both");
      if (dir != "up" && dir != "down" && dir != "both") e.fail("direction", "one of up, down, both");
      for (bool up : {true, false}) {
        if ((up && dir == "down") || (!up && dir == "up")) continue;
        CapacityProfile c;
        c.target = up ? CapacityProfile::Target::kUp : CapacityProfile::Target::kDown;
        c.node = n;
        c.name = fmt::format("{} {}", up ? "up" : "down", t.graph[t.nodes[n]].name);
        c.mbps = p;
        out.push_back(c);
      }
    }
    if (targets != 1) e.fail("exactly one target: link, region_pair or access");
    e.done();
  }
  return out;
}

WanDynamics::WanDynamics(Simulator& sim, Network& net, const std::vector<CapacityProfile>& profiles, Recorder& recorder)
    : sim_(sim), net_(net), profiles_(profiles), recorder_(recorder), next_(profiles.size(), 0),
      cycle_(profiles.size(), Time::zero()) {}

void WanDynamics::start() {
  for (size_t p = 0; p < profiles_.size(); ++p) schedule_next(p);
}

void WanDynamics::schedule_next(size_t p) {
  const CapacityProfile& c = profiles_[p];
  const auto& points = c.mbps.points;
  if (next_[p] == points.size()) {
    if (c.mbps.period == Time::zero()) return;  // the last value holds for ever
    next_[p] = 0;
    cycle_[p] += c.mbps.period;
  }
  const Time at = cycle_[p] + points[next_[p]].first;
  if (at.ns() > static_cast<int64_t>(kMaxVirtualSeconds * 1e9)) return;
  sim_.schedule_at(at, [this, p] {
    const CapacityProfile& c = profiles_[p];
    const double value = c.mbps.points[next_[p]].second;
    switch (c.target) {
      case CapacityProfile::Target::kLink: net_.set_link_capacity(c.a, c.b, mbps(value)); break;
      case CapacityProfile::Target::kUp: net_.set_access_capacity(c.node, true, mbps(value)); break;
      case CapacityProfile::Target::kDown: net_.set_access_capacity(c.node, false, mbps(value)); break;
    }
    recorder_.network_events.push_back({sim_.now(), "capacity", c.name, value});
    ++next_[p];
    schedule_next(p);
  });
}

}  // namespace gossipsim
