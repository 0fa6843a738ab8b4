#include "cli/commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "analysis/output_dir.h"
#include "analysis/writers.h"
#include "base/console.h"
#include "base/files.h"
#include "input/data_files.h"
#include "input/replay_reader.h"
#include "input/scenario_reader.h"
#include "sim/network.h"
#include "sim/runner.h"
#include "sim/simulator.h"
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
  const double bytes_per_value = data.integer_inputs ? 8.0 : 4.0;
  check_memory(sc, model,
               static_cast<int64_t>(bytes_per_value * features * static_cast<double>(data.train + data.test)));
}

int validate_command(const std::string& file, const std::vector<std::string>& sets, const std::string& kernels) {
  Scenario sc = load_scenario(file, sets);
  check_workload(sc, kernels);
  say(stdout,
      "{}: valid\n  name: {}\n  topology: {} ({} vertices, {} links)\n  workload: {} / {}, batch {}\n  methods:", file,
      sc.name, sc.topology.description, boost::num_vertices(sc.topology.graph), boost::num_edges(sc.topology.graph),
      sc.workload.dataset == DatasetKind::kTensors
          ? fmt::format("tensors {} ({} + {} samples of [{}], {} classes)", sc.workload.data_file,
                        sc.workload.data_facts.train, sc.workload.data_facts.test,
                        fmt::join(sc.workload.data_facts.shape, ", "), sc.workload.data_facts.classes)
          : dataset_name(sc.workload.dataset),
      sc.workload.model.name == "torchscript"
          ? fmt::format("torchscript {} ({} bytes of state)", sc.workload.model.torchscript,
                        sc.workload.model.state_bytes)
          : sc.workload.model.name,
      sc.workload.batch);
  for (const auto& m : sc.methods) say(stdout, " {}", m.label);
  say(stdout, "\n");
  if (sc.workload.partition.kind == PartitionSpec::Kind::kFile)
    say(stdout, "  split: {} ({} samples)\n", sc.workload.partition.path, sc.workload.partition.nodes.size());
  // What the living WAN adds (docs/wan.md), so a user sees what was drawn.
  if (!sc.network.profiles.empty() || !sc.compute.profiles.empty())
    say(stdout, "  profiles: {} network, {} compute\n", sc.network.profiles.size(), sc.compute.profiles.size());
  if (!sc.churn.empty()) {
    std::set<NodeId> nodes(sc.churn.start_down.begin(), sc.churn.start_down.end());
    for (const auto& e : sc.churn.events) nodes.insert(e.node);
    say(stdout, "  churn: {} events on {} nodes ({} down at the start)\n", sc.churn.events.size(), nodes.size(),
        sc.churn.start_down.size());
  }
  if (!sc.network.cross_traffic.empty()) say(stdout, "  cross-traffic: {} sources\n", sc.network.cross_traffic.size());
  return 0;
}

int replay_command(const std::string& file, const std::string& out) {
  if (!out.empty()) check_output_file(out, "--out", kReplayCsvHeader);
  const std::string csv = replay_transfers(read_replay(JsonReader::parse_file(file), file));
  if (out.empty())
    std::cout << csv;
  else
    write_file_atomically(out, csv);
  return 0;
}

int topology_command(const std::string& spec, bool dot, const std::vector<std::string>& sets) {
  nlohmann::json doc = JsonReader::parse_file(spec);
  Topology t;
  if (doc.is_object() && doc.contains("topology")) {
    t = load_scenario(spec, sets).topology;
  } else {
    if (!sets.empty())
      throw InputError(spec, "", "expected a scenario (with a /topology) for --set: this file is a bare topology spec");
    t = build_topology(JsonReader(doc, spec), LinkDefaults{}, Streams(1));
  }
  if (dot) {
    std::cout << to_dot(t);
  } else {
    say(stdout, "{}\n  vertices {}, links {}, compute nodes {}\n", t.description, boost::num_vertices(t.graph),
        boost::num_edges(t.graph), t.node_count());
    for (NodeId n = 0; n < t.node_count(); ++n) say(stdout, "  node {} peers: {}\n", n, fmt::join(t.peers[n], " "));
  }
  return 0;
}

int plot_command(const PlotCommand& cmd) {
  const std::vector<std::string>& results = cmd.results;
  const std::string& out = cmd.out;
  for (const auto& r : results) {
    auto marker = read_result_marker(r);
    if (!marker || ((*marker)["kind"] != "run" && (*marker)["kind"] != "sweep"))
      throw InputError(
          r, "",
          fs::is_directory(r) ? "expected a folder written by gossipsim run or gossipsim sweep (this one is not)"
          : fs::exists(r)     ? "expected a folder written by gossipsim run or gossipsim sweep, not a file"
                              : "expected a folder written by gossipsim run or gossipsim sweep (it does not exist)");
    if ((*marker)["kind"] == "sweep" && !marker->value("complete", false))
      throw InputError(r, "",
                       "expected a finished sweep (this one has points still to run or failed; run the sweep again)");
    if ((*marker)["kind"] == "run" && !marker->value("complete", true))
      say(stderr,
          "gossipsim: note: {} is an interrupted run (gossipsim run --resume {} finishes it); "
          "plotting what was done\n",
          r, r);
  }
  if (!out.empty()) {
    if (!existing_result(out, {}, "--out")) {
      make_folders(out);
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
  if (!cmd.window.empty()) command += " " + shell_quote("--window=" + cmd.window);  // a leading - is a value
  if (cmd.side_by_side) command += " --side-by-side";
  if (!cmd.reference.empty()) command += " " + shell_quote("--reference=" + cmd.reference);
  if (!cmd.methods.empty()) {
    std::string labels;
    for (const auto& m : cmd.methods) labels += (labels.empty() ? "" : ",") + m;
    command += " " + shell_quote("--methods=" + labels);
  }
  const int rc = std::system(command.c_str());
  // The script's own exit code (2: a file it could not read or write); a
  // signal or a missing interpreter is 1.
  return rc == 0 ? 0 : WIFEXITED(rc) && WEXITSTATUS(rc) == 2 ? 2 : 1;
}

}  // namespace gossipsim
