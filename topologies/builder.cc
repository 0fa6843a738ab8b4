#include "topologies/builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "topologies/generators.h"

namespace gossipsim {

namespace fs = std::filesystem;

std::string topology_data_dir() {
  if (fs::exists("topologies/data")) return "topologies/data";
#ifdef GOSSIPSIM_TOPOLOGY_DATA_DIR
  return GOSSIPSIM_TOPOLOGY_DATA_DIR;
#else
  return "topologies/data";
#endif
}

namespace {

// A vertex or edge value a file may fix; NaN where it leaves it open.
struct Raw {
  std::string name;
  std::string router = "false";
  double up = NAN, down = NAN;
};
struct RawEdge {
  double bandwidth = NAN, latency = NAN;
};
using RawGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Raw, RawEdge>;

uint64_t pair_key(size_t a, size_t b) {
  if (a > b) std::swap(a, b);
  return (static_cast<uint64_t>(a) << 32) | b;
}

int positive_int(const JsonReader& r, const std::string& key, int min, int64_t max) {
  int64_t v = r.integer(key);
  r.require(v >= min && v <= max, key, fmt::format("an integer in [{}, {}]", min, max));
  return static_cast<int>(v);
}

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

// Refuses a graph of `links` links (or, for erdos-renyi, pairs to visit) over
// the limit, before it is built.
void check_links(const JsonReader& r, const std::string& key, double vertices, double links, const SizeLimits& limits,
                 const std::string& what) {
  if (links <= static_cast<double>(limits.links)) return;
  r.fail(key, fmt::format("a graph within /limits/links = {}: this {} has {:.4g} (it would take about {})",
                          limits.links, what, links, gigabytes(graph_bytes_estimate(vertices, links))));
}

// The structure generators shared by /topology and /topology/peers.
bool structure(const JsonReader& r, Generator kind, const Streams& streams, const char* purpose,
               const SizeLimits& limits, int& n, EdgeList& edges, bool& hub_router) {
  Rng rng = streams.stream(purpose);
  hub_router = false;
  auto probability = [&](const std::string& key) {
    double p = r.number(key);
    r.require(p >= 0 && p <= 1, key, "a probability in [0, 1]");
    return p;
  };
  try {
    if (kind == Generator::kTorus) {
      int rows = positive_int(r, "rows", 1, limits.nodes), cols = positive_int(r, "cols", 1, limits.nodes);
      const int64_t cells = int64_t(rows) * cols;
      if (cells > limits.nodes)
        r.fail("cols", fmt::format("rows * cols within /limits/nodes = {} (got {} x {} = {})", limits.nodes, rows, cols,
                                   cells));
      if (r.has("nodes")) r.require(r.integer("nodes") == cells, "nodes", "rows * cols");
      n = static_cast<int>(cells);
      check_links(r, "cols", n, 2.0 * n, limits, "torus");
      edges = torus_edges(rows, cols);
      return true;
    }
    if (kind == Generator::kGeo || kind == Generator::kFile) return false;
    n = positive_int(r, "nodes", 1, limits.nodes);
    const double pairs = 0.5 * n * (n - 1.0);
    if (kind == Generator::kComplete) check_links(r, "nodes", n, pairs, limits, "complete graph");
    if (kind == Generator::kErdosRenyi)
      check_links(r, "nodes", n, pairs, limits, "erdos-renyi draw (every pair is visited)");
    if (kind == Generator::kComplete) edges = complete_edges(n);
    if (kind == Generator::kRing) edges = ring_edges(n);
    if (kind == Generator::kStar) {
      edges = star_edges(n + 1);
      hub_router = true;
    }
    if (kind == Generator::kRandomRegular) {
      int d = positive_int(r, "degree", 1, limits.nodes);
      r.require(d < n && (static_cast<long>(n) * d) % 2 == 0, "degree", "a degree < nodes with nodes*degree even");
      r.require(d >= 2 || n == 2, "degree",
                "a degree >= 2 (a 1-regular graph is pairs: never connected beyond 2 nodes)");
      check_links(r, "degree", n, 0.5 * n * d, limits, "random regular graph");
      try {
        edges = random_regular_edges(n, d, rng);
      } catch (const std::runtime_error&) {
        r.fail("degree", fmt::format("a degree that gives a connected graph of {} nodes (1000 draws of degree {} "
                                     "were all disconnected; raise it)",
                                     n, d));
      }
    }
    if (kind == Generator::kErdosRenyi) {
      const double p = probability("p");
      // Refuse what can (almost) never be connected rather than redraw for
      // ever: P(connected) ~ exp(-E[isolated vertices]) (Erdos and Renyi
      // 1960), so at most 7 isolated vertices are expected (P >= ~1e-3).
      const double isolated = n * std::pow(1 - p, n - 1.0);
      if (n > 1 && (p == 0 || isolated > 7))
        r.fail("p", fmt::format("a p that can give a connected graph of {} nodes: p = {} leaves {:.3g} vertices "
                                "isolated on average (take p >= {:.3g}, about (ln n + 2) / n)",
                                n, p, isolated, std::min(1.0, (std::log(n) + 2) / n)));
      edges = erdos_renyi_edges(n, p, rng);
    }
    if (kind == Generator::kWattsStrogatz) {
      int k = positive_int(r, "k", 2, limits.nodes);
      r.require(k % 2 == 0 && k < n, "k", "an even k < nodes");
      check_links(r, "k", n, 0.5 * n * k, limits, "watts-strogatz graph");
      edges = watts_strogatz_edges(n, k, probability("beta"), rng);
    }
    if (kind == Generator::kBarabasiAlbert) {
      int m = positive_int(r, "m", 1, limits.nodes);
      r.require(m < n, "m", "m < nodes");
      check_links(r, "m", n, double(m) * n, limits, "barabasi-albert graph");
      edges = barabasi_albert_edges(n, m, rng);
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  } catch (const std::runtime_error& e) {
    r.fail(e.what());
  }
  return true;
}

struct Builder {
  const LinkDefaults& defaults;
  const Streams& streams;
  const SizeLimits& limits;
  Topology t;

  Vertex add(std::string name, bool is_node, std::string region = "", double up = NAN, double down = NAN) {
    Vertex v = boost::add_vertex(t.graph);
    auto& info = t.graph[v];
    info.name = std::move(name);
    info.is_node = is_node;
    info.region = std::move(region);
    if (is_node) {
      NodeId id = t.node_count();
      Rng up_rng = streams.stream("access-up", id), down_rng = streams.stream("access-down", id);
      double u = std::isnan(up) ? defaults.up_mbps.sample(up_rng) : up;
      double d = std::isnan(down) ? defaults.down_mbps.sample(down_rng) : down;
      info.up = mbps(u);
      info.down = mbps(d);
      t.nodes.push_back(v);
    }
    return v;
  }

  void link(Vertex a, Vertex b, double bandwidth = NAN, double latency = NAN) {
    uint64_t key = pair_key(a, b);
    Rng lat_rng = streams.stream("link-latency", key), bw_rng = streams.stream("link-bandwidth", key);
    double lat = std::isnan(latency) ? defaults.latency_ms.sample(lat_rng) : latency;
    double bw = std::isnan(bandwidth) ? defaults.bandwidth_mbps.sample(bw_rng) : bandwidth;
    boost::add_edge(a, b, EdgeInfo{mbps(bw), milliseconds(lat)}, t.graph);
  }
};

void build_geo(const JsonReader& r, Builder& b) {
  int n = positive_int(r, "nodes", 1, b.limits.nodes);
  std::string file = r.string("regions_file", "cloud8");
  if (!fs::exists(file)) file = topology_data_dir() + "/" + file + (fs::path(file).has_extension() ? "" : ".json");
  if (!fs::exists(file)) r.fail("regions_file", "a region file name in topologies/data or a path to one");
  r.note_input("regions_file", file);
  nlohmann::json data = JsonReader::parse_file(file);
  JsonReader g(data, file);
  std::vector<std::string> names;
  JsonReader regions = g.at("regions");
  for (size_t i = 0; i < regions.array_size(); ++i) {
    names.push_back(regions.element(i).as_string());
    if (std::count(names.begin(), names.end(), names.back()) > 1)
      regions.element(i).fail("a region name not used before");
  }
  if (names.empty()) regions.fail("at least one region");
  const size_t k = names.size();
  auto matrix = [&](const std::string& key, Distribution::Bounds bounds) {
    JsonReader m = g.at(key);
    m.require(m.array_size() == k, "", fmt::format("a {}x{} matrix", k, k));
    std::vector<std::vector<double>> out(k);
    for (size_t i = 0; i < k; ++i) {
      JsonReader row = m.element(i);
      if (row.array_size() != k) row.fail(fmt::format("a row of {} numbers", k));
      for (size_t j = 0; j < k; ++j) {
        out[i].push_back(row.element(j).as_number());
        if (i != j && !(out[i][j] >= bounds.min_draw && out[i][j] <= bounds.max))
          row.element(j).fail(fmt::format("a number in [{:g}, {:g}]", bounds.min_draw, bounds.max));
      }
    }
    return out;
  };
  auto rtt = matrix("rtt_ms", {0, 2 * kLatencyMs.max});
  auto bandwidth = matrix("bandwidth_mbps", kCapacityMbps);
  JsonReader intra = g.at("intra_region");
  double intra_latency = intra.number("latency_ms"), intra_bandwidth = intra.number("bandwidth_mbps");
  intra.require(intra_latency >= 0 && intra_latency <= kLatencyMs.max, "latency_ms", "a latency in [0, 1e6] ms");
  intra.require(intra_bandwidth >= kCapacityMbps.min_draw && intra_bandwidth <= kCapacityMbps.max, "bandwidth_mbps",
                "a capacity in [0.001, 1e9] Mbit/s");
  intra.done();
  g.at("sources");
  g.string("name", "");
  g.string("notes", "");
  g.done();

  std::vector<size_t> chosen;
  if (auto subset = r.child("regions")) {
    for (size_t i = 0; i < subset->array_size(); ++i) {
      std::string want = subset->element(i).as_string();
      auto it = std::find(names.begin(), names.end(), want);
      if (it == names.end()) subset->element(i).fail("a region of " + file);
      if (std::count(chosen.begin(), chosen.end(), size_t(it - names.begin())))
        subset->element(i).fail("a region not chosen before");
      chosen.push_back(it - names.begin());
    }
    if (chosen.empty()) subset->fail("at least one region");
  } else {
    for (size_t i = 0; i < k; ++i) chosen.push_back(i);
  }
  std::vector<Vertex> routers;
  for (size_t c : chosen) routers.push_back(b.add("router:" + names[c], false, names[c]));
  for (size_t x = 0; x < chosen.size(); ++x)
    for (size_t y = x + 1; y < chosen.size(); ++y)
      b.link(routers[x], routers[y], bandwidth[chosen[x]][chosen[y]], rtt[chosen[x]][chosen[y]] / 2);
  for (int i = 0; i < n; ++i) {
    size_t c = i % chosen.size();
    Vertex v = b.add(fmt::format("n{}", i), true, names[chosen[c]]);
    b.link(v, routers[c], intra_bandwidth, intra_latency);
  }
  b.t.description = fmt::format("geo: {} nodes over {} regions of {}", n, chosen.size(), file);
}

bool truthy(const std::string& s) { return s == "1" || s == "true" || s == "yes"; }

void build_from_raw(const RawGraph& raw, Builder& b, const std::string& file) {
  std::vector<Vertex> map(boost::num_vertices(raw));
  std::set<uint64_t> seen;
  size_t index = 0;
  for (auto [it, end] = boost::edges(raw); it != end; ++it, ++index) {
    auto s = boost::source(*it, raw), d = boost::target(*it, raw);
    const std::string where = fmt::format("edge {} ({} -- {})", index, raw[s].name, raw[d].name);
    if (s == d)
      throw InputError(file, where, "expected two different vertices (a link from a vertex to itself is refused)");
    if (!seen.insert(pair_key(s, d)).second)
      throw InputError(file, where, "expected a link given once (each pair of vertices is joined at most once)");
  }
  auto within = [&](double v, Distribution::Bounds b, bool positive) {
    return std::isnan(v) || ((positive ? v > 0 : v >= 0) && v >= b.min_draw && v <= b.max);
  };
  for (auto [it, end] = boost::edges(raw); it != end; ++it) {
    const RawEdge& e = raw[*it];
    const std::string where =
        fmt::format("edge {} -- {}", raw[boost::source(*it, raw)].name, raw[boost::target(*it, raw)].name);
    if (!within(e.bandwidth, kCapacityMbps, true))
      throw InputError(
          file, where + " bandwidth_mbps",
          fmt::format("expected a capacity in [{:g}, {:g}] Mbit/s", kCapacityMbps.min_draw, kCapacityMbps.max));
    if (!within(e.latency, kLatencyMs, false))
      throw InputError(file, where + " latency_ms", fmt::format("expected a latency in [0, {:g}] ms", kLatencyMs.max));
  }
  for (size_t v = 0; v < map.size(); ++v) {
    const Raw& x = raw[v];
    for (double c : {x.up, x.down})
      if (!within(c, kCapacityMbps, true))
        throw InputError(file, "vertex " + x.name,
                         fmt::format("expected access capacities (up_mbps, down_mbps) in [{:g}, {:g}] Mbit/s",
                                     kCapacityMbps.min_draw, kCapacityMbps.max));
    map[v] = b.add(x.name.empty() ? fmt::format("v{}", v) : x.name, !truthy(x.router), "", x.up, x.down);
  }
  for (auto [it, end] = boost::edges(raw); it != end; ++it) {
    auto s = boost::source(*it, raw), d = boost::target(*it, raw);
    b.link(map[s], map[d], raw[*it].bandwidth, raw[*it].latency);
  }
}

void load_file(const JsonReader& r, Builder& b) {
  fs::path path = r.string("path");
  if (path.is_relative() && !r.file().empty()) {
    fs::path beside = fs::path(r.file()).parent_path() / path;
    if (fs::exists(beside) || !fs::exists(path)) path = beside;
  }
  std::string ext = path.extension().string();
  std::string format = r.string("format", ext == ".graphml" || ext == ".xml" ? "graphml"
                                          : ext == ".dot" || ext == ".gv"    ? "dot"
                                                                             : "json");
  if (!fs::exists(path)) r.fail("path", "an existing topology file (" + path.string() + " not found)");
  const std::string file = path.string();
  r.note_input("path", file);
  if (format == "json") {
    nlohmann::json data = JsonReader::parse_file(file);
    JsonReader doc(data, file);
    std::map<std::string, Vertex> by_name;
    JsonReader nodes = doc.at("nodes");
    for (size_t i = 0; i < nodes.array_size(); ++i) {
      JsonReader v = nodes.element(i);
      std::string name = v.string("name");
      if (by_name.count(name)) v.fail("name", "a name not used by another vertex");
      bool router = v.boolean("router", false);
      double up = NAN, down = NAN;
      auto capacity = [&](const std::string& key) {
        double c = v.number(key);
        v.require(c >= kCapacityMbps.min_draw && c <= kCapacityMbps.max, key,
                  fmt::format("a capacity in [{:g}, {:g}] Mbit/s", kCapacityMbps.min_draw, kCapacityMbps.max));
        return c;
      };
      if (v.has("up_mbps")) up = capacity("up_mbps");
      if (v.has("down_mbps")) down = capacity("down_mbps");
      by_name[name] = b.add(name, !router, v.string("region", ""), up, down);
      v.done();
    }
    JsonReader links = doc.at("links");
    std::set<uint64_t> seen;
    for (size_t i = 0; i < links.array_size(); ++i) {
      JsonReader l = links.element(i);
      auto end = [&](const std::string& key) {
        std::string name = l.string(key);
        if (!by_name.count(name)) l.fail(key, "the name of a vertex in /nodes");
        return by_name[name];
      };
      Vertex a = end("a"), c = end("b");
      if (a == c) l.fail("b", "a vertex other than a (a link from a vertex to itself is refused)");
      if (!seen.insert(pair_key(a, c)).second)
        l.fail("each pair of vertices joined at most once (this link repeats an earlier one)");
      double bw = NAN, lat = NAN;
      Rng rng = b.streams.stream("link-values", pair_key(a, c));
      if (l.has("bandwidth_mbps"))
        bw = Distribution::parse(l.at("bandwidth_mbps"), Distribution::Domain::kPositive, kCapacityMbps).sample(rng);
      if (l.has("latency_ms"))
        lat = Distribution::parse(l.at("latency_ms"), Distribution::Domain::kNonNegative, kLatencyMs).sample(rng);
      b.link(a, c, bw, lat);
      l.done();
    }
    doc.string("name", "");
    doc.string("description", "");
    doc.done();
  } else if (format == "graphml" || format == "dot") {
    RawGraph raw;
    boost::dynamic_properties dp(boost::ignore_other_properties);
    dp.property("name", boost::get(&Raw::name, raw));
    dp.property("router", boost::get(&Raw::router, raw));
    dp.property("up_mbps", boost::get(&Raw::up, raw));
    dp.property("down_mbps", boost::get(&Raw::down, raw));
    dp.property("bandwidth_mbps", boost::get(&RawEdge::bandwidth, raw));
    dp.property("latency_ms", boost::get(&RawEdge::latency, raw));
    check_input_file(file, "a " + format + " topology file");
    std::ifstream in(file);
    try {
      if (format == "graphml") {
        boost::read_graphml(in, raw, dp);
      } else {
        dp.property("node_id", boost::get(&Raw::name, raw));
        boost::read_graphviz(in, raw, dp, "node_id");
      }
    } catch (const std::exception& e) {
      throw InputError(file, "", std::string("expected a valid ") + format + " graph: " + e.what());
    }
    build_from_raw(raw, b, file);
  } else {
    r.fail("format", "one of json, graphml, dot");
  }
  if (b.t.nodes.empty()) throw InputError(file, "", "expected at least one compute node");
  if (static_cast<int64_t>(boost::num_vertices(b.t.graph)) > b.limits.nodes)
    throw InputError(file, "", fmt::format("expected at most /limits/nodes = {} vertices", b.limits.nodes));
  if (static_cast<int64_t>(boost::num_edges(b.t.graph)) > b.limits.links)
    throw InputError(file, "", fmt::format("expected at most /limits/links = {} links", b.limits.links));
  b.t.description =
      fmt::format("file {}: {} nodes, {} vertices", file, b.t.node_count(), boost::num_vertices(b.t.graph));
}

std::vector<std::vector<NodeId>> adjacency(int n, const EdgeList& edges) {
  std::vector<std::vector<NodeId>> adj(n);
  for (auto [a, c] : edges) {
    adj[a].push_back(c);
    adj[c].push_back(a);
  }
  for (auto& row : adj) {
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
  }
  return adj;
}

// The first compute node that node 0 cannot reach over the links, or -1.
NodeId unreachable_node(const Topology& t) {
  if (t.node_count() < 2) return -1;
  std::vector<char> seen(boost::num_vertices(t.graph), 0);
  std::queue<Vertex> todo;
  todo.push(t.nodes[0]);
  seen[t.nodes[0]] = 1;
  while (!todo.empty()) {
    Vertex v = todo.front();
    todo.pop();
    for (auto [it, end] = boost::adjacent_vertices(v, t.graph); it != end; ++it)
      if (!seen[*it]) {
        seen[*it] = 1;
        todo.push(*it);
      }
  }
  for (NodeId i = 0; i < t.node_count(); ++i)
    if (!seen[t.nodes[i]]) return i;
  return -1;
}

}  // namespace

double graph_bytes_estimate(double vertices, double links) {
  // A vertex: its record, name and peer list, its two access resources and
  // its simulator state (~8 kB with two random streams); a link: the Boost
  // edge in both adjacency lists plus two network resources.
  return vertices * 8192 + links * 256;
}

Topology build_topology(const JsonReader& r, const LinkDefaults& defaults, const Streams& streams,
                        const SizeLimits& limits) {
  r.expect_object();
  Builder b{defaults, streams, limits, {}};
  const Generator kind = r.at("generator").as_choice(generator_names());
  int n = 0;
  EdgeList edges;
  bool hub_router = false;
  if (kind == Generator::kGeo) {
    build_geo(r, b);
  } else if (kind == Generator::kFile) {
    try {
      load_file(r, b);
    } catch (const InputError& e) {
      throw r.inside_named_file(e, "path", "topology file");
    }
  } else if (structure(r, kind, streams, "topology", limits, n, edges, hub_router)) {
    // The star's hub is a router (vertex 0); nodes are its leaves.
    for (int v = 0; v < n + (hub_router ? 1 : 0); ++v) {
      bool router = hub_router && v == 0;
      b.add(router ? "hub" : fmt::format("n{}", v - (hub_router ? 1 : 0)), !router);
    }
    for (auto [a, c] : edges) b.link(a, c);
    b.t.description = fmt::format("{}: {} nodes", name_of(kind, generator_names()), n);
  }

  Topology& t = b.t;
  std::vector<int> node_index(boost::num_vertices(t.graph), -1);
  for (NodeId i = 0; i < t.node_count(); ++i) node_index[t.nodes[i]] = i;
  bool has_routers = boost::num_vertices(t.graph) > t.nodes.size();
  if (auto peers = r.child("peers")) {
    int pn = 0;
    EdgeList pe;
    bool unused = false;
    // The structure generators over the compute nodes: no routers.
    EnumNames<Generator> peer_generators = generator_names();
    peer_generators.erase(std::remove_if(peer_generators.begin(), peer_generators.end(),
                                         [](const auto& g) {
                                           return g.second == Generator::kStar || g.second == Generator::kGeo ||
                                                  g.second == Generator::kFile;
                                         }),
                          peer_generators.end());
    const Generator pk = peers->at("generator").as_choice(peer_generators);
    structure(*peers, pk, streams, "peers", limits, pn, pe, unused);
    if (pn != t.node_count()) peers->fail("nodes", fmt::format("{} (the topology's compute nodes)", t.node_count()));
    t.peers = adjacency(pn, pe);
    peers->done();
  } else if (has_routers) {
    const double pairs = 0.5 * t.node_count() * (t.node_count() - 1.0);
    if (pairs > static_cast<double>(limits.links))
      r.fail(
          fmt::format("peers within /limits/links = {}: behind routers every pair of the {} nodes are peers by "
                      "default ({:.4g} pairs); give /topology/peers to choose fewer",
                      limits.links, t.node_count(), pairs));
    t.peers = adjacency(t.node_count(), complete_edges(t.node_count()));
  } else {
    EdgeList ne;
    for (auto [it, end] = boost::edges(t.graph); it != end; ++it)
      ne.emplace_back(node_index[boost::source(*it, t.graph)], node_index[boost::target(*it, t.graph)]);
    t.peers = adjacency(t.node_count(), ne);
  }
  r.done();
  if (t.node_count() > 1)
    for (NodeId i = 0; i < t.node_count(); ++i)
      if (t.peers[i].empty()) r.fail(fmt::format("every node to have a peer (node {} has none)", i));
  if (NodeId lost = unreachable_node(t); lost >= 0)
    r.fail(fmt::format("a connected graph ({}): compute node {} ({}) cannot reach node 0 ({}) over the links",
                       t.description, lost, t.graph[t.nodes[lost]].name, t.graph[t.nodes[0]].name));
  return t;
}

std::vector<int> region_ids(const Topology& t, std::vector<std::string>* names) {
  std::map<std::string, int> ids;
  for (Vertex v : t.nodes) ids.emplace(t.graph[v].region, 0);
  int next = 0;
  for (auto& [name, id] : ids) {
    id = next++;
    if (names) names->push_back(name);
  }
  std::vector<int> out;
  for (Vertex v : t.nodes) out.push_back(ids.at(t.graph[v].region));
  return out;
}

std::string vertex_label(const Topology& t, Vertex v) {
  if (!t.graph[v].is_node) return t.graph[v].name;
  const auto it = std::find(t.nodes.begin(), t.nodes.end(), v);
  return fmt::format("n{}", it - t.nodes.begin());
}

// Vertices are named as in every other output (vertex_label), quoted; the
// label is the vertex's own name.
std::string to_dot(const Topology& t) {
  std::ostringstream out;
  out << "graph topology {\n  // " << t.description << "\n";
  std::vector<std::string> id(boost::num_vertices(t.graph));
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) id[*it] = quoted(t.graph[*it].name);
  for (size_t n = 0; n < t.nodes.size(); ++n) id[t.nodes[n]] = quoted(fmt::format("n{}", n));
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) {
    const auto& v = t.graph[*it];
    if (v.is_node)
      out << fmt::format("  {} [label={}, up_mbps={:.6g}, down_mbps={:.6g}{}];\n", id[*it], quoted(v.name),
                         v.up.megabits_per_second(), v.down.megabits_per_second(),
                         v.region.empty() ? "" : ", region=" + quoted(v.region));
    else
      out << fmt::format("  {} [label={}, router=1, shape=box];\n", id[*it], quoted(v.name));
  }
  for (auto [it, end] = boost::edges(t.graph); it != end; ++it) {
    const auto& e = t.graph[*it];
    out << fmt::format("  {} -- {} [bandwidth_mbps={:.6g}, latency_ms={:.6g}];\n", id[boost::source(*it, t.graph)],
                       id[boost::target(*it, t.graph)], e.capacity.megabits_per_second(), e.latency.seconds() * 1e3);
  }
  out << "}\n";
  return out.str();
}

}  // namespace gossipsim
