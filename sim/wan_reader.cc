#include "sim/wan_reader.h"

#include <fmt/format.h>

#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

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

// The nodes a selector of object e names (nodes, range, region, all or fraction), in id order,
// each once; `found` counts the selector keys present.
std::vector<NodeId> select_nodes(const JsonReader& e, const Topology& t, const std::map<std::string, Vertex>& names,
                                 Rng rng, int& found) {
  std::vector<NodeId> nodes;
  const NodeId n = t.node_count();
  if (auto v = e.child("nodes")) {
    ++found;
    for (size_t i = 0; i < v->array_size(); ++i) nodes.push_back(node_of(v->element(i), t, names));
    if (nodes.empty()) v->fail("at least one node");
  }
  if (auto v = e.child("range")) {
    ++found;
    if (v->array_size() != 2) v->fail("[first, last] node ids");
    const NodeId first = node_of(v->element(0), t, names), last = node_of(v->element(1), t, names);
    if (last < first) v->element(1).fail("a node id >= the first");
    for (NodeId i = first; i <= last; ++i) nodes.push_back(i);
  }
  if (e.has("region")) {
    ++found;
    const std::string region = e.string("region");
    for (NodeId i = 0; i < n; ++i)
      if (t.graph[t.nodes[i]].region == region) nodes.push_back(i);
    if (nodes.empty()) e.fail("region", "a region that holds compute nodes");
  }
  if (e.has("all")) {
    ++found;
    if (!e.boolean("all", false)) e.fail("all", "true");
    for (NodeId i = 0; i < n; ++i) nodes.push_back(i);
  }
  if (e.has("fraction")) {
    ++found;
    const double f = e.number("fraction");
    e.require(f > 0 && f <= 1, "fraction", "a fraction of the nodes in (0, 1]");
    const size_t count = std::max<size_t>(1, static_cast<size_t>(std::llround(f * n)));
    std::vector<NodeId> all(n);
    for (NodeId i = 0; i < n; ++i) all[i] = i;
    for (size_t i = 0; i < count; ++i) std::swap(all[i], all[i + uniform_index(rng, n - i)]);
    nodes.assign(all.begin(), all.begin() + count);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// The nodes that object e selects, with exactly one selector.
std::vector<NodeId> selected_nodes(const JsonReader& e, const Topology& t, const std::map<std::string, Vertex>& names,
                                   Rng rng) {
  int found = 0;
  auto nodes = select_nodes(e, t, names, std::move(rng), found);
  if (found != 1) e.fail("exactly one of nodes, range, region, all, fraction");
  return nodes;
}

// Points read from a CSV file of time_s,value rows.
std::vector<std::pair<double, double>> read_csv_points(const JsonReader& r, const std::string& key) {
  fs::path path = r.string(key);
  if (path.is_relative() && !r.file().empty()) path = fs::path(r.file()).parent_path() / path;
  if (!fs::exists(path)) r.fail(key, "an existing CSV file (" + path.string() + " not found)");
  check_input_file(path.string(), "a CSV file of time_s,value rows");
  r.note_input(key, path.string());
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

// What values a profile may take.
struct ValueRange {
  double min, max;
  bool zero;         // 0 is allowed too
  const char* unit;  // for messages
  bool ok(double v) const { return (zero && v == 0) || (v >= min && v <= max); }
  std::string text() const {
    return fmt::format("{}[{:g}, {:g}]{}", zero ? "0 or a value in " : "a value in ", min, max, unit);
  }
};
const ValueRange kCapacityRange{kCapacityMbps.min_draw, kCapacityMbps.max, true, " Mbit/s"};
const ValueRange kLatencyRange{0, kLatencyMs.max, false, " ms"};
const ValueRange kFactorRange{0.01, 1000, false, ""};

using Points = std::vector<std::pair<double, double>>;  // seconds, value

double until_of(const JsonReader& g) {
  const double u = g.number("until_s");
  g.require(u > 0 && u <= kMaxVirtualSeconds, "until_s", "a number of seconds in (0, 1e9]");
  return u;
}

double step_of(const JsonReader& g, double span) {
  const double s = g.number("step_s");
  g.require(s > 0 && span / s <= kMaxPoints, "step_s", fmt::format("a step > 0 giving at most {} points", kMaxPoints));
  return s;
}

Points given_points(const JsonReader& r) {
  Points pts;
  JsonReader list = r.at("points");
  for (size_t i = 0; i < list.array_size(); ++i) {
    JsonReader p = list.element(i);
    if (p.array_size() != 2) p.fail("a [time_s, mbps] pair");
    pts.emplace_back(p.element(0).as_number(), p.element(1).as_number());
  }
  if (pts.empty()) r.fail("points", "at least one [time_s, mbps] pair");
  return pts;
}

// mean * (1 + amplitude * sin(2 pi (t - phase) / period)), one point a step
// over one period (the profile repeats it).
Points diurnal_points(const JsonReader& g, const ValueRange& range, double& period) {
  const double mean = g.number("mean"), amplitude = g.number("amplitude");
  period = g.number("period_s");
  const double phase = g.number("phase_s", 0.0);
  g.require(mean > 0 && range.ok(mean), "mean", range.text());
  g.require(amplitude >= 0 && amplitude <= 1, "amplitude", "a fraction in [0, 1]");
  g.require(period > 0 && period <= kMaxVirtualSeconds, "period_s", "a number of seconds in (0, 1e9]");
  const double s = step_of(g, period);
  g.done();
  Points pts;
  for (double t = 0; t < period - 1e-9; t += s)
    pts.emplace_back(t, mean * (1 + amplitude * std::sin(2 * M_PI * (t - phase) / period)));
  return pts;
}

// Each step the value is multiplied by exp(sigma N(0, 1)), clamped.
Points random_walk_points(const JsonReader& g, const ValueRange& range, Rng& rng) {
  double value = g.number("start");
  const double sigma = g.number("sigma"), lo = g.number("min"), hi = g.number("max");
  g.require(sigma >= 0 && sigma <= 10, "sigma", "a number in [0, 10]");
  g.require(range.ok(lo) && lo > 0 && lo <= hi, "min", range.text() + ", > 0 and <= max");
  g.require(range.ok(hi), "max", range.text());
  g.require(value >= lo && value <= hi, "start", "a value within [min, max]");
  const double end = until_of(g), s = step_of(g, end);
  g.done();
  Points pts;
  boost::random::normal_distribution<double> normal(0, 1);
  for (double t = 0; t < end; t += s) {
    pts.emplace_back(t, value);
    value = std::clamp(value * std::exp(sigma * normal(rng)), lo, hi);
  }
  return pts;
}

// Alternating periods at `on` and `off`, of drawn lengths.
Points on_off_points(const JsonReader& g, const ValueRange& range, Rng& rng) {
  const double on = g.number("on"), off = g.number("off", 0.0);
  const Distribution up = Distribution::parse(g.at("up_s"), Distribution::Domain::kPositive, {1e-6, 1e9});
  const Distribution down = Distribution::parse(g.at("down_s"), Distribution::Domain::kPositive, {1e-6, 1e9});
  const double end = until_of(g);
  g.done();
  g.require(range.ok(on), "on", range.text());
  g.require(range.ok(off), "off", range.text());
  Points pts;
  for (double t = 0; t < end && pts.size() <= kMaxPoints;) {
    pts.emplace_back(t, on);
    t += up.sample(rng);
    if (t >= end) break;
    pts.emplace_back(t, off);
    t += down.sample(rng);
  }
  return pts;
}

// The points as a profile, each checked: times in range and strictly
// increasing (also once rounded to the nanosecond), within the period,
// values in range.
Profile checked_profile(const JsonReader& r, const Points& pts, double period, const ValueRange& range) {
  Profile p;
  p.period = seconds(period);
  if (pts.size() > kMaxPoints) r.fail(fmt::format("at most {} points", kMaxPoints));
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto [t, v] = pts[i];
    const std::string where = fmt::format("point {} (time {:g} s)", i, t);
    if (!(t >= 0 && t <= kMaxVirtualSeconds)) r.fail(where + ": a time in [0, 1e9] s");
    if (i > 0 && !(t > pts[i - 1].first)) r.fail(where + ": a time after the previous point's (times strictly increase)");
    if (period > 0 && !(t < period)) r.fail(where + ": a time within the period (< period_s)");
    if (!range.ok(v)) r.fail(where + ": " + range.text());
    p.points.emplace_back(seconds(t), v);
  }
  for (size_t i = 1; i < p.points.size(); ++i)
    if (p.points[i].first <= p.points[i - 1].first) r.fail("points at least 1 ns apart");
  return p;
}

Profile parse_profile(const JsonReader& r, Rng rng, const ValueRange& range) {
  r.expect_object();
  int kinds = 0;
  for (const char* kind : {"points", "csv", "diurnal", "random_walk", "on_off"}) kinds += r.has(kind) ? 1 : 0;
  if (kinds != 1) r.fail("exactly one of points, csv, diurnal, random_walk, on_off");
  Points pts;
  double generated_period = 0;
  if (r.has("points")) pts = given_points(r);
  if (r.has("csv")) {
    try {
      pts = read_csv_points(r, "csv");
    } catch (const InputError& e) {
      throw r.inside_named_file(e, "csv", "CSV file");
    }
  }
  if (auto g = r.child("diurnal")) pts = diurnal_points(*g, range, generated_period);
  if (auto g = r.child("random_walk")) pts = random_walk_points(*g, range, rng);
  if (auto g = r.child("on_off")) pts = on_off_points(*g, range, rng);
  const double period = r.number("period_s", generated_period);
  r.require(period >= 0 && period <= kMaxVirtualSeconds, "period_s", "a number of seconds in [0, 1e9]");
  return checked_profile(r, pts, period, range);
}

}  // namespace

void apply_topology_overrides(const JsonReader& list, Topology& t, const Streams& streams, ComputeOverrides& compute) {
  const auto names = vertex_names(t);
  const size_t n = t.node_count();
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    int selectors = 0;
    std::vector<NodeId> nodes = select_nodes(e, t, names, streams.stream("select-override", k), selectors);
    std::optional<std::pair<Vertex, Vertex>> link;
    for (const char* key : {"link", "region_pair"})
      if (e.has(key)) {
        ++selectors;
        link = link_of(e, key, t, names);
      }
    if (selectors != 1) e.fail("exactly one of nodes, range, region, all, fraction, link, region_pair");

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
      compute.iteration_ms.assign(n, std::nullopt);
      compute.jitter.assign(n, std::nullopt);
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

std::vector<WanProfile> parse_profiles(const JsonReader& list, const Topology& t, const Streams& streams) {
  const auto names = vertex_names(t);
  std::vector<WanProfile> out;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    int targets = 0;
    for (const char* key : {"link", "region_pair"})
      if (e.has(key)) {
        ++targets;
        auto [a, b] = link_of(e, key, t, names);
        const std::string link = fmt::format("link {}--{}", t.graph[a].name, t.graph[b].name);
        if (!e.has("capacity_mbps") && !e.has("latency_ms")) e.fail("capacity_mbps or latency_ms (or both)");
        if (e.has("capacity_mbps"))
          out.push_back({WanProfile::Target::kLinkCapacity, a, b, 0, link,
                         parse_profile(e.at("capacity_mbps"), streams.stream("profile", k), kCapacityRange)});
        if (e.has("latency_ms"))
          out.push_back({WanProfile::Target::kLinkLatency, a, b, 0, link,
                         parse_profile(e.at("latency_ms"), streams.stream("profile-latency", k), kLatencyRange)});
      }
    if (e.has("access")) {
      ++targets;
      const NodeId n = node_of(e.at("access"), t, names);
      const std::string dir = e.string("direction", "both");
      if (dir != "up" && dir != "down" && dir != "both") e.fail("direction", "one of up, down, both");
      const Profile p = parse_profile(e.at("capacity_mbps"), streams.stream("profile", k), kCapacityRange);
      for (bool up : {true, false}) {
        if ((up && dir == "down") || (!up && dir == "up")) continue;
        out.push_back({up ? WanProfile::Target::kUp : WanProfile::Target::kDown, 0, 0, n,
                       fmt::format("{} {}", up ? "up" : "down", t.graph[t.nodes[n]].name), p});
      }
    }
    if (targets != 1) e.fail("exactly one target: link, region_pair or access");
    e.done();
  }
  return out;
}

std::vector<WanProfile> parse_compute_profiles(const JsonReader& list, const Topology& t, const Streams& streams) {
  const auto names = vertex_names(t);
  std::vector<WanProfile> out;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    const auto nodes = selected_nodes(e, t, names, streams.stream("select-compute", k));
    const Profile p = parse_profile(e.at("factor"), streams.stream("compute-profile", k), kFactorRange);
    e.done();
    // Each node holds its own copy of the points.
    if (static_cast<double>(nodes.size()) * p.points.size() > kMaxPoints * 10.0)
      e.fail(fmt::format("at most {} points over all its nodes ({} nodes x {} points)", kMaxPoints * 10, nodes.size(),
                         p.points.size()));
    for (NodeId n : nodes) out.push_back({WanProfile::Target::kCompute, 0, 0, n, fmt::format("n{}", n), p});
  }
  return out;
}

