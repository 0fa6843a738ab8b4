#include "sim/evaluation_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/dataset_info.h"
#include "sim/methods/registry.h"

namespace gossipsim {

EvaluationCost estimate_evaluation_cost(const Scenario& sc, int64_t test_samples) {
  EvaluationCost c;
  c.test_samples = test_samples;
  const double nodes = sc.topology.node_count();
  const double iteration_s = std::max(1e-6, sc.compute.iteration_ms.mean() / 1000.0);
  const double train = sc.workload.train_samples > 0
                           ? std::min<double>(sc.workload.train_samples, published_dataset(sc.workload).train)
                           : published_dataset(sc.workload).train;
  double forward = 0, evaluated = 0;
  for (const MethodOptions& m : sc.methods) {
    const double trainers = m.type->trains_alone ? 1 : nodes;
    // Steps by virtual time at the compute speed, or by /stop/epochs.
    double steps = sc.stop.virtual_s > 0 ? trainers * sc.stop.virtual_s / iteration_s : 0;
    if (sc.stop.epochs > 0) {
      const double by_epochs = sc.stop.epochs * train / static_cast<double>(sc.workload.batch);
      steps = steps > 0 ? std::min(steps, by_epochs) : by_epochs;
    }
    const double span_s = sc.stop.virtual_s > 0 ? sc.stop.virtual_s : steps / trainers * iteration_s;
    c.evaluations = std::floor(span_s / sc.eval.every_s) + 1;
    const double models = m.type->trains_alone || !sc.eval.per_node ? 1 : nodes + 1;
    c.models += models;
    c.node_steps += steps;
    forward += 3.0 * steps * static_cast<double>(sc.workload.batch);
    evaluated += c.evaluations * models * static_cast<double>(test_samples);
  }
  c.share = forward + evaluated > 0 ? evaluated / (forward + evaluated) : 0;
  return c;
}

std::string evaluation_cost_warning(const Scenario& sc, int64_t test_samples) {
  const EvaluationCost c = estimate_evaluation_cost(sc, test_samples);
  if (c.share <= 0.5) return "";
  return fmt::format(
      "evaluations will take about {:.0f}% of this run's kernel work ({:g} models of {} methods evaluated on {} test "
      "samples every {:g} virtual s, against {:.0f} training steps of batch {}); /eval/every_s, /eval/per_node false "
      "or /eval/test_samples lowers it",
      100 * c.share, c.models, sc.methods.size(), c.test_samples, sc.eval.every_s, c.node_steps, sc.workload.batch);
}

}  // namespace gossipsim
