// The machinery every method shares: nodes that compute, transfers that carry
// model snapshots, and merges at iteration boundaries (docs/methods.md).
//
// Compute: node n's iteration lasts base(n) * (1 + jitter * u), base(n)
// drawn once from /compute/iteration_ms, u uniform in [-1, 1] per iteration.
// The kernel (Learner::step) runs when the iteration's completion event
// fires; models that arrived during the iteration are merged right after it,
// in arrival order, so running the kernel at completion is exactly running it
// at the iteration's start.
//
// Transfers: send() takes the sender's snapshot now and starts a flow of
// model_bytes. On arrival the model is merged into the receiver at once if it
// is not computing, else queued for its iteration's end. Merge rule, from
// the method's options: average, x_j <- (x_j + x_i) / 2; gosgd, the sender
// halves its weight a_i and sends it along, x_j <- (a_j x_j + a_i x_i) /
// (a_j + a_i), a_j <- a_j + a_i (Blot et al. 2016).
//
// Churn (sim/wan.h, docs/methods.md): a node that crashes or leaves stops at
// once; its iteration in progress is abandoned (its kernel never runs) and
// iterate() does nothing while it is down. A crash cuts every transfer from
// or to it and drops the models in its inbox: those transfers are lost and
// never merged. A leave is graceful: its outgoing transfers in flight still
// arrive and its inbox is merged; transfers to it are cut. Every lost
// transfer is an events.csv row with the reason its flow was cut with. A
// node that joins takes the model its churn entry names. Nodes learn of a
// peer's crash, leave or join at once (a perfect failure detector):
// up_peer() draws among the peers that are up.
//
// Continuations belong to a node, and the cluster cancels them when their
// node goes down, so that a method never hears, in a later life of a node,
// of something from an earlier one: iterate()'s `then` is n's (its event is
// cancelled); a transfer's `sent` is the sender's, its `hold` and
// `received` are the receiver's (each is dropped if its node has gone down
// since the transfer started). Cancellation is lazy, as the simulator's: a
// continuation remembers the life of its node when it was made, and
// go_down() starts a new life, which cancels them all at once.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "sim/learner.h"
#include "sim/recorder.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/transport.h"

namespace gossipsim {

struct MethodContext {
  Simulator& sim;
  Transport& net;
  Learner& learner;
  const Scenario& scenario;
  const MethodOptions& options;
  Recorder& recorder;
};

class Cluster {
 public:
  using Ended = std::function<void(const FlowRecord&)>;
  // A model handed to the method on arrival instead of merged (a method that mixes
  // several at once, at a time of its choosing). merge_held merges it, now,
  // into a node that is not computing; one never merged stays unmerged.
  struct Held {
    SnapshotPtr model;
    size_t row;  // in recorder.transfers
    NodeId src;
    double weight;  // the sum-weight it carries (1 under plain averaging)
  };
  using Arrived = std::function<void(const Held&)>;
  // What a transfer does when it ends, in this order: on arrival the model
  // is merged by the rule (or handed to `hold`), then `received` and `sent`
  // run, arrived or lost (FlowRecord::lost). `hold` and `received` belong
  // to the receiver, `sent` to the sender: each is dropped if its node has
  // gone down since the transfer started. `ended` belongs to neither: the
  // bookkeeping of state both ends share (a reservation on gossip-
  // scheduled's board), which must settle whatever became of the nodes; it
  // never resumes a node.
  struct Ends {
    Arrived hold;
    Ended received;
    Ended sent;
    Ended ended;
  };

  Cluster(const MethodContext& ctx, int nodes);

  int size() const { return static_cast<int>(nodes_.size()); }
  Time now() const { return ctx_.sim.now(); }
  const MethodContext& ctx() const { return ctx_; }

  // One iteration of node n; `then` runs after its kernel and merges. With
  // run_kernel false the caller runs the kernel itself (all-reduce batches them).
  // Does nothing while n is down.
  void iterate(NodeId n, std::function<void()> then, bool run_kernel = true);
  bool computing(NodeId n) const { return nodes_[n].computing; }
  int64_t iterations(NodeId n) const { return nodes_[n].iterations; }
  int64_t total_iterations() const { return total_iterations_; }

