// gossipsim: discrete-event WAN simulation of gossip SGD with real kernels.
// The command line: each subcommand's options are declared in one function,
// and the chosen one runs; bad input ends in one line and exit 2.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <sstream>

#include "base/console.h"
#include "base/error.h"
#include "cli/commands.h"

namespace gossipsim {
namespace {

// --methods a,b: one value, split at commas here; an empty label ("", ",,",
// "a,,b") is refused (left to CLI11, the delimiter made ",,," no value at
// all and the option took the next arguments as labels).
void add_methods_option(CLI::App* c, std::vector<std::string>& methods) {
  c->add_option_function<std::string>(
      "--methods",
      [&methods](const std::string& text) {
        methods.clear();
        std::string label;
        std::istringstream in(text + ",");
        while (std::getline(in, label, ','))
          if (label.empty())
            throw CLI::ValidationError("--methods", "expected method labels separated by commas, got '" + text + "'");
          else
            methods.push_back(label);
      },
      "Only these method labels (comma-separated)");
}

// What every subcommand was given.
struct Given {
  RunCommand run;
  SweepCommand sweep;
  std::string file, out, kernels = "torch";
  std::vector<std::string> sets;
  PlotCommand plot;
  bool dot = false;
  EmulateCommand emulate;
};

CLI::App* add_run(CLI::App& app, RunCommand& run) {
  auto* c = app.add_subcommand("run", "Run every method of a scenario and write curves and summaries");
  c->add_option("scenario", run.scenario, "Scenario JSON file (not with --resume)");
  c->add_option("--out", run.out, "Results folder (default: results/<scenario name>)");
  c->add_option("--set", run.sets, "Override a value: /json/pointer=value (repeatable)");
  add_methods_option(c, run.methods);
  c->add_option("--kernels", run.kernels, "torch: real training; none: timeline only")
      ->check(CLI::IsMember({"torch", "none"}));
  c->add_option("--workers", run.workers, "Threads stepping nodes (default: the scenario's)");
  c->add_flag("--trace", run.trace, "Also write trace.json (Chrome trace events) per method");
  c->add_flag("--quiet", run.quiet, "No progress on stderr");
  c->add_option("--checkpoint-every", run.checkpoint_every,
                "Write a checkpoint every this many virtual seconds, beside the results (OUT.checkpoint)");
  c->add_option("--resume", run.resume, "Continue the interrupted run whose results folder is this");
  c->add_flag("--real", run.real,
              "Run it for real: real TCP through an emulated WAN on this machine, in real time (root; "
              "/network/real sets connections and dilation; docs/validation.md)");
  c->add_flag("--force", run.force,
              "Replace an earlier gossipsim result at --out (default: write to a fresh numbered folder)");
  return c;
}

CLI::App* add_sweep(CLI::App& app, SweepCommand& sweep) {
  auto* c = app.add_subcommand("sweep", "Run a grid of scenario variants in parallel; resumable, shardable");
  c->add_option("sweep", sweep.sweep, "Sweep JSON: base scenario and axes")->required();
  c->add_option("--out", sweep.out, "Results folder (default: results/<sweep name>)");
  c->add_option("--shard", sweep.shard, "Run only shard i of n (points with index % n == i), e.g. 0/4");
  c->add_option("--jobs", sweep.jobs, "Points run at once (default: one per core)");
  c->add_option("--kernels", sweep.kernels, "torch or none")->check(CLI::IsMember({"torch", "none"}));
  c->add_option("--set", sweep.sets,
                "Override a value of every point: /json/pointer=value (repeatable; not an axis's path)");
  c->add_flag("--trace", sweep.trace, "Each point also writes trace.json per method");
  c->add_option("--workers", sweep.workers, "Threads stepping nodes within each point (default 1)")
      ->check(CLI::Range(1, 256));
  c->add_flag("--force", sweep.force, "Start over in a folder that holds an earlier sweep");
  c->add_flag("--slurm", sweep.slurm,
              "Submit the points not done as one Slurm job array (sbatch), wait for it, and gather");
  c->add_option("--slurm-script", sweep.slurm_script,
                "Write the job array's batch script to this file (submit it yourself, or add --slurm)")
      ->check(
          [](const std::string& file) { return file.empty() ? std::string("expected a file name") : std::string(); });
  c->add_option("--slurm-arg", sweep.slurm_args,
                "An sbatch option for the array, e.g. --slurm-arg=--time=02:00:00 (repeatable)");
  c->add_option("--slurm-tasks", sweep.slurm_tasks,
                "Array tasks, each a shard of the grid (default: one per point, at most 1000)")
      ->check(CLI::Range(1, 1000));
  return c;
}

CLI::App* add_validate(CLI::App& app, Given& g) {
  auto* c = app.add_subcommand("validate", "Check a scenario file and print what it builds");
  c->add_option("scenario", g.file, "Scenario JSON file")->required();
  c->add_option("--set", g.sets, "Override a value: /json/pointer=value (repeatable)");
  c->add_option("--kernels", g.kernels,
                "torch: also check the data and the memory of training (default); none: timeline only")
      ->check(CLI::IsMember({"torch", "none"}));
  return c;
}

std::pair<CLI::App*, CLI::App*> add_net(CLI::App& app, Given& g) {
  auto* net = app.add_subcommand("net", "Network model tools");
  net->require_subcommand(1);
  auto* c = net->add_subcommand("replay", "Replay transfers on a topology; one CSV row per transfer");
  c->add_option("file", g.file, "Replay JSON: topology, network, transfers")->required();
  c->add_option("--out", g.out, "CSV file (default: standard output)");
  auto* e =
      net->add_subcommand("emulate", "The same transfers as real TCP through an emulated WAN on this machine (root)");
  EmulateCommand& x = g.emulate;
  e->add_option("file", x.file, "Replay JSON, as for net replay")->required();
  e->add_option("--out", x.out, "CSV file (default: standard output); its settings and timing go to OUT.json");
  e->add_option("--connections", x.connections,
                "fresh: a connection per transfer; persistent: one per pair (slow start after idle); "
                "warm: one per pair, warmed, no slow start after idle")
      ->check(CLI::IsMember({"fresh", "persistent", "warm"}));
  e->add_option("--congestion", x.congestion, "default (the kernel's), bbr, cubic or reno")
      ->check(CLI::IsMember({"default", "bbr", "cubic", "reno"}));
  e->add_option("--queue-packets", x.queue_packets, "Drop-tail queue of every resource, packets (default 1000)");
  e->add_option("--max-rate-mbps", x.max_rate_mbps,
                "Refuse routes whose bottleneck is above (default 200: where bench/emulator_bench finds the emulator "
                "keeps time on 2 cores)");
  e->add_option("--time-limit", x.time_limit_s, "Give up on transfers not done after this many seconds (900)");
  return {c, e};
}

CLI::App* add_topology(CLI::App& app, Given& g) {
  auto* c = app.add_subcommand("topology", "Build a topology and describe it");
  c->add_option("spec", g.file, "Scenario JSON, or a JSON object with the /topology fields")->required();
  c->add_flag("--dot", g.dot, "Print Graphviz DOT with the drawn values");
  c->add_option("--set", g.sets, "Override a value of a scenario: /json/pointer=value (repeatable)");
  return c;
}

CLI::App* add_plot(CLI::App& app, Given& g) {
  auto* c = app.add_subcommand("plot", "Draw the plots and time-to-accuracy tables of a results folder");
  c->add_option("results", g.plot.results,
                "Results folders written by gossipsim run (several seeds draw a band) or sweep")
      ->required();
  c->add_option("--out", g.plot.out, "Where the figures go (default: the results folder)");
  c->add_option("--window", g.plot.window, "START,END: the virtual seconds timelines show (default: the first 10)");
  add_methods_option(c, g.plot.methods);
  c->add_option("--reference", g.plot.reference,
                "The method under study: the tables give its speed-up over the others (default: the sweep "
                "file's analysis, else the method whose traits say so)");
  c->add_flag("--side-by-side", g.plot.side_by_side,
              "Draw runs whose scenarios differ (not only in /seed) as separate configurations instead of refusing");
  return c;
}

int checked_run(const RunCommand& run) {
  if (run.scenario.empty() == run.resume.empty())
    throw InputError("run", "", "expected a scenario file, or --resume with a results folder (one of the two)");
  if (!run.resume.empty() && (!run.out.empty() || !run.sets.empty() || !run.methods.empty()))
    throw InputError("run --resume", "", "expected no --out, --set or --methods: a run resumes as it was started");
  return run_command(run);
}

}  // namespace
}  // namespace gossipsim

