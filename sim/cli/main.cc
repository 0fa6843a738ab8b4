// gossipsim: discrete-event WAN simulation of gossip SGD with real kernels.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/base/error.h"
#include "sim/cli/commands.h"

int main(int argc, char** argv) {
  using namespace gossipsim;
  CLI::App app{"gossipsim: gossip SGD over a simulated wide area network, with real LibTorch training"};
  app.require_subcommand(1);

  RunCommand run;
  auto* run_cmd = app.add_subcommand("run", "Run every method of a scenario and write curves and summaries");
  run_cmd->add_option("scenario", run.scenario, "Scenario JSON file (not with --resume)");
  run_cmd->add_option("--out", run.out, "Results folder (default: results/<scenario name>)");
  run_cmd->add_option("--set", run.sets, "Override a value: /json/pointer=value (repeatable)");
  run_cmd->add_option("--methods", run.methods, "Only these method labels (comma-separated)")->delimiter(',');
  run_cmd->add_option("--kernels", run.kernels, "torch: real training; none: timeline only")
      ->check(CLI::IsMember({"torch", "none"}));
  run_cmd->add_option("--workers", run.workers, "Threads stepping nodes (default: the scenario's)");
  run_cmd->add_flag("--trace", run.trace, "Also write trace.json (Chrome trace events) per method");
  run_cmd->add_flag("--quiet", run.quiet, "No progress on stderr");
  run_cmd->add_option("--checkpoint-every", run.checkpoint_every,
                      "Write a checkpoint every this many virtual seconds, beside the results (OUT.checkpoint)");
  run_cmd->add_option("--resume", run.resume, "Continue the interrupted run whose results folder is this");
  run_cmd->add_flag("--force", run.force,
                    "Replace an earlier gossipsim result at --out (default: write to a fresh numbered folder)");

  SweepCommand sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "Run a grid of scenario variants in parallel; resumable, shardable");
  sweep_cmd->add_option("sweep", sweep.sweep, "Sweep JSON: base scenario and axes")->required();
  sweep_cmd->add_option("--out", sweep.out, "Results folder (default: results/<sweep name>)");
  sweep_cmd->add_option("--shard", sweep.shard, "Run only shard i of n (points with index % n == i), e.g. 0/4");
  sweep_cmd->add_option("--jobs", sweep.jobs, "Points run at once (default: one per core)");
  sweep_cmd->add_option("--kernels", sweep.kernels, "torch or none")->check(CLI::IsMember({"torch", "none"}));
  sweep_cmd->add_flag("--force", sweep.force, "Start over in a folder that holds an earlier sweep");

  std::string file, out;
  std::vector<std::string> sets;
  auto* validate = app.add_subcommand("validate", "Check a scenario file and print what it builds");
  validate->add_option("scenario", file, "Scenario JSON file")->required();
  validate->add_option("--set", sets, "Override a value: /json/pointer=value (repeatable)");
  std::string validate_kernels = "torch";
  validate->add_option("--kernels", validate_kernels,
                       "torch: also check the data and the memory of training (default); none: timeline only")
      ->check(CLI::IsMember({"torch", "none"}));

  auto* net = app.add_subcommand("net", "Network model tools");
  net->require_subcommand(1);
  auto* replay = net->add_subcommand("replay", "Replay transfers on a topology; one CSV row per transfer");
  replay->add_option("file", file, "Replay JSON: topology, network, transfers")->required();
  replay->add_option("--out", out, "CSV file (default: standard output)");

  bool dot = false;
  auto* topo = app.add_subcommand("topology", "Build a topology and describe it");
  topo->add_option("spec", file, "Scenario JSON, or a JSON object with the /topology fields")->required();
  topo->add_flag("--dot", dot, "Print Graphviz DOT with the drawn values");

  auto* plot = app.add_subcommand("plot", "Draw the plots and time-to-accuracy tables of a results folder");
  std::vector<std::string> results;
  plot->add_option("results", results, "Results folders written by gossipsim run (several seeds draw a band) or sweep")
      ->required();
  plot->add_option("--out", out, "Where the figures go (default: the results folder)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*run_cmd) {
      if (run.scenario.empty() == run.resume.empty())
        throw InputError("run", "", "expected a scenario file, or --resume with a results folder (one of the two)");
      if (!run.resume.empty() && (!run.out.empty() || !run.sets.empty() || !run.methods.empty()))
        throw InputError("run --resume", "", "expected no --out, --set or --methods: a run resumes as it was started");
      return run_command(run);
    }
    if (*sweep_cmd) return sweep_command(sweep);
    if (*validate) return validate_command(file, sets, validate_kernels);
    if (*replay) return replay_command(file, out);
    if (*topo) return topology_command(file, dot);
    if (*plot) return plot_command(results, out);
  } catch (const InputError& e) {
    fmt::print(stderr, "gossipsim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gossipsim: {}\n", e.what());
    return 1;
  }
  return 0;
}
