// summary.json of a method's run: its totals, the staleness of merged
// models, time to each target accuracy, cuts that went without a transfer
// (a region, or a node, against the rest) and the method's traits from its
// registry row, which the plots read instead of method names. The keys are
// documented in docs/outputs.md.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/runner.h"

namespace gossipsim {

nlohmann::json method_summary(const MethodRun& run);

// Per target, the first evaluation whose `metric` accuracy reached it
// ({"virtual_s", "epochs"}, or null); and the same under every metric the
// rows have ({"average": ..., "node_mean": ..., "node_min": ...}).
nlohmann::json time_to_accuracy(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                TargetMetric metric);
nlohmann::json time_to_accuracy_by(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                   bool lone_model = false);

}  // namespace gossipsim
