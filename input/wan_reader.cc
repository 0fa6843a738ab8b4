#include "input/wan_reader.h"

#include <fmt/format.h>

#include <boost/random/normal_distribution.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "base/numbers.h"
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
    std::set<std::string> regions;  // of compute nodes
    for (NodeId i = 0; i < n; ++i) {
      const std::string& r = t.graph[t.nodes[i]].region;
      if (!r.empty()) regions.insert(r);
      if (!region.empty() && r == region) nodes.push_back(i);
    }
    if (nodes.empty())
      e.fail("region", regions.empty() ? "a region, of a topology that has them (this one has none: nodes, range, all "
                                         "or fraction select its nodes)"
                                       : "a region that holds compute nodes: " +
                                             JsonReader::one_of({regions.begin(), regions.end()}));
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

// A point of a profile, with the CSV line it came from (0: not from a file).
struct Point {
  double t, v;
  int line = 0;
};
using Points = std::vector<Point>;

// A number that is the whole of `cell` (blanks around it allowed): "5abc",
// "7 Mbit/s", "0x2" and "" are not numbers.
std::optional<double> whole_number(const std::string& cell) { return parse_decimal(trim_blanks(cell)); }

// Points read from a CSV file of time_s,value rows: exactly two numeric
// fields a row; a first row of two non-numeric fields is a header; blank
// lines and lines starting with # are skipped; a UTF-8 byte order mark is
// ignored. Errors name the file and the line. At most `most` rows.
Points read_csv_points(const JsonReader& r, const std::string& key, int64_t most, std::string& file) {
  fs::path path = r.string(key);
  if (path.is_relative() && !r.file().empty()) path = fs::path(r.file()).parent_path() / path;
  if (!fs::exists(path)) r.fail(key, "an existing CSV file (" + path.string() + " not found)");
  check_input_file(path.string(), "a CSV file of time_s,value rows");
  r.note_input(key, path.string());
  file = path.string();
  std::ifstream in(path, std::ios::binary);
  Points out;
  std::string line;
  bool header_possible = true;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    const std::string where = fmt::format("line {}", number);
    std::vector<std::string> cells;
    for (size_t start = 0;;) {
      const size_t comma = line.find(',', start);
      cells.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (cells.size() != 2)
      throw InputError(file, where, fmt::format("expected two fields, time_s,value (this row has {})", cells.size()));
    const auto t = whole_number(cells[0]), v = whole_number(cells[1]);
    if (header_possible && !t && !v) {  // a header
      header_possible = false;
      continue;
    }
    header_possible = false;
    if (!t || !v)
      throw InputError(
          file, where,
          fmt::format("expected time_s,value as two numbers (\"{}\" is not a number)", !t ? cells[0] : cells[1]));
    if (!std::isfinite(*t) || !std::isfinite(*v)) throw InputError(file, where, "expected finite numbers");
    if (static_cast<int64_t>(out.size()) >= most)
      throw InputError(file, where,
                       fmt::format("expected at most {} rows (the points a profile may hold here; "
                                   "/limits/profile_points bounds them in all)",
                                   most));
    out.push_back({*t, *v, number});
  }
  if (out.empty()) throw InputError(file, "", "expected at least one time_s,value row");
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
// Network factors: of the capacity or latency the target had when the run
// began; 0 stalls a link (capacity) or removes its latency.
const ValueRange kCapacityFactorRange{0.001, 1000, true, " (a factor)"};
const ValueRange kLatencyFactorRange{0, 1000, false, " (a factor)"};

double until_of(const JsonReader& g) {
  const double u = g.number("until_s");
  g.require(u > 0 && u <= kMaxVirtualSeconds, "until_s", "a number of seconds in (0, 1e9]");
  return u;
}

double step_of(const JsonReader& g, double span) {
  const double s = g.number("step_s");
  g.require(s >= kMinProfileStepS && span / s <= kMaxPoints, "step_s",
            fmt::format("a step of at least {:g} s giving at most {} points", kMinProfileStepS, kMaxPoints));
  return s;
}

Points given_points(const JsonReader& r) {
  Points pts;
  JsonReader list = r.at("points");
  for (size_t i = 0; i < list.array_size(); ++i) {
    JsonReader p = list.element(i);
    if (p.array_size() != 2) p.fail("a [time_s, value] pair");
    pts.push_back({p.element(0).as_number(), p.element(1).as_number()});
  }
  if (pts.empty()) r.fail("points", "at least one [time_s, value] pair");
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
  g.require(period >= kMinProfileStepS && period <= kMaxVirtualSeconds, "period_s",
            fmt::format("a number of seconds in [{:g}, 1e9]", kMinProfileStepS));
  const double s = step_of(g, period);
  g.done();
  Points pts;
  for (double t = 0; t < period - 1e-9; t += s)
    pts.push_back({t, mean * (1 + amplitude * std::sin(2 * M_PI * (t - phase) / period))});
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
    pts.push_back({t, value});
    value = std::clamp(value * std::exp(sigma * normal(rng)), lo, hi);
  }
  return pts;
}

