// `gossipsim net replay`: transfers given as JSON run on a topology, one CSV
// row per transfer with its finish time. The document holds "topology" (as
// in a scenario), optional "network" and "seed", and "transfers": a list of
// {"src", "dst", "bytes", "start_s", "control"}. Every number is checked
// for range on its 64-bit value before it is narrowed, and a transfer that
// could end beyond kMaxVirtualSeconds is refused, so no time overflows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/replay.h"

namespace gossipsim {

// The largest transfer a replay may hold: 1 TB.
inline constexpr int64_t kMaxReplayBytes = 1'000'000'000'000;

// The document read and checked into a ReplayInput. InputError naming
// `file` and the JSON path for bad input. Also what bench's ns-3 replay reads.
ReplayInput read_replay(const nlohmann::json& doc, const std::string& file, const SizeLimits& limits = {});

}  // namespace gossipsim
