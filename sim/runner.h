// Runs one method of a scenario on a fresh simulator, network and learner,
// and returns what it observed. Every method of a scenario sees the same
// network draw, compute speeds, data partition and initial model, because
// each is derived from the scenario's seed alone.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include <csignal>

#include "sim/checkpoint.h"
#include "sim/learner.h"
#include "sim/recorder.h"
#include "sim/scenario.h"

namespace gossipsim {

struct RunOptions {
  bool trace = false;     // keep the Chrome trace events
  bool progress = false;  // report progress on stderr
  // Checkpoints (sim/checkpoint.h): at the first event at or after every
  // multiple of `checkpoint_every` of virtual time (zero: never), the run
  // hands its state to `on_checkpoint`. With `resume`, it first replays its
  // events up to that checkpoint without kernels and restores the learner.
  // When `*interrupted` turns true (SIGINT, SIGTERM) the run takes a last
  // checkpoint after the event in progress and stops with stop_reason
  // "interrupted". Checkpoints never change what a run computes.
  Time checkpoint_every = Time::zero();
  std::function<void(const MethodCheckpoint&)> on_checkpoint;
  const MethodCheckpoint* resume = nullptr;
  const volatile std::sig_atomic_t* interrupted = nullptr;
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