// Alternating periods at `on` and `off`, of drawn lengths (at least 1 ms).
Points on_off_points(const JsonReader& g, const ValueRange& range, Rng& rng, int64_t most) {
  const double on = g.number("on"), off = g.number("off", 0.0);
  const Distribution::Bounds bounds{kMinProfileStepS, 1e9};
  const Distribution up = Distribution::parse(g.at("up_s"), Distribution::Domain::kPositive, bounds);
  const Distribution down = Distribution::parse(g.at("down_s"), Distribution::Domain::kPositive, bounds);
  const double end = until_of(g);
  g.done();
  g.require(range.ok(on), "on", range.text());
  g.require(range.ok(off), "off", range.text());
  Points pts;
  for (double t = 0; t < end;) {
    if (static_cast<int64_t>(pts.size()) >= most)
      g.fail(
          fmt::format("periods giving at most {} points here (they gave more before until_s; "
                      "/limits/profile_points bounds the points of all profiles)",
                      most));
    pts.push_back({t, on});
    t += up.sample(rng);
    if (t >= end) break;
    pts.push_back({t, off});
    t += down.sample(rng);
  }
  return pts;
}

// The points as a profile, each checked: times in range and strictly
// increasing (also once rounded to the nanosecond), within the period,
// values in range; at least one point (a change every period). A point
// from a CSV file is reported at its file and line.
Profile checked_profile(const JsonReader& r, const Points& pts, double period, const ValueRange& range,
                        const std::string& csv) {
  auto fail = [&](const Point& p, size_t i, const std::string& expected) {
    if (p.line > 0)
      throw r.inside_named_file(InputError(csv, fmt::format("line {}", p.line), "expected " + expected), "csv",
                                "CSV file");
    r.fail(fmt::format("point {} (time {:g} s): {}", i, p.t, expected));
  };
  if (pts.empty()) r.fail(fmt::format("at least one point (a period of {:g} s holds none)", period));
  Profile prof;
  prof.period = seconds(period);
  for (size_t i = 0; i < pts.size(); ++i) {
    const Point& p = pts[i];
    if (!(p.t >= 0 && p.t <= kMaxVirtualSeconds)) fail(p, i, "a time in [0, 1e9] s");
    if (i > 0 && !(p.t > pts[i - 1].t)) fail(p, i, "a time after the previous point's (times strictly increase)");
    if (period > 0 && !(p.t < period)) fail(p, i, "a time within the period (< period_s)");
    if (!range.ok(p.v)) fail(p, i, range.text());
    prof.points.emplace_back(seconds(p.t), p.v);
    if (i > 0 && prof.points[i].first <= prof.points[i - 1].first)
      fail(p, i, "a time at least 1 ns after the previous");
  }
  return prof;
}

