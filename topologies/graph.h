// The network graph: Boost.Graph adjacency list of vertices (compute nodes
// and routers) and undirected links. A link is two independent directions of
// the same capacity and latency (full duplex). Compute nodes also have an
// access uplink and downlink. All values are drawn when the graph is built,
// so a built Topology is plain data.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <string>
#include <vector>

#include "base/units.h"

namespace gossipsim {

struct VertexInfo {
  std::string name;
  bool is_node = true;  // false: a router (no access links, no training)
  std::string region;   // geo topologies only
  Rate up, down;        // access capacities, compute nodes only
};

struct EdgeInfo {
  Rate capacity;  // per direction
  Time latency;   // one way
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexInfo, EdgeInfo>;
using Vertex = Graph::vertex_descriptor;

using NodeId = int;  // index of a compute node, 0..node_count()-1

struct Topology {
  Graph graph;
  std::vector<Vertex> nodes;               // node id -> vertex
  std::vector<std::vector<NodeId>> peers;  // gossip neighbours of each node, sorted
  std::string description;

  int node_count() const { return static_cast<int>(nodes.size()); }
};

// How every output names a vertex: a compute node as "n<id>" (as in
// transfers.csv, nodes.csv, events.csv, trace.json and the DOT), a router
// by its name. Only file topologies give compute nodes other names (which
// scenarios may use to select them; the DOT shows them as labels).
std::string vertex_label(const Topology& t, Vertex v);

// Each compute node's region, as an index into the sorted region names
// (written to `names` if given); a node without a region has the name "",
// so such nodes form one region of their own.
std::vector<int> region_ids(const Topology& t, std::vector<std::string>* names = nullptr);

}  // namespace gossipsim
