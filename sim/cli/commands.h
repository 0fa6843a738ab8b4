// The gossipsim subcommands. Each returns the process exit code; bad input
// is reported as an InputError by main().
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
  bool force = false;                // replace an earlier result at --out
  int workers = 0;                   // 0: the scenario's /workload/workers
};

int run_command(const RunCommand& cmd);

struct SweepCommand {
  std::string sweep;
  std::string out;              // default results/<sweep name>
  std::string shard = "0/1";    // i/n
  int jobs = 0;                 // points run at once; 0: one per core
  std::string kernels = "torch";
  bool force = false;           // start over in a folder of another (or the same) sweep
};
int sweep_command(const SweepCommand& cmd);
int validate_command(const std::string& file, const std::vector<std::string>& sets, const std::string& kernels);
int replay_command(const std::string& file, const std::string& out);
int topology_command(const std::string& spec, bool dot);
int plot_command(const std::vector<std::string>& results, const std::string& out);

}  // namespace gossipsim
