#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.h"
#include "topologies/generators.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::topology_from;

size_t degree_of(const Topology& t, NodeId n) { return t.peers[n].size(); }

TEST(Generators, StructuresHaveTheirClosedFormSizes) {
  Rng r(1);
  EXPECT_EQ(complete_edges(6).size(), 15u);
  EXPECT_EQ(ring_edges(6).size(), 6u);
  EXPECT_EQ(torus_edges(3, 4).size(), 24u);
  EXPECT_EQ(star_edges(5).size(), 4u);
  auto rr = random_regular_edges(10, 3, r);
  EXPECT_EQ(rr.size(), 15u);
  EXPECT_TRUE(is_connected(10, rr));
  EXPECT_EQ(watts_strogatz_edges(20, 4, 0.2, r).size(), 40u);
  EXPECT_EQ(barabasi_albert_edges(20, 2, r).size(), 3u + 17u * 2u);
  EXPECT_TRUE(is_connected(30, erdos_renyi_edges(30, 0.2, r)));
}

TEST(Topologies, RandomRegularNodesHaveDegreeD) {
  Topology t = topology_from(R"({"generator":"random-regular","nodes":12,"degree":4})");
  for (NodeId n = 0; n < 12; ++n) EXPECT_EQ(degree_of(t, n), 4u);
}

TEST(Topologies, SameSeedDrawsTheSameTopology) {
  LinkDefaults d;
  d.latency_ms = Distribution::constant(0);
  nlohmann::json spec = nlohmann::json::parse(R"({"dist":"uniform","min":1,"max":100})");
  d.latency_ms = Distribution::parse(JsonReader(spec, ""), Distribution::Domain::kNonNegative);
  const std::string g = R"({"generator":"erdos-renyi","nodes":15,"p":0.3})";
  EXPECT_EQ(to_dot(topology_from(g, d, 5)), to_dot(topology_from(g, d, 5)));
  EXPECT_NE(to_dot(topology_from(g, d, 5)), to_dot(topology_from(g, d, 6)));
}

TEST(Topologies, AccessDrawsDoNotShiftWhenNodesAreAdded) {
  LinkDefaults d;
  nlohmann::json spec = nlohmann::json::parse(R"({"dist":"lognormal","median":50,"sigma":1})");
  d.up_mbps = Distribution::parse(JsonReader(spec, ""), Distribution::Domain::kPositive);
  Topology small = topology_from(R"({"generator":"ring","nodes":4})", d);
  Topology large = topology_from(R"({"generator":"ring","nodes":40})", d);
  for (NodeId n = 0; n < 4; ++n)
    EXPECT_EQ(small.graph[small.nodes[n]].up, large.graph[large.nodes[n]].up) << "node " << n;
}

TEST(Topologies, StarAndGeoHaveRoutersAndCompletePeers) {
  Topology star = topology_from(R"({"generator":"star","nodes":5})");
  EXPECT_EQ(boost::num_vertices(star.graph), 6u);
  EXPECT_EQ(degree_of(star, 0), 4u);
  Topology geo = topology_from(R"({"generator":"geo","nodes":16})");
  EXPECT_EQ(geo.node_count(), 16);
  EXPECT_EQ(boost::num_vertices(geo.graph), 24u);     // 8 region routers
  EXPECT_EQ(boost::num_edges(geo.graph), 28u + 16u);  // router mesh + one access link each
  EXPECT_EQ(degree_of(geo, 3), 15u);
}

TEST(Topologies, PeersCanBeAnOverlay) {
  Topology t = topology_from(R"({"generator":"geo","nodes":8,"peers":{"generator":"ring","nodes":8}})");
  EXPECT_EQ(t.peers[0], (std::vector<NodeId>{1, 7}));
}

TEST(Topologies, GeoSubsetOfRegions) {
  Topology t = topology_from(R"({"generator":"geo","nodes":4,"regions":["us-east-1","eu-west-1"]})");
  EXPECT_EQ(boost::num_vertices(t.graph), 6u);
  // One-way latency between the two regions is half their 68 ms round trip.
  bool found = false;
  for (auto [it, end] = boost::edges(t.graph); it != end; ++it)
    if (!t.graph[boost::source(*it, t.graph)].is_node && !t.graph[boost::target(*it, t.graph)].is_node) {
      EXPECT_EQ(t.graph[*it].latency, milliseconds(34));
      found = true;
    }
  EXPECT_TRUE(found);
}

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("gossipsim-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p;
}

