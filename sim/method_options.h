// One entry of /methods, settled when the scenario is read: the method's row
// in the registry (sim/methods/registry.h) and its options as typed values.
// No layer compares method names; it asks the row (`type`) or an option.
#pragma once

#include <string>

namespace gossipsim {

struct MethodType;

// How a received model is folded into the receiver (sim/cluster.h):
// kAverage x_j <- (x_j + x_i) / 2; kSumWeights, GoSGD's and push-sum's
// rule, x_j <- (a_j x_j + a_i x_i) / (a_j + a_i), a_j <- a_j + a_i. JSON
// "average" and "gosgd".
enum class MergeRule { kAverage, kSumWeights };

// When gossip-overlap and gossip-scheduled may start a send (the paper's
// "whenever the node has no outgoing transfer in flight", read two ways):
// kIterationEnd only when an iteration ends (the default); kLinkFree also
// the moment its own transfer ends, with the model as of its last finished
// iteration. JSON "ready": "iteration-end" | "link-free".
enum class Ready { kIterationEnd, kLinkFree };

// GoSGD's sends (docs/methods.md, "gosgd"): kOne, at most one push in
// flight, a push drawn meanwhile waits in a queue of one, where a newer one
// replaces it, and leaves with the newest model when the uplink frees (the
// default); kBlocking, the sender waits for its push before computing on, as
// Theano-MPI's GOSGD_Exchanger does; kUnbounded, every push leaves at once
// and they share the uplink (gossipsim's reading before 0.2). JSON "queue":
// "one" | "blocking" | "unbounded".
enum class PushQueue { kOne, kBlocking, kUnbounded };

// AD-PSGD's two colours (docs/methods.md, "adpsgd"): kMaxCut, breadth-first
// then a local maximum cut (the default); kRegions, each region's nodes
// alternate between the colours (in id order) before the same local
// improvement, so that an active node has passive partners in its own
// region and the colours do not fall on a cut between regions. JSON
// "bipartition": "max-cut" | "regions".
enum class Bipartition { kMaxCut, kRegions };

// gossip-scheduled's knobs (docs/methods.md).
// "min-finish" | "random-enabled" | "weighted" | "mix"
enum class Selection { kMinFinish, kRandomEnabled, kWeighted, kMix };
enum class Info { kOracle, kGossiped };        // "oracle" | "gossiped"
enum class Reservation { kDirection, kNode };  // "direction" | "node"
enum class Exchange { kPush, kPushPull };      // "push" | "push-pull"

struct MethodOptions {
  const MethodType* type = nullptr;  // its registry row; never null once read
  std::string name;                  // the row's name, as written in results
  std::string label;                 // unique name of this entry in results; default: name
  int local_steps = 1;               // iterations between sends (or rounds), >= 1
  // Methods whose row lets the scenario choose ("merge": "average", the
  // default, or "gosgd"); methods with a rule of their own have it set here
  // by their row and refuse the option.
  MergeRule merge = MergeRule::kAverage;
  Ready ready = Ready::kIterationEnd;              // gossip-overlap and gossip-scheduled
  double push_probability = 0.1;                   // gosgd only: chance of a push after each iteration, (0, 1]
  PushQueue queue = PushQueue::kOne;               // gosgd only
  Bipartition bipartition = Bipartition::kMaxCut;  // adpsgd only
  int tau = 1;                                     // osgp only: delay bound in rounds, [1, 1000]
  // gossip-scheduled only:
  Selection selection = Selection::kMinFinish;
  Info info = Info::kOracle;
  Reservation reservation = Reservation::kDirection;
  Exchange exchange = Exchange::kPush;
  double ewma = 0.5;  // weight of a new observation in est(i, j), (0, 1]
  // selection mix: the cheap set is the peers whose transfer would end
  // within (1 + slack) times the soonest one's duration, [0, 1e6]
  double slack = 1.0;
  // Interventions on the candidates, before any selection: never the peers
  // of the node's last `rotate` plans, [0, 1e6]; and when fewer than
  // `cross_region_floor` of its plans so far (this one counted) left its
  // region, only peers in other regions, [0, 1]. Neither ever leaves none.
  int rotate = 0;
  double cross_region_floor = 0;
};

}  // namespace gossipsim
