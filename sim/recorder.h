// What a run observes, as plain rows; analysis/ writes them out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/units.h"
#include "sim/learner.h"
#include "topologies/graph.h"

namespace gossipsim {

struct MetricRow {
  Time time;
  double epochs = 0;       // samples processed by all nodes / training set size
  int64_t iterations = 0;  // all nodes together
  Evaluation eval;
  int64_t bytes_sent = 0;
  int64_t transfers = 0;  // finished
  int64_t merges = 0;
};

struct TransferRow {
  NodeId src = 0, dst = 0;
  int64_t bytes = 0;
  Time snapshot, start, finish, merge;
  bool finished = false;  // false: still in flight when the run ended
  bool merged = false;    // false: still unmerged when the run ended
  bool lost = false;      // cut by a crash, a leave or an abandoned all-reduce step
  int64_t sender_iterations_at_snapshot = 0, sender_iterations_at_merge = 0;
  double weight = 1;  // the sum-weight it carries (gosgd); not written out
};

// Something that happened to the WAN (events.csv):
//   capacity      a profile set target's capacity to value Mbit/s
//   latency       a profile set a link's latency to value ms
//   speed         a profile set node target's iteration time factor to value
//   crash, leave  node target went down
//   join          node target came up; detail: the model it took
//   lost          transfer target ("n3->n5", value bytes) was lost; detail: why
//   cross-traffic a background flow target started; value bytes; detail: its source entry
struct NetworkEventRow {
  Time time;
  std::string kind;
  std::string target;
  double value = 0;
  std::string detail;
};

struct NodeRow {
  Time compute, communicating;  // communicating: some transfer of the node in flight
  Time idle;                    // run time - compute
  int64_t iterations = 0;
  int64_t sent = 0, received = 0;
  Time down;          // time spent down (churn)
  double weight = 1;  // its sum-weight at the end (gosgd); not written out
};

// A Chrome trace-event on one of a node's tracks; ph is X (span), i
// (instant), s/f (the two ends of a flow arrow, matched by id).
enum Track { kComputeTrack = 0, kSendTrack = 1, kReceiveTrack = 2 };
struct TraceEvent {
  std::string name;
  char ph;
  Time ts, dur;
  NodeId node;
  Track track;
  uint64_t id = 0;
};

struct Recorder {
  bool trace_enabled = false;
  // Each node's group, its region in a geo topology (for the region matrix
  // and the split of the consensus distance); empty without regions.
  std::vector<std::string> group_names;
  std::vector<int> node_group;
  std::vector<MetricRow> metrics;
  std::vector<TransferRow> transfers;
  std::vector<NodeRow> nodes;
  std::vector<TraceEvent> trace;
  std::vector<NetworkEventRow> network_events;
  void event(TraceEvent e) {
    if (trace_enabled) trace.push_back(std::move(e));
  }
};

}  // namespace gossipsim
