// `gossipsim net replay`: transfers given as JSON run on a topology, one CSV
// row per transfer with its finish time. The document holds "topology" (as
// in a scenario), optional "network" and "seed", and "transfers": a list of
// {"src", "dst", "bytes", "start_s", "control"}. Every number is checked
// for range on its 64-bit value before it is narrowed, and a transfer that
// could end beyond kMaxVirtualSeconds is refused, so no time overflows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/flow_model.h"
#include "topologies/builder.h"

namespace gossipsim {

// The largest transfer a replay may hold: 1 TB.
inline constexpr int64_t kMaxReplayBytes = 1'000'000'000'000;

struct ReplayTransfer {
  NodeId src = 0, dst = 0;
  int64_t bytes = 0;
  double start_s = 0;
  bool control = false;
};

// The document read and checked: its topology (built as a scenario's, with
// its seed), its /network options and its transfers. InputError naming
// `file` and the JSON path for bad input. Also what bench's ns-3 replay reads.
struct ReplayInput {
  Topology topology;
  FlowModel model;
  std::vector<ReplayTransfer> transfers;
};
ReplayInput read_replay(const nlohmann::json& doc, const std::string& file, const SizeLimits& limits = {});

// The CSV's header (net replay and net emulate write the same rows).
inline constexpr const char* kReplayCsvHeader = "id,src,dst,bytes,kind,start_s,finish_s,duration_s\n";
// The CSV: id,src,dst,bytes,kind,start_s,finish_s,duration_s.
std::string replay_transfers(const nlohmann::json& doc, const std::string& file, const SizeLimits& limits = {});

}  // namespace gossipsim