// Vertices and links by name, independent of the order a reader creates them in.
std::string canonical(const Topology& t) {
  std::set<std::string> lines;
  for (auto [it, end] = boost::vertices(t.graph); it != end; ++it) {
    const auto& v = t.graph[*it];
    lines.insert(v.name + (v.is_node ? " node " + std::to_string(v.up.bytes_per_second()) + " " +
                                           std::to_string(v.down.bytes_per_second())
                                     : " router"));
  }
  for (auto [it, end] = boost::edges(t.graph); it != end; ++it) {
    std::string a = t.graph[boost::source(*it, t.graph)].name, b = t.graph[boost::target(*it, t.graph)].name;
    if (b < a) std::swap(a, b);
    lines.insert(a + "--" + b + " " + std::to_string(t.graph[*it].capacity.bytes_per_second()) + " " +
                 std::to_string(t.graph[*it].latency.ns()));
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(Loaders, JsonGraphmlAndDotGiveTheSameGraph) {
  fs::path json = write_temp("t.json", R"({"nodes":[{"name":"a","up_mbps":8},{"name":"r","router":true},{"name":"b"}],
    "links":[{"a":"a","b":"r","latency_ms":5,"bandwidth_mbps":80},{"a":"r","b":"b","latency_ms":7,"bandwidth_mbps":80}]})");
  fs::path graphml = write_temp("t.graphml", R"(<?xml version="1.0"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
 <key id="n" for="node" attr.name="name" attr.type="string"/>
 <key id="r" for="node" attr.name="router" attr.type="string"/>
 <key id="u" for="node" attr.name="up_mbps" attr.type="double"/>
 <key id="l" for="edge" attr.name="latency_ms" attr.type="double"/>
 <key id="w" for="edge" attr.name="bandwidth_mbps" attr.type="double"/>
 <graph edgedefault="undirected">
  <node id="n0"><data key="n">a</data><data key="u">8</data></node>
  <node id="n1"><data key="n">r</data><data key="r">true</data></node>
  <node id="n2"><data key="n">b</data></node>
  <edge source="n0" target="n1"><data key="l">5</data><data key="w">80</data></edge>
  <edge source="n1" target="n2"><data key="l">7</data><data key="w">80</data></edge>
 </graph>
</graphml>)");
  fs::path dot = write_temp(
      "t.dot",
      R"(graph g { a [up_mbps=8]; r [router=1]; b; a -- r [latency_ms=5, bandwidth_mbps=80]; r -- b [latency_ms=7, bandwidth_mbps=80]; })");
  std::string first;
  for (const fs::path& p : {json, graphml, dot}) {
    Topology t = topology_from(nlohmann::json{{"generator", "file"}, {"path", p.string()}}.dump());
    EXPECT_EQ(t.node_count(), 2) << p;
    EXPECT_EQ(t.graph[t.nodes[0]].up, mbps(8)) << p;
    EXPECT_EQ(t.graph[t.nodes[1]].up, mbps(100)) << p;  // the default
    std::string d = canonical(t);
    if (first.empty())
      first = d;
    else
      EXPECT_EQ(d, first) << p;
    fs::remove(p);
  }
}

std::string error_of(const std::string& spec) {
  try {
    topology_from(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Topologies, BadSpecsNameTheirPath) {
  EXPECT_NE(error_of(R"({"generator":"hypercube","nodes":4})").find("test: /generator: expected one of"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"ring"})").find("/nodes: expected a value"), std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"ring","nodes":0})").find("/nodes: expected an integer in [1, 100000]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"random-regular","nodes":5,"degree":3})").find("/degree"), std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"erdos-renyi","nodes":5,"p":2})").find("/p: expected a probability"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"ring","nodes":4,"colour":1})").find("/colour: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"geo","nodes":4,"regions":["mars-1"]})").find("/regions/0"), std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"file","path":"/nonexistent.json"})").find("/path"), std::string::npos);
  EXPECT_NE(error_of(R"({"generator":"ring","nodes":4,"peers":{"generator":"ring","nodes":5}})").find("/peers/nodes"),
            std::string::npos);
  fs::path bad = write_temp("bad.json", R"({"nodes":[{"name":"a"}],"links":[{"a":"a","b":"zz"}]})");
  EXPECT_NE(error_of(nlohmann::json{{"generator", "file"}, {"path", bad.string()}}.dump()).find("/links/0/b"),
            std::string::npos);
  fs::remove(bad);
}

}  // namespace
}  // namespace gossipsim
