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

}  // namespace gossipsim
