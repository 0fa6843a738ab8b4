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

#include "sim/base/distribution.h"
#include "sim/base/json_reader.h"
#include "sim/base/random.h"
#include "topologies/graph.h"

namespace gossipsim {

// Values for whatever the topology leaves open, from /network.
struct LinkDefaults {
  Distribution up_mbps = Distribution::constant(100);      // access uplink, Mbit/s
  Distribution down_mbps = Distribution::constant(100);    // access downlink, Mbit/s
  Distribution latency_ms = Distribution::constant(10);    // one-way link latency, ms
  Distribution bandwidth_mbps = Distribution::constant(1000);  // link capacity, Mbit/s
};

Topology build_topology(const JsonReader& spec, const LinkDefaults& defaults, const Streams& streams);

// Graphviz DOT of a built topology with its drawn values, for inspection.
std::string to_dot(const Topology& t);

// Where shipped data files live (topologies/data).
std::string topology_data_dir();

}  // namespace gossipsim