std::shared_ptr<const Profile> parse_profile(const JsonReader& r, Rng rng, const ValueRange& range,
                                             PointBudget& budget) {
  r.expect_object();
  int kinds = 0;
  for (const char* kind : {"points", "csv", "diurnal", "random_walk", "on_off"}) kinds += r.has(kind) ? 1 : 0;
  if (kinds != 1) r.fail("exactly one of points, csv, diurnal, random_walk, on_off");
  const int64_t most = std::min<int64_t>(kMaxPoints, std::max<int64_t>(0, budget.left()));
  Points pts;
  std::string csv;
  double generated_period = 0;
  if (r.has("points")) pts = given_points(r);
  if (r.has("csv")) {
    try {
      pts = read_csv_points(r, "csv", most, csv);
    } catch (const InputError& e) {
      throw r.inside_named_file(e, "csv", "CSV file");
    }
  }
  if (auto g = r.child("diurnal")) pts = diurnal_points(*g, range, generated_period);
  if (auto g = r.child("random_walk")) pts = random_walk_points(*g, range, rng);
  if (auto g = r.child("on_off")) pts = on_off_points(*g, range, rng, most);
  if (pts.size() > kMaxPoints) r.fail(fmt::format("at most {} points", kMaxPoints));
  budget.take(r, static_cast<int64_t>(pts.size()));
  const double period = r.number("period_s", generated_period);
  r.require(period == 0 || (period >= kMinProfileStepS && period <= kMaxVirtualSeconds), "period_s",
            fmt::format("0 (no repetition) or a number of seconds in [{:g}, 1e9]", kMinProfileStepS));
  return std::make_shared<const Profile>(checked_profile(r, pts, period, range, csv));
}

}  // namespace

void PointBudget::take(const JsonReader& r, int64_t n) {
  if (n > left())
    r.fail(
        fmt::format("at most {} profile points in all (/limits/profile_points); this profile's {} bring the "
                    "total to {}",
                    limit_, n, used_ + n));
  used_ += n;
}

double changes_within(const WanProfile& p, Time horizon) {
  const auto& pts = p.values->points;
  auto before = [&](Time t) {  // points at times < t
    return static_cast<double>(
        std::lower_bound(pts.begin(), pts.end(), t, [](const auto& p, Time x) { return p.first < x; }) - pts.begin());
  };
  const Time period = p.values->period;
  if (period == Time::zero()) return before(horizon);
  const double cycles = std::floor(static_cast<double>(horizon.ns()) / static_cast<double>(period.ns()));
  return cycles * static_cast<double>(pts.size()) + before(Time::ns(horizon.ns() % period.ns()));
}

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
        t.graph[edge].capacity = mbps(
            Distribution::parse(e.at("bandwidth_mbps"), Distribution::Domain::kPositive, kCapacityMbps).sample(rng));
      if (e.has("latency_ms"))
        t.graph[edge].latency = milliseconds(
            Distribution::parse(e.at("latency_ms"), Distribution::Domain::kNonNegative, kLatencyMs).sample(rng));
      e.done();
      continue;
    }
    std::optional<Distribution> iteration, up, down;
    if (e.has("iteration_ms"))
      iteration = Distribution::parse(e.at("iteration_ms"), Distribution::Domain::kPositive, {1e-3, 1e7});
    if (e.has("up_mbps")) up = Distribution::parse(e.at("up_mbps"), Distribution::Domain::kPositive, kCapacityMbps);
    if (e.has("down_mbps"))
      down = Distribution::parse(e.at("down_mbps"), Distribution::Domain::kPositive, kCapacityMbps);
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

