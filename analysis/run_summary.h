// Reading a run's summary.json back (what `gossipsim run` wrote, with
// analysis/summary.h): the one place where a command reads another run's
// summary, so that every key a method may leave null (a method that merges
// nothing has no staleness; one that trains alone has no per-node
// accuracy; a target never reached is null) is handled once. A summary
// that is not one (a damaged file, a missing key, a value of another type)
// is an InputError naming the file, the JSON path and what was expected.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gossipsim {

// The virtual seconds to one target accuracy: on the metric the run's
// /eval/target chose, and on the nodes' own models where they were
// evaluated. Empty where the target was not reached (or not measured).
struct TargetTimes {
  std::string target;  // as the summary writes it, e.g. "0.7"
  std::optional<double> chosen_s, node_mean_s, node_min_s;
  // The same, interpolated between the evaluations around the crossing
  // (summaries since interpolated_s was kept).
  std::optional<double> chosen_interp_s, node_mean_interp_s, node_min_interp_s;
};

struct MethodResult {
  std::string method, label;
  bool reference = false;  // the method under study (its registry row's trait)
  std::optional<double> final_accuracy, best_accuracy;
  std::optional<double> final_node_mean, final_node_min;  // the nodes' own models at the last evaluation
  double virtual_s = 0, epochs = 0;
  int64_t bytes_sent = 0, transfers = 0;
  std::optional<int64_t> merges;           // absent in summaries older than the key
  std::optional<double> staleness_mean_s;  // none where nothing was merged
  std::vector<TargetTimes> targets;        // in the summary's order
  int64_t starved_cuts = 0;                // cuts no transfer crossed for too long (a warning)
};

struct RunSummary {
  std::string file;
  bool complete = true;       // false: interrupted, the outputs so far
  nlohmann::json provenance;  // what made it (analysis/provenance.h); null in summaries older than the key
  std::vector<MethodResult> methods;
};

RunSummary read_run_summary(const std::string& file);

}  // namespace gossipsim
