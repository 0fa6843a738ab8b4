// Runs one method of a scenario on a fresh simulator, network and learner,
// and returns what it observed. Every method of a scenario sees the same
// network draw, compute speeds, data partition and initial model, because
// each is derived from the scenario's seed alone.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/learner.h"
#include "sim/recorder.h"
#include "sim/scenario.h"

namespace gossipsim {

struct RunOptions {
  bool trace = false;     // keep the Chrome trace events
  bool progress = false;  // report progress on stderr
};

struct MethodRun {
  MethodOptions method;
  Recorder recorder;
  nlohmann::json summary;
};

MethodRun run_method(const Scenario& sc, const MethodOptions& method, Learner& learner, const RunOptions& opts);

// Nodes a method trains: 1 for `single`, else the topology's compute nodes.
int learner_nodes(const Scenario& sc, const MethodOptions& method);

}  // namespace gossipsim
