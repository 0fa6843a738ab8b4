// Reading the living WAN's options (the language is documented in
// sim/wan.h and docs/wan.md) against a built topology. Every error names the
// file, the JSON path (or a CSV file and line) and what was expected.
#pragma once

#include "sim/base/json_reader.h"
#include "sim/base/random.h"
#include "sim/wan.h"
#include "topologies/graph.h"

namespace gossipsim {

// Reads /overrides into the topology and the compute overrides.
void apply_topology_overrides(const JsonReader& r, Topology& topology, const Streams& streams, ComputeOverrides& compute);

// Reads /network/profiles, /compute/profiles, /churn and
// /network/cross_traffic against the built topology.
std::vector<WanProfile> parse_profiles(const JsonReader& r, const Topology& topology, const Streams& streams);
std::vector<WanProfile> parse_compute_profiles(const JsonReader& r, const Topology& topology, const Streams& streams);
Churn parse_churn(const JsonReader& r, const Topology& topology, const Streams& streams);
std::vector<CrossTraffic> parse_cross_traffic(const JsonReader& r, const Topology& topology, const Streams& streams);

}  // namespace gossipsim
