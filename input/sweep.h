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

// A sweep as one Slurm job array (`gossipsim sweep --slurm`): array task t
// runs shard t/shards of the grid (`--shard ${SLURM_ARRAY_TASK_ID}/shards`).
// By default shards is the grid's size, capped at kSlurmMaxTasks (Slurm's
// default MaxArraySize less one), so that a task is a point; `tasks` asks for
// fewer, each of several points.
inline constexpr size_t kSlurmMaxTasks = 1000;
struct SlurmArray {
  std::string job_name;
  size_t shards = 1;
  std::vector<size_t> tasks;             // the array's indices, ascending: shards with a point not done
  std::vector<std::string> command;      // argv of each task; "{task}" stands for the task's index
  std::vector<std::string> sbatch_args;  // the user's, one #SBATCH line each
  std::string output;                    // the tasks' log files (Slurm's %A_%a pattern)
  std::string chdir;                     // where the tasks start (relative paths in the command)
  int cpus_per_task = 1;
};
// Shards of a sweep of `total` points whose done points are `done`:
// {shards, the shards that hold a point not done}.
std::pair<size_t, std::vector<size_t>> slurm_tasks(size_t total, const std::vector<bool>& done, size_t tasks = 0);
// "0-3,5,7-8": Slurm's --array list of ascending indices.
std::string slurm_array_spec(const std::vector<size_t>& indices);
// The batch script: #SBATCH lines, then exec of the command.
std::string slurm_batch_script(const SlurmArray& job);
// Checks one --slurm-arg: an sbatch option ("-x" or "--name[=value]") on one
// line, not one the array decides itself (--array, --output, --error,
// --chdir, --wait, --parsable); an InputError otherwise.
void check_sbatch_arg(const std::string& arg);

}  // namespace gossipsim
