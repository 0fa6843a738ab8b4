// Parameter sweeps: a base scenario and axes, each a JSON path with a list
// of values. The grid is the cartesian product of the axes; a point's index
// counts with the last axis fastest.
//
//   {"name": "...", "base": "../quickstart.json",
//    "set": {"/stop/virtual_s": 30},                  fixed overrides (optional)
//    "axes": [{"path": "/seed", "values": [1, 2, 3]},
//             {"path": "/network/access/up_mbps", "values": [10, 100]}]}
//
// Each point is an ordinary run into <out>/points/<index>/, written
// atomically, so a point whose folder exists is done: a sweep that is stopped
// and started again skips it. Shards split the grid by index (index mod n ==
// i) for Slurm job arrays or MPI ranks; results gather from the one folder.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gossipsim {

// The largest grid a sweep may have.
inline constexpr size_t kMaxSweepPoints = 100000;

struct SweepAxis {
  std::string path;
  std::vector<nlohmann::json> values;
};

// What the sweep's tables test, declared in the sweep file before any run
// ("analysis", optional), so that a confirmatory claim is not chosen after
// the results are seen:
//   "analysis": {"reference": "gossip-scheduled",   the method under study (default: its trait)
//                "target": 0.7,                     the target the map shows (default: the first)
//                "family": "what the claim is",     text printed with the tables
//                "primary": [{"/topology/nodes": 64, "/workload/partition": {...}}, ...]}
// Each primary entry names a cell by some of the axes (each path an axis,
// each value one of its values): the comparisons in those cells form a
// confirmatory family adjusted by Holm, the others an exploratory one
// adjusted by Benjamini-Hochberg (analysis/plots/tables.py).
struct SweepAnalysis {
  std::string reference, family;
  std::optional<double> target;
  nlohmann::json primary = nlohmann::json::array();
  bool declared = false;
};

struct Sweep {
  std::string file, name, base;  // base: path of the base scenario, resolved
  nlohmann::json fixed;          // "set": path -> value
  std::vector<SweepAxis> axes;
  SweepAnalysis analysis;

  size_t size() const;
  // The overrides of point `index`, as "/path=json" strings for --set.
  std::vector<std::string> overrides(size_t index) const;
  nlohmann::json values(size_t index) const;  // path -> value of each axis
};

Sweep load_sweep(const std::string& file);

// Reads the base scenario once for every value of every axis (on point 0's
// other values, with `sets`, the command line's --set, after the sweep's
// "set"), so that a value the base does not take is refused before any
// point runs, as an InputError at the sweep file's /axes/i/values/k that
// says what the base said and what to change.
void check_sweep_values(const Sweep& sweep, const std::vector<std::string>& sets);

// Points of shard i of n (0 <= i < n): the indices with index % n == i.
std::vector<size_t> shard_points(size_t total, size_t shard, size_t shards);

// Parses "i/n".
std::pair<size_t, size_t> parse_shard(const std::string& text);

}  // namespace gossipsim