namespace {

ChurnEvent churn_event(Time at, NodeId n, ChurnEvent::Kind kind, const std::string& model) {
  ChurnEvent e;
  e.at = at;
  e.node = n;
  e.kind = kind;
  e.model = model;
  return e;
}

// A churn event as read, with where it was given (for errors); a node whose
// cycle starts down has a mark of its own, before any event.
struct TaggedChurn {
  ChurnEvent e;
  std::string path;
  bool starts_down = false;
};

constexpr size_t kMaxChurnEvents = 1000000;

ChurnEvent::Kind churn_kind(const std::string& s) {
  return s == "crash" ? ChurnEvent::Kind::kCrash : s == "leave" ? ChurnEvent::Kind::kLeave : ChurnEvent::Kind::kJoin;
}

void read_churn_events(const JsonReader& list, const std::vector<NodeId>& nodes, const std::string& model,
                       std::vector<TaggedChurn>& all) {
  if (list.array_size() == 0) list.fail("at least one [time_s, crash | leave | join] pair");
  for (size_t i = 0; i < list.array_size(); ++i) {
    JsonReader p = list.element(i);
    if (p.array_size() != 2) p.fail("a [time_s, crash | leave | join] pair");
    const double at = p.element(0).as_number();
    if (!(at >= 0 && at <= kMaxVirtualSeconds)) p.element(0).fail("a time in [0, 1e9] s");
    const std::string what = p.element(1).as_string();
    if (what != "crash" && what != "leave" && what != "join") p.element(1).fail("one of crash, leave, join");
    for (NodeId n : nodes) all.push_back({churn_event(seconds(at), n, churn_kind(what), model), p.path()});
  }
}

// Alternating up and down periods of drawn lengths, per node from a stream
// of the entry's own.
void read_churn_cycle(const JsonReader& c, const std::vector<NodeId>& nodes, const std::string& model, size_t entry,
                      const Streams& streams, std::vector<TaggedChurn>& all) {
  const Distribution up = Distribution::parse(c.at("up_s"), Distribution::Domain::kPositive, {1e-3, 1e9});
  const Distribution down = Distribution::parse(c.at("down_s"), Distribution::Domain::kPositive, {1e-3, 1e9});
  const double until = c.number("until_s");
  c.require(until > 0 && until <= kMaxVirtualSeconds, "until_s", "a number of seconds in (0, 1e9]");
  const std::string how = c.string("down", "crash");
  if (how != "crash" && how != "leave") c.fail("down", "one of crash, leave");
  const std::string start = c.string("start", "up");
  if (start != "up" && start != "down") c.fail("start", "one of up, down");
  c.done();
  for (NodeId n : nodes) {
    Rng rng = streams.stream(fmt::format("churn-{}", entry), static_cast<uint64_t>(n));
    bool is_up = start == "up";
    if (!is_up) all.push_back({churn_event(Time::zero(), n, ChurnEvent::Kind::kCrash, model), c.path(), true});
    for (double at = 0;;) {
      at += (is_up ? up : down).sample(rng);
      if (at >= until) break;
      all.push_back({churn_event(seconds(at), n, is_up ? churn_kind(how) : ChurnEvent::Kind::kJoin, model), c.path()});
      is_up = !is_up;
      if (all.size() > kMaxChurnEvents) c.fail(fmt::format("at most {} churn events in all", kMaxChurnEvents));
    }
  }
}

// Every node's events in time order, checked to alternate down and join at
// distinct times; the nodes that start down.
Churn ordered_churn(std::vector<TaggedChurn> all, const std::string& file) {
  std::stable_sort(all.begin(), all.end(), [](const TaggedChurn& a, const TaggedChurn& b) {
    if (a.e.node != b.e.node) return a.e.node < b.e.node;
    if (a.starts_down != b.starts_down) return a.starts_down;
    return a.e.at < b.e.at;
  });
  Churn churn;
  for (size_t i = 0; i < all.size(); ++i) {
    const TaggedChurn& x = all[i];
    const bool first = i == 0 || all[i - 1].e.node != x.e.node;
    // A node is up before its first event unless that event is a join.
    const bool was_up = first ? x.e.down() : !all[i - 1].e.down();
    if (!first && !all[i - 1].starts_down && all[i - 1].e.at == x.e.at)
      throw InputError(file, x.path,
                       fmt::format("expected node {}'s events at distinct times (two at {:g} s; churn entries overlap)",
                                   x.e.node, x.e.at.seconds()));
    if (x.e.down() != was_up)
      throw InputError(file, x.path,
                       fmt::format("expected node {}'s events to alternate down and join: a {} at {:g} s while it is {}",
                                   x.e.node, x.e.down() ? "down event" : "join", x.e.at.seconds(),
                                   was_up ? "up" : "down"));
    if ((first && !x.e.down()) || x.starts_down) churn.start_down.push_back(x.e.node);
    if (!x.starts_down) churn.events.push_back(x.e);
  }
  std::stable_sort(churn.events.begin(), churn.events.end(), [](const ChurnEvent& a, const ChurnEvent& b) {
    return a.at != b.at ? a.at < b.at : a.node < b.node;
  });
  return churn;
}

}  // namespace