int main(int argc, char** argv) {
  using namespace gossipsim;
  // A reader that goes away (`gossipsim run ... | head -1`) turns the
  // messages off (base/console.h), never the run.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"gossipsim: gossip SGD over a simulated wide area network, with real LibTorch training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gossipsim ") + GOSSIPSIM_VERSION);
  Given g;
  auto* run = add_run(app, g.run);
  auto* sweep = add_sweep(app, g.sweep);
  auto* validate = add_validate(app, g);
  auto [replay, emulate] = add_net(app, g);
  auto* topology = add_topology(app, g);
  auto* plot = add_plot(app, g);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other refusal, and the documented exit code 2.
    say(stderr, "gossipsim: error: {} (gossipsim --help lists the commands and their options)\n", e.what());
    return 2;
  }
  try {
    if (*run) return checked_run(g.run);
    if (*sweep) return sweep_command(g.sweep);
    if (*validate) return validate_command(g.file, g.sets, g.kernels);
    if (*replay) return replay_command(g.file, g.out);
    if (*emulate) return emulate_command(g.emulate);
    if (*topology) return topology_command(g.file, g.dot, g.sets);
    if (*plot) return plot_command(g.plot);
  } catch (const InputError& e) {
    say(stderr, "gossipsim: error: {}\n", e.what());
    return 2;
  } catch (const WriteError& e) {
    say(stderr, "gossipsim: error: {}\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A folder that could not be read, listed or removed: its path and why.
    say(stderr, "gossipsim: error: {}: {}\n", e.path1().string(), e.code().message());
    return 2;
  } catch (const std::exception& e) {
    say(stderr, "gossipsim: {}\n", e.what());
    return 1;
  }
  return 0;
}
