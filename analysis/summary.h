// summary.json of a method's run: its totals, the staleness of merged
// models, time to each target accuracy, cuts that went without a transfer
// (a region, or a node, against the rest) and the method's traits from its
// registry row, which the plots read instead of method names. The keys are
// documented in docs/outputs.md.
#pragma once

#include <array>
#include <nlohmann/json.hpp>

#include "sim/runner.h"

namespace gossipsim {

nlohmann::json method_summary(const MethodRun& run);

// The keys of a summary (and of each of its methods) that measure the
// machine, not the run: no two runs share them, so a resumed run, or the
// same scenario and seed run again, equals the first without them.
inline constexpr std::array<const char*, 4> kMachineMeasures = {"wall_s", "kernel_wall_s", "evaluation_wall_s",
                                                                "cpu_s"};

// Per target, the first evaluation whose `metric` accuracy reached it
// ({"virtual_s", "epochs", "interpolated_s"}: that evaluation's time and
// epochs, and the time the accuracy crossed the target by linear
// interpolation from the evaluation before; or null); and the same under
// every metric the rows have ({"average": ..., "node_mean": ...,
// "node_min": ...}).
nlohmann::json time_to_accuracy(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                TargetMetric metric);
nlohmann::json time_to_accuracy_by(const std::vector<MetricRow>& rows, const std::vector<double>& targets,
                                   bool lone_model = false);

}  // namespace gossipsim
