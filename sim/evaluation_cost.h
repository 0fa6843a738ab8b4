// What share of a run's kernel work its evaluations will take, said before
// the run pays for it (a user's small transformer once spent 209 of 223
// kernel seconds evaluating, and nothing said so until it was done).
//
// Counted in samples passed forward through a model, which is what the
// kernels' time follows for a given model: a training step is its batch
// forward and backward, about three forward passes (the backward computes
// two products for each of the forward's); an evaluation is one forward
// pass of each test sample through each model evaluated (every node's own
// and their average with /eval/per_node, the average alone otherwise, the
// one model of a method that trains alone). Steps are counted at the
// compute speed, as if no node ever waited: methods that idle (blocking
// gossip, all-reduce) train less, so their share is higher than estimated.
#pragma once

#include <cstdint>

#include "sim/scenario.h"

namespace gossipsim {

struct EvaluationCost {
  double share = 0;          // of the forward passes of the whole run, in [0, 1]
  double models = 0;         // evaluated at each evaluation, summed over methods
  double evaluations = 0;    // per method
  int64_t test_samples = 0;  // per model evaluated
  double node_steps = 0;     // training steps of every node and method
};

// `test_samples`: the test samples each evaluation uses (the scenario's,
// capped by the data).
EvaluationCost estimate_evaluation_cost(const Scenario& sc, int64_t test_samples);

// One line for the user when evaluations will take more than half of a
// run's kernel work (with the options that lower it); empty otherwise.
std::string evaluation_cost_warning(const Scenario& sc, int64_t test_samples);

}  // namespace gossipsim