  // Sends a snapshot of src's model to dst.
  FlowId send(NodeId src, NodeId dst, Ends ends = {});
  FlowId send(NodeId src, NodeId dst, Ended sent) { return send(src, dst, Ends{{}, {}, std::move(sent), {}}); }
  void merge_held(NodeId dst, const Held& h, double w_self, double w_other);
  // ... or by the merge rule, as a delivered model would be.
  void merge_held(NodeId dst, const Held& h);
  // Records a flow that carries no model (all-reduce chunks): counted in bytes
  // and transfers, never merged. `sent` is the sender's.
  FlowId send_bytes(NodeId src, NodeId dst, Bytes size, Ended sent);
  // Cuts transfers in flight (all-reduce abandoning a step): each is lost
  // with `reason` and its continuations run with FlowRecord::lost set.
  void cut(const std::vector<FlowId>& flows, const std::string& reason);

  // Churn.
  bool up(NodeId n) const { return nodes_[n].up; }
  const std::vector<NodeId>& up_nodes() const { return up_nodes_; }
  void go_down(NodeId n, bool crash);
  // model: "average" (the mean of the nodes up now; its own when none is),
  // "fresh" (the initial model) or "stale" (the model it had when it went down).
  void come_up(NodeId n, const std::string& model);
  // A node that is down from the start: no event, nothing lost.
  void start_down(NodeId n);
  // Stops n's iteration in progress, if any, without running its kernel.
  void abandon_iteration(NodeId n);
  int outgoing(NodeId n) const { return nodes_[n].outgoing; }
  // /compute/profiles: n's iterations from now on take `factor` times as long.
  void set_speed_factor(NodeId n, double factor) { nodes_[n].speed = factor; }
  int incoming(NodeId n) const { return nodes_[n].incoming; }

  const std::vector<NodeId>& peers(NodeId n) const;
  NodeId random_peer(NodeId n);
  // A random neighbour that is up; none when no neighbour is. With every
  // peer up it draws exactly as random_peer does.
  std::optional<NodeId> up_peer(NodeId n);
  Rng& rng(NodeId n) { return nodes_[n].choice_rng; }

  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t transfers_done() const { return transfers_done_; }
  int64_t merges() const { return merges_; }
  int64_t transfers_lost() const { return transfers_lost_; }
  // Fills the recorder's per-node rows at the end of a run.
  void close();

 private:
  struct Pending {
    SnapshotPtr model;
    double weight;
    size_t row;  // in recorder.transfers
  };
  struct Node {
    Time base;
    Rng jitter_rng, choice_rng;
    bool computing = false;
    Time iteration_start;
    std::vector<Pending> inbox;
    double weight = 1;  // gosgd
    double jitter = 0;  // the scenario's, or this node's override
    double speed = 1;   // iteration time factor from /compute/profiles
    int outgoing = 0, incoming = 0;
    Time comm_since, comm_total, compute_total;
    int64_t iterations = 0, sent = 0, received = 0;
    bool up = true;
    uint64_t life = 0;  // downs so far: a continuation made in another life is cancelled
    EventHandle iteration;
    Time down_since, down_total;
  };

  size_t begin_transfer(NodeId src, NodeId dst, Bytes size);  // its row in recorder.transfers
  void end_transfer(const FlowRecord& f, size_t row);         // also when lost
  void lose(size_t row, Time when, const std::string& reason);
  void cut_where(const std::function<bool(const FlowRecord&)>& which,
                 const std::function<std::string(const FlowRecord&)>& reason);
  // `fn`, cancelled if node n goes down before it runs.
  template <class F>
  auto owned_by(NodeId n, F fn) {
    return [this, n, life = nodes_[n].life, fn = std::move(fn)](const auto& arg) {
      if (fn && nodes_[n].life == life) fn(arg);
    };
  }
  void membership_changed();
  void deliver(NodeId dst, Pending p);
  void merge(NodeId dst, const Pending& p);
  void merged(NodeId dst, size_t transfer);  // counts and records a merge

  void comm_change(NodeId n, int delta_out, int delta_in);

  MethodContext ctx_;
  std::vector<Node> nodes_;
  bool sum_weights_;  // MergeRule::kSumWeights (gosgd, push-sum)
  double jitter_;
  int64_t total_iterations_ = 0, bytes_sent_ = 0, transfers_done_ = 0, merges_ = 0, transfers_lost_ = 0;
  std::vector<NodeId> up_nodes_;
};

}  // namespace gossipsim
