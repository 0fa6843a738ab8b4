// Building a Topology from the /topology section of a scenario.
//
//   {"generator": KIND, "nodes": n, ...parameters..., "peers": {...}}
//
// KIND and its parameters:
//   complete, ring, star        nodes
//   torus                       rows, cols (nodes = rows*cols)
//   random-regular              nodes, degree
//   erdos-renyi                 nodes, p (redrawn until connected)
//   watts-strogatz              nodes, k (even), beta
//   barabasi-albert             nodes, m
//   geo                         nodes, regions_file (default "cloud8", a name
//                               in topologies/data or a path), regions (subset
//                               of the file's region names; default all);
//                               nodes are placed round-robin over regions,
//                               each joined to its region's router
//   file                        path (relative to the scenario file), format
//                               (json | graphml | dot; default from the
//                               extension)
// `star` puts a router at the hub; `geo` has one router per region. Values a
// generator or file does not fix are drawn from /network (LinkDefaults), each
// link and node from a stream of its own.
// "peers" (optional) chooses the gossip neighbours: an object with the same
// structure generators (not geo or file) over the compute nodes. Default:
// the compute nodes adjacent in the graph, or all other nodes when the graph
// has routers.
#pragma once

#include <string>

#include "base/distribution.h"
#include "base/enum_names.h"
#include "base/json_reader.h"
#include "base/random.h"
#include "topologies/graph.h"

namespace gossipsim {

// /topology/generator's names, in the order errors list them.
enum class Generator {
  kComplete,
  kRing,
  kTorus,
  kStar,
  kRandomRegular,
  kErdosRenyi,
  kWattsStrogatz,
  kBarabasiAlbert,
  kGeo,
  kFile
};
inline const EnumNames<Generator>& generator_names() {
  static const EnumNames<Generator> names{{"complete", Generator::kComplete},
                                          {"ring", Generator::kRing},
                                          {"torus", Generator::kTorus},
                                          {"star", Generator::kStar},
                                          {"random-regular", Generator::kRandomRegular},
                                          {"erdos-renyi", Generator::kErdosRenyi},
                                          {"watts-strogatz", Generator::kWattsStrogatz},
                                          {"barabasi-albert", Generator::kBarabasiAlbert},
                                          {"geo", Generator::kGeo},
                                          {"file", Generator::kFile}};
  return names;
}

// The network values gossipsim represents: capacities from 1 kbit/s to
// 1 Pbit/s, one-way latencies up to 1000 s. Given values outside are
// refused; drawn values are clamped (Distribution::Bounds).
inline const Distribution::Bounds kCapacityMbps{1e-3, 1e9};
inline const Distribution::Bounds kLatencyMs{0, 1e6};

// Values for whatever the topology leaves open, from /network.
struct LinkDefaults {
  Distribution up_mbps = Distribution::constant(100);          // access uplink, Mbit/s
  Distribution down_mbps = Distribution::constant(100);        // access downlink, Mbit/s
  Distribution latency_ms = Distribution::constant(10);        // one-way link latency, ms
  Distribution bandwidth_mbps = Distribution::constant(1000);  // link capacity, Mbit/s
};

// What a topology may hold (/limits in a scenario). Sizes are checked before
// anything is built: a generator asked for more is refused at once, naming
// the limit and the memory the graph would take, instead of running out of
// memory or time.
struct SizeLimits {
  int64_t nodes = 100000;    // compute nodes (and vertices)
  int64_t links = 10000000;  // links; an erdos-renyi draw visits every pair, so its pairs count too
  double memory_gb = 16;     // estimated memory of a run (sim/scenario.h: estimate_memory)
};

// Bytes the built graph takes, about (vertices with their access links and
// peer lists, links with their two directions): for error messages.
double graph_bytes_estimate(double vertices, double links);

// Builds the graph. Refused (InputError with the JSON path): sizes over
// `limits`; a file topology with a self-loop or a link given twice; a graph
// in which some compute node cannot reach another.
Topology build_topology(const JsonReader& spec, const LinkDefaults& defaults, const Streams& streams,
                        const SizeLimits& limits = {});

// Graphviz DOT of a built topology with its drawn values, for inspection.
std::string to_dot(const Topology& t);

// Where shipped data files live (topologies/data).
std::string topology_data_dir();

}  // namespace gossipsim