namespace {

// A factor profile as the values it applies: each factor times `base`, the
// value the target had when the run began (topology, overrides and --set
// included), refused where the product leaves `range`.
std::shared_ptr<const Profile> scaled(const JsonReader& r, const std::shared_ptr<const Profile>& factors, double base,
                                      const ValueRange& range, const char* what, const std::string& target) {
  Profile p = *factors;
  for (size_t i = 0; i < p.points.size(); ++i) {
    p.points[i].second = factors->points[i].second * base;
    if (!range.ok(p.points[i].second))
      r.fail(fmt::format("point {} (time {:g} s): a factor that keeps the {} in {} ({} has {:g}{}; x {:g} makes {:g})",
                         i, p.points[i].first.seconds(), what, range.text(), target, base, range.unit,
                         factors->points[i].second, p.points[i].second));
  }
  return std::make_shared<const Profile>(std::move(p));
}

// The capacity profile of an entry as read: from capacity_mbps (values) or
// capacity_factor (factors, `factor` set); null when it has neither.
std::shared_ptr<const Profile> capacity_profile(const JsonReader& e, Rng rng, PointBudget& budget, bool& factor) {
  if (e.has("capacity_mbps") && e.has("capacity_factor")) e.fail("capacity_mbps or capacity_factor, not both");
  factor = e.has("capacity_factor");
  if (e.has("capacity_mbps")) return parse_profile(e.at("capacity_mbps"), rng, kCapacityRange, budget);
  if (factor) return parse_profile(e.at("capacity_factor"), rng, kCapacityFactorRange, budget);
  return nullptr;
}

// The values a capacity profile applies to a target whose capacity is `base`.
std::shared_ptr<const Profile> capacity_values(const JsonReader& e, const std::shared_ptr<const Profile>& p,
                                               bool factor, Rate base, const std::string& target) {
  if (!factor) return p;
  return scaled(e.at("capacity_factor"), p, base.megabits_per_second(), kCapacityRange, "capacity", target);
}

}  // namespace

std::vector<WanProfile> parse_profiles(const JsonReader& list, const Topology& t, const Streams& streams,
                                       PointBudget& budget) {
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
        const std::string link = fmt::format("link {}--{}", vertex_label(t, a), vertex_label(t, b));
        const auto [edge, found] = boost::edge(a, b, t.graph);
        if (!e.has("capacity_mbps") && !e.has("latency_ms") && !e.has("capacity_factor") && !e.has("latency_factor"))
          e.fail("capacity_mbps or capacity_factor, latency_ms or latency_factor (or one of each)");
        bool factor = false;
        if (auto p = capacity_profile(e, streams.stream("profile", k), budget, factor))
          out.push_back({WanProfile::Target::kLinkCapacity, a, b, 0, link,
                         capacity_values(e, p, factor, t.graph[edge].capacity, link)});
        if (e.has("latency_ms") && e.has("latency_factor")) e.fail("latency_ms or latency_factor, not both");
        if (e.has("latency_ms"))
          out.push_back(
              {WanProfile::Target::kLinkLatency, a, b, 0, link,
               parse_profile(e.at("latency_ms"), streams.stream("profile-latency", k), kLatencyRange, budget)});
        if (e.has("latency_factor"))
          out.push_back({WanProfile::Target::kLinkLatency, a, b, 0, link,
                         scaled(e.at("latency_factor"),
                                parse_profile(e.at("latency_factor"), streams.stream("profile-latency", k),
                                              kLatencyFactorRange, budget),
                                t.graph[edge].latency.seconds() * 1e3, kLatencyRange, "latency", link)});
      }
    if (e.has("access")) {
      ++targets;
      const NodeId n = node_of(e.at("access"), t, names);
      const std::string dir = e.string("direction", "both");
      if (dir != "up" && dir != "down" && dir != "both") e.fail("direction", "one of up, down, both");
      if (e.has("latency_ms") || e.has("latency_factor"))
        e.fail(e.has("latency_ms") ? "latency_ms" : "latency_factor",
               "no latency on an access target (it is a capacity; a latency belongs to a link or region_pair)");
      bool factor = false;
      const auto p = capacity_profile(e, streams.stream("profile", k), budget, factor);
      if (!p) e.fail("capacity_mbps or capacity_factor");
      for (bool up : {true, false}) {
        if ((up && dir == "down") || (!up && dir == "up")) continue;
        const VertexInfo& v = t.graph[t.nodes[n]];
        const std::string name = fmt::format("{} n{}", up ? "up" : "down", n);
        out.push_back({up ? WanProfile::Target::kUp : WanProfile::Target::kDown, 0, 0, n, name,
                       capacity_values(e, p, factor, up ? v.up : v.down, name)});
      }
    }
    if (targets != 1) e.fail("exactly one target: link, region_pair or access");
    e.done();
  }
  return out;
}

