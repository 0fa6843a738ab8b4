// The gossipsim subcommands (cli/*_command.cc, the small ones in
// commands.cc). Each returns the process exit code; bad input is reported as
// an InputError by main().
#pragma once

#include <string>
#include <vector>

namespace gossipsim {

struct RunCommand {
  std::string scenario;
  std::string out;  // default results/<scenario name>
  std::vector<std::string> sets;
  std::vector<std::string> methods;  // labels; empty: all
  std::string kernels = "torch";     // torch | none
  bool trace = false;
  bool quiet = false;
  bool force = false;           // replace an earlier result at --out
  int workers = 0;              // 0: the scenario's /workload/workers
  double checkpoint_every = 0;  // virtual seconds between checkpoints; 0: only on SIGINT/SIGTERM
  std::string resume;           // a result folder whose run to resume (its checkpoint lies beside it)
  bool real = false;            // real TCP through the emulated WAN, in real time (emulate/real_network.h)
};

int run_command(const RunCommand& cmd);

// The checks that need the data or the model's size, shared by run and
// validate so that validate refuses everything run would.
struct Scenario;
void check_workload(const Scenario& sc, const std::string& kernels);

struct SweepCommand {
  std::string sweep;
  std::string out;            // default results/<sweep name>
  std::string shard = "0/1";  // i/n
  int jobs = 0;               // points run at once; 0: one per core
  std::string kernels = "torch";
  std::vector<std::string> sets;  // /json/pointer=value for every point, after the sweep file's "set"
  bool trace = false;             // each point also writes trace.json per method
  int workers = 1;                // threads stepping nodes within a point
  bool force = false;             // start over in a folder of another (or the same) sweep
  // Slurm: submit the sweep as one job array and wait for it (slurm), or
  // write its batch script to slurm_script (and submit it too with slurm).
  bool slurm = false;
  std::string slurm_script;
  std::vector<std::string> slurm_args;  // sbatch options, one #SBATCH line each
  int slurm_tasks = 0;                  // array tasks; 0: one per point (at most kSlurmMaxTasks)
};
int sweep_command(const SweepCommand& cmd);
int validate_command(const std::string& file, const std::vector<std::string>& sets, const std::string& kernels);
int replay_command(const std::string& file, const std::string& out);

struct EmulateCommand {
  std::string file, out;
  std::string connections = "fresh";   // fresh | persistent | warm (emulate/real_transfers.h)
  std::string congestion = "default";  // default (the kernel's) | bbr | cubic | reno
  int queue_packets = 1000;            // drop-tail queue of every resource
  double max_rate_mbps = 200;          // refuse routes whose bottleneck is above: the emulator would fall behind
                                       // (bench/emulator_bench: it keeps time to 100-200 Mbit/s on 2 cores)
  double time_limit_s = 900;
};
int emulate_command(const EmulateCommand& cmd);
int topology_command(const std::string& spec, bool dot, const std::vector<std::string>& sets = {});
struct PlotCommand {
  std::vector<std::string> results;
  std::string out;
  std::string window;                // START,END in virtual seconds for timelines ("": the plotter's default)
  std::vector<std::string> methods;  // only these labels; empty: all
  bool side_by_side = false;         // runs of different scenarios drawn apart instead of refused
  std::string reference;             // the method under study for the tables ("": the sweep file's, or the trait)
};
int plot_command(const PlotCommand& cmd);

// `s` quoted for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace gossipsim