Churn parse_churn(const JsonReader& list, const Topology& t, const Streams& streams) {
  const auto names = vertex_names(t);
  std::vector<TaggedChurn> all;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    const auto nodes = selected_nodes(e, t, names, streams.stream("select-churn", k));
    const std::string model = e.string("model", "average");
    if (model != "average" && model != "fresh" && model != "stale") e.fail("model", "one of average, fresh, stale");
    if (e.has("events") == e.has("cycle")) e.fail("exactly one of events, cycle");
    if (auto events = e.child("events")) read_churn_events(*events, nodes, model, all);
    if (auto c = e.child("cycle")) read_churn_cycle(*c, nodes, model, k, streams, all);
    if (all.size() > kMaxChurnEvents) e.fail(fmt::format("at most {} churn events in all", kMaxChurnEvents));
    e.done();
  }
  return ordered_churn(std::move(all), list.file());
}

std::vector<CrossTraffic> parse_cross_traffic(const JsonReader& list, const Topology& t, const Streams& streams) {
  const auto names = vertex_names(t);
  std::vector<CrossTraffic> out;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    CrossTraffic c;
    c.name = fmt::format("cross_traffic/{}", k);
    for (const char* end : {"from", "to"}) {
      JsonReader sel = e.at(end);
      sel.expect_object();
      auto nodes = selected_nodes(sel, t, names, streams.stream(fmt::format("select-cross-{}", end), k));
      sel.done();
      (std::string(end) == "from" ? c.from : c.to) = std::move(nodes);
    }
    if (c.from.size() == 1 && c.to.size() == 1 && c.from[0] == c.to[0])
      e.fail("to", "nodes other than the one sender (a flow needs two different nodes)");
    c.size_mb = Distribution::parse(e.at("size_mb"), Distribution::Domain::kPositive, {1e-6, 1e6});
    c.interarrival_s = Distribution::parse(e.at("interarrival_s"), Distribution::Domain::kPositive, {1e-6, 1e9});
    const double start = e.number("start_s", 0.0), until = e.number("until_s");
    e.require(start >= 0 && start <= kMaxVirtualSeconds, "start_s", "a number of seconds in [0, 1e9]");
    e.require(until > start && until <= kMaxVirtualSeconds, "until_s", "a number of seconds after start_s, <= 1e9");
    c.start = seconds(start);
    c.until = seconds(until);
    // Every flow is a row of events.csv: bound the expected count.
    constexpr double kMaxFlows = 1e7;
    if ((until - start) / c.interarrival_s.mean() > kMaxFlows)
      e.fail("interarrival_s", fmt::format("gaps giving at most {:g} flows on average over [start_s, until_s] "
                                           "({:g} expected)", kMaxFlows, (until - start) / c.interarrival_s.mean()));
    e.done();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gossipsim
