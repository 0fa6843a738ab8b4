// `gossipsim net replay`: transfers run on a topology, one CSV row per
// transfer with its finish time. input/replay_reader.h reads the JSON
// document that gives them.
#pragma once

#include <string>

#include "sim/flow_model.h"
#include "topologies/builder.h"

namespace gossipsim {

struct ReplayTransfer {
  NodeId src = 0, dst = 0;
  int64_t bytes = 0;
  double start_s = 0;
  bool control = false;
};

// A replay as read (input/replay_reader.h): its topology (built as a
// scenario's, with its seed), its /network options and its transfers.
struct ReplayInput {
  Topology topology;
  FlowModel model;
  std::vector<ReplayTransfer> transfers;
};
// The CSV's header (net replay and net emulate write the same rows).
inline constexpr const char* kReplayCsvHeader = "id,src,dst,bytes,kind,start_s,finish_s,duration_s\n";
// The CSV: id,src,dst,bytes,kind,start_s,finish_s,duration_s.
std::string replay_transfers(const ReplayInput& in);

}  // namespace gossipsim