std::vector<WanProfile> parse_compute_profiles(const JsonReader& list, const Topology& t, const Streams& streams,
                                               PointBudget& budget) {
  const auto names = vertex_names(t);
  std::vector<WanProfile> out;
  for (size_t k = 0; k < list.array_size(); ++k) {
    JsonReader e = list.element(k);
    e.expect_object();
    const auto nodes = selected_nodes(e, t, names, streams.stream("select-compute", k));
    const auto p = parse_profile(e.at("factor"), streams.stream("compute-profile", k), kFactorRange, budget);
    e.done();
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

// How a cycle's nodes go down, and how it starts.
const EnumNames<ChurnEvent::Kind>& going_down_names() {
  static const EnumNames<ChurnEvent::Kind> names{{"crash", ChurnEvent::Kind::kCrash},
                                                 {"leave", ChurnEvent::Kind::kLeave}};
  return names;
}
const EnumNames<bool>& starts_up_names() {
  static const EnumNames<bool> names{{"up", true}, {"down", false}};
  return names;
}

void read_churn_events(const JsonReader& list, const std::vector<NodeId>& nodes, const std::string& model,
                       std::vector<TaggedChurn>& all) {
  if (list.array_size() == 0) list.fail("at least one [time_s, crash | leave | join] pair");
  for (size_t i = 0; i < list.array_size(); ++i) {
    JsonReader p = list.element(i);
    if (p.array_size() != 2) p.fail("a [time_s, crash | leave | join] pair");
    const double at = p.element(0).as_number();
    if (!(at >= 0 && at <= kMaxVirtualSeconds)) p.element(0).fail("a time in [0, 1e9] s");
    const ChurnEvent::Kind what = p.element(1).as_choice(churn_kind_names());
    for (NodeId n : nodes) all.push_back({churn_event(seconds(at), n, what, model), p.path()});
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
  const ChurnEvent::Kind how = c.choice("down", going_down_names());
  const bool starts_up = c.choice("start", starts_up_names());
  c.done();
  for (NodeId n : nodes) {
    Rng rng = streams.stream(fmt::format("churn-{}", entry), static_cast<uint64_t>(n));
    bool is_up = starts_up;
    if (!is_up) all.push_back({churn_event(Time::zero(), n, ChurnEvent::Kind::kCrash, model), c.path(), true});
    for (double at = 0;;) {
      at += (is_up ? up : down).sample(rng);
      if (at >= until) break;
      all.push_back({churn_event(seconds(at), n, is_up ? how : ChurnEvent::Kind::kJoin, model), c.path()});
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
      throw InputError(
          file, x.path,
          fmt::format("expected node {}'s events to alternate down and join: a {} at {:g} s while it is {}", x.e.node,
                      x.e.down() ? "down event" : "join", x.e.at.seconds(), was_up ? "up" : "down"));
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
    c.file = e.file();
    c.pointer = e.path();
    // Every flow is a row of events.csv: bound the expected count, from the
    // gaps as the span truncates them (a mean alone hides a rare huge gap
    // among tiny ones, and a Pareto of shape <= 1 has none).
    const double span = until - start, typical = c.interarrival_s.expected_min(span);
    c.expected_flows = span / typical;
    if (c.expected_flows > static_cast<double>(kMaxCrossTrafficFlows))
      e.fail("interarrival_s", fmt::format("gaps giving at most {} flows over [start_s, until_s]; these give about "
                                           "{:.3g} (a gap truncated at the span averages {:.3g} s)",
                                           kMaxCrossTrafficFlows, c.expected_flows, typical));
    e.done();
    out.push_back(std::move(c));
  }
  double expected = 0;
  for (const auto& c : out) expected += c.expected_flows;
  if (expected > static_cast<double>(kMaxCrossTrafficFlows))
    list.fail(fmt::format("cross-traffic giving at most {} flows in all; these entries give about {:.3g}",
                          kMaxCrossTrafficFlows, expected));
  return out;
}

}  // namespace gossipsim
