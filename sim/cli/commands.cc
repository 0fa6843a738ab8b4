#include "sim/cli/commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "analysis/output_dir.h"
#include "analysis/writers.h"
#include "sim/dataset_info.h"
#include "sim/network.h"
#include "sim/replay.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <mutex>
#include <thread>
#ifdef GOSSIPSIM_WITH_TORCH
#include "kernels/torch_learner.h"
#endif

namespace gossipsim {

namespace fs = std::filesystem;

void check_workload(const Scenario& sc, const std::string& kernels) {
  if (kernels == "none") return;
  const DatasetInfo data = inspect_dataset(sc.workload, sc.file);
  check_against_data(sc, data);
  double features = 1;
  for (int64_t d : data.sample_shape) features *= static_cast<double>(d);
  int64_t model = sc.workload.model_bytes;
#ifdef GOSSIPSIM_WITH_TORCH
  if (model == 0) model = model_state_bytes(sc.workload);
#endif
  check_memory(sc, model, static_cast<int64_t>(4.0 * features * static_cast<double>(data.train + data.test)));
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

namespace {

// The folder of a sweep: new, empty, or the same sweep's (resumed; --force
// starts it over). Anything else is refused.
void prepare_sweep_folder(const fs::path& out, const Sweep& sweep, bool force) {
  if (auto marker = existing_result(out, {"sweep"}, "--out")) {
    const std::string name = marker->value("name", sweep.name);
    if (name != sweep.name && !force)
      throw InputError("--out " + out.string(), "",
                       "a folder of sweep " + sweep.name + "; it holds sweep " + name +
                           " (choose another --out, or --force to start over)");
    if (force) fs::remove_all(out);
  }
  fs::create_directories(out / "points");
}

}  // namespace

int sweep_command(const SweepCommand& cmd) {
  Sweep sweep = load_sweep(cmd.sweep);
  auto [shard, shards] = parse_shard(cmd.shard);
  const fs::path out = cmd.out.empty() ? fs::path("results") / sweep.name : fs::path(cmd.out);
  prepare_sweep_folder(out, sweep, cmd.force);
  // A point is done when its run finished: an interrupted one (marked
  // incomplete) runs again.
  auto point_done = [&](size_t p) {
    auto marker = read_result_marker(out / "points" / std::to_string(p));
    return marker && marker->value("complete", true);
  };
  auto mark = [&](bool complete) {
    write_result_marker(out, "sweep", {{"name", sweep.name}, {"points", sweep.size()}, {"complete", complete}});
  };
  mark(false);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<size_t> todo;
  size_t done = 0;
  for (size_t p : shard_points(sweep.size(), shard, shards)) {
    if (point_done(p)) ++done;
    else todo.push_back(p);
  }
  fmt::print(stderr, "sweep {}: {} points, shard {}/{}: {} done already, {} to run\n", sweep.name, sweep.size(), shard,
             shards, done, todo.size());
  const int jobs = cmd.jobs > 0 ? cmd.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::mutex mutex;
  std::vector<size_t> failed;
  {
    boost::asio::thread_pool pool(jobs);
    for (size_t p : todo)
      boost::asio::post(pool, [&, p] {
        const fs::path dir = out / "points" / std::to_string(p);
        const fs::path log = out / "points" / (std::to_string(p) + ".log");
        std::string command = shell_quote(self) + " run " + shell_quote(sweep.base) + " --quiet --force --workers 1 --kernels " +
                              shell_quote(cmd.kernels) + " --out " + shell_quote(dir.string());
        for (const auto& o : sweep.overrides(p)) command += " --set " + shell_quote(o);
        command += " > " + shell_quote(log.string()) + " 2>&1";
        int rc = std::system(command.c_str());
        std::lock_guard<std::mutex> lock(mutex);
        if (rc != 0) {
          failed.push_back(p);
          std::ifstream in(log);
          std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          fmt::print(stderr, "point {} failed ({}): {}", p, sweep.values(p).dump(), text.empty() ? "no output\n" : text);
        } else {
          fs::remove(log);
          fmt::print(stderr, "point {} done: {}\n", p, sweep.values(p).dump());
        }
      });
    pool.join();
  }
  // sweep.csv exists only while every point of the grid is done: a failed or
  // unfinished sweep leaves no folder that looks like a whole result.
  size_t all_done = 0;
  for (size_t p = 0; p < sweep.size(); ++p) all_done += point_done(p) ? 1 : 0;
  const fs::path csv = out / "sweep.csv";
  if (!failed.empty()) {
    std::error_code ec;
    fs::remove(csv, ec);
    std::sort(failed.begin(), failed.end());
    fmt::print(stderr, "{} point(s) failed: {} (their logs are in {}/points/); no sweep.csv until every point is done\n",
               failed.size(), fmt::join(failed, ", "), out.string());
    return 3;
  }
  if (all_done < sweep.size()) {
    fmt::print(stderr, "{} of {} points done (other shards still to run); sweep.csv is written once all are\n", all_done,
               sweep.size());
    return 0;
  }
  write_file_atomically(csv, gather_sweep_csv(sweep, out.string()));
  mark(true);
  fmt::print("{}\n", csv.string());
  return 0;
}

int validate_command(const std::string& file, const std::vector<std::string>& sets, const std::string& kernels) {
  Scenario sc = load_scenario(file, sets);
  check_workload(sc, kernels);
  fmt::print("{}: valid\n  name: {}\n  topology: {} ({} vertices, {} links)\n  workload: {} / {}, batch {}\n  methods:",
             file, sc.name, sc.topology.description, boost::num_vertices(sc.topology.graph),
             boost::num_edges(sc.topology.graph), sc.workload.dataset, sc.workload.model.name, sc.workload.batch);
  for (const auto& m : sc.methods) fmt::print(" {}", m.label);
  fmt::print("\n");
  // What the living WAN adds (docs/wan.md), so a user sees what was drawn.
  if (!sc.network.profiles.empty() || !sc.compute.profiles.empty())
    fmt::print("  profiles: {} network, {} compute\n", sc.network.profiles.size(), sc.compute.profiles.size());
  if (!sc.churn.empty()) {
    std::set<NodeId> nodes(sc.churn.start_down.begin(), sc.churn.start_down.end());
    for (const auto& e : sc.churn.events) nodes.insert(e.node);
    fmt::print("  churn: {} events on {} nodes ({} down at the start)\n", sc.churn.events.size(), nodes.size(),
               sc.churn.start_down.size());
  }
  if (!sc.network.cross_traffic.empty())
    fmt::print("  cross-traffic: {} sources\n", sc.network.cross_traffic.size());
  return 0;
}

int replay_command(const std::string& file, const std::string& out) {
  if (!out.empty()) check_output_file(out, "--out");
  const std::string csv = replay_transfers(JsonReader::parse_file(file), file);
  if (out.empty()) std::cout << csv;
  else write_file_atomically(out, csv);
  return 0;
}

int topology_command(const std::string& spec, bool dot) {
  nlohmann::json doc = JsonReader::parse_file(spec);
  Topology t;
  if (doc.is_object() && doc.contains("topology")) {
    t = load_scenario(spec).topology;
  } else {
    t = build_topology(JsonReader(doc, spec), LinkDefaults{}, Streams(1));
  }
  if (dot) {
    std::cout << to_dot(t);
  } else {
    fmt::print("{}\n  vertices {}, links {}, compute nodes {}\n", t.description, boost::num_vertices(t.graph),
               boost::num_edges(t.graph), t.node_count());
    for (NodeId n = 0; n < t.node_count(); ++n)
      fmt::print("  node {} peers: {}\n", n, fmt::join(t.peers[n], " "));
  }
  return 0;
}

int plot_command(const std::vector<std::string>& results, const std::string& out) {
  for (const auto& r : results) {
    auto marker = read_result_marker(r);
    if (!marker || ((*marker)["kind"] != "run" && (*marker)["kind"] != "sweep"))
      throw InputError(r, "", fs::is_directory(r) ? "a folder written by gossipsim run or gossipsim sweep (this one is not)"
                              : fs::exists(r)    ? "a folder written by gossipsim run or gossipsim sweep, not a file"
                                                 : "a folder written by gossipsim run or gossipsim sweep (it does not exist)");
    if ((*marker)["kind"] == "sweep" && !marker->value("complete", false))
      throw InputError(r, "", "a finished sweep (this one has points still to run or failed; run the sweep again)");
    if ((*marker)["kind"] == "run" && !marker->value("complete", true))
      fmt::print(stderr, "gossipsim: note: {} is an interrupted run (gossipsim run --resume {} finishes it); "
                         "plotting what was done\n", r, r);
  }
  if (!out.empty()) {
    if (!existing_result(out, {}, "--out")) {
      fs::create_directories(out);
      write_result_marker(out, "plots", {{"results", results}});
    }
  }
  std::string script = std::getenv("GOSSIPSIM_PLOT_SCRIPT") ? std::getenv("GOSSIPSIM_PLOT_SCRIPT") : "";
  if (script.empty()) {
    for (fs::path p : {fs::path("analysis/plot.py"), fs::path(GOSSIPSIM_SOURCE_DIR) / "analysis/plot.py"})
      if (fs::exists(p)) {
        script = p.string();
        break;
      }
  }
  if (script.empty()) throw std::runtime_error("analysis/plot.py not found (set GOSSIPSIM_PLOT_SCRIPT)");
  std::string command = "/usr/bin/python3 " + shell_quote(script);
  for (const auto& r : results) command += " " + shell_quote(r);
  if (!out.empty()) command += " --out " + shell_quote(out);
  int rc = std::system(command.c_str());
  return rc == 0 ? 0 : 1;
}

}  // namespace gossipsim
