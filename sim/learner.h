// What the methods ask of the training side, without LibTorch: kernels/
// implements it with real models; NullLearner (timeline-only runs and
// network studies) does no training at all.
//
// Contract: nodes are 0..node_count()-1. step(n, at) runs one mini-batch
// iteration of node n, the one that ends at virtual time `at`; steps of
// different nodes may run concurrently through step_all, steps of one node
// never do. A snapshot is a copy of a node's
// model (parameters and running statistics) taken now; merge folds one into a
// node: x_r <- (w_self x_r + w_other s) / (w_self + w_other).
#pragma once

#include <cmath>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "base/units.h"
#include "topologies/graph.h"

namespace gossipsim {

struct ModelSnapshot {
  virtual ~ModelSnapshot() = default;
};
using SnapshotPtr = std::shared_ptr<const ModelSnapshot>;

// A training step whose loss was not a finite number (NaN or infinite): the
// model diverged, or its forward pass gives NaN. `step` counts that node's
// steps from 1; `at` is the virtual time its iteration ended.
struct NonFiniteLoss {
  NodeId node = 0;
  int64_t step = 0;
  Time at;
  double loss = 0;
};

struct Evaluation {
  double accuracy = 0, loss = 0;  // of the average model
  bool per_node = false;          // whether the node fields below are filled
  double node_accuracy_mean = 0, node_accuracy_min = 0, node_accuracy_max = 0;
  double node_loss_mean = 0, node_loss_min = 0, node_loss_max = 0;
  double consensus = 0;  // mean over nodes of ||x_i - x_bar||^2
  // With groups (set_groups: regions of a geo topology), consensus =
  // within + between: the mean of ||x_i - x_bar_g(i)||^2 and of
  // ||x_bar_g(i) - x_bar||^2, g(i) node i's group. NaN without groups.
  double consensus_within = NAN, consensus_between = NAN;
  // The first step (in the order steps were asked for) whose training loss
  // was not finite, among the steps asked for before this evaluation; none
  // where every loss was finite or the learner does not train.
  std::optional<NonFiniteLoss> nonfinite;
};
// Which model a target accuracy is measured on (/eval/target): the average
// of the nodes' models (kAverage, the default), the mean over nodes of each
// node's own model's accuracy (kNodeMean), or the worst node's (kNodeMin).
enum class TargetMetric { kAverage, kNodeMean, kNodeMin };

// The accuracy `metric` reads of `e`. Without per-node fields (a method that
// trains alone: its one model is every node's) it is the model's accuracy.
inline double target_value(const Evaluation& e, TargetMetric metric) {
  if (metric == TargetMetric::kAverage || !e.per_node) return e.accuracy;
  return metric == TargetMetric::kNodeMean ? e.node_accuracy_mean : e.node_accuracy_min;
}

// An evaluation that is ready later: the event loop asks for it and goes on.
using PendingEvaluation = std::shared_future<Evaluation>;

class Learner {
 public:
  virtual ~Learner() = default;
  virtual int node_count() const = 0;
  virtual Bytes model_bytes() const = 0;  // what a transfer of one model carries
  virtual bool trains() const { return true; }

  virtual void step(NodeId n, Time at) = 0;
  virtual void step_all(const std::vector<NodeId>& nodes, Time at) {
    for (NodeId n : nodes) step(n, at);
  }
  virtual SnapshotPtr snapshot(NodeId n) = 0;
  // The snapshot may not be taken yet: a learner that runs kernels later
  // keeps it until the merge runs.
  virtual void merge(NodeId receiver, const SnapshotPtr& s, double w_self, double w_other) = 0;
  // The listed nodes take the mean of their models (and of their optimizer
  // state); average_all() is all nodes.
  virtual void average(const std::vector<NodeId>& nodes) = 0;
  void average_all() {
    std::vector<NodeId> all(node_count());
    for (NodeId n = 0; n < node_count(); ++n) all[n] = n;
    average(all);
  }
  // Churn (sim/wan.h): node n (re)joins with the mean of `from`'s models, or
  // with the initial model when `from` is empty; its momentum starts at 0.
  virtual void reset_node(NodeId n, const std::vector<NodeId>& from) = 0;
  // Evaluations asked for from now on average (and report per node) only
  // these nodes' models, those that are up; empty: all nodes (the default).
  virtual void set_evaluated(const std::vector<NodeId>& nodes) = 0;
  // Groups of nodes (one id per node, e.g. its region) for the split of the
  // consensus distance into within and between groups. Learners that do not
  // split it leave those fields NaN.
  virtual void set_groups(const std::vector<int>&) {}
  // Evaluates the models as they are after every operation asked for so far,
  // without waiting for those operations to run; get() waits for the result.
  virtual PendingEvaluation evaluate_async(bool per_node) = 0;
  Evaluation evaluate(bool per_node) { return evaluate_async(per_node).get(); }

  virtual int64_t batch() const = 0;
  virtual int64_t train_size() const = 0;
  virtual double kernel_seconds() const = 0;               // wall time spent inside kernels so far
  virtual double evaluation_seconds() const { return 0; }  // the part of it spent evaluating
  virtual std::vector<std::vector<int64_t>> label_histogram() const { return {}; }

  // Checkpoints (sim/checkpoint.h). The whole state, once every operation
  // asked for so far has run: every node's parameters, momentum and buffers,
  // and what its data sampler has drawn. load_state() puts it back into a
  // learner made by the same factory for the same node count.
  virtual std::string save_state() = 0;
  virtual void load_state(const std::string& bytes) = 0;
  // One snapshot (a model in flight at a checkpoint) as bytes, and back.
  virtual std::string save_snapshot(const ModelSnapshot& s) = 0;
  virtual SnapshotPtr load_snapshot(const std::string& bytes) = 0;
};

// A learner for `nodes` nodes, all from the same initial model. Data are
// loaded once per factory and shared by the learners it makes.
class LearnerFactory {
 public:
  virtual ~LearnerFactory() = default;
  virtual std::unique_ptr<Learner> make(int nodes) = 0;
};

// No training: snapshots are empty, evaluations NaN. Timing is unaffected.
class NullLearner : public Learner {
 public:
  NullLearner(int nodes, Bytes model_bytes, int64_t batch = 32, int64_t train_size = 60000)
      : nodes_(nodes), bytes_(model_bytes), batch_(batch), train_size_(train_size) {}
  int node_count() const override { return nodes_; }
  Bytes model_bytes() const override { return bytes_; }
  bool trains() const override { return false; }
  void step(NodeId, Time) override {}
  SnapshotPtr snapshot(NodeId) override { return std::make_shared<ModelSnapshot>(); }
  void merge(NodeId, const SnapshotPtr&, double, double) override {}
  void average(const std::vector<NodeId>&) override {}
  void reset_node(NodeId, const std::vector<NodeId>&) override {}
  void set_evaluated(const std::vector<NodeId>&) override {}
  PendingEvaluation evaluate_async(bool) override;
  int64_t batch() const override { return batch_; }
  int64_t train_size() const override { return train_size_; }
  double kernel_seconds() const override { return 0; }
  std::string save_state() override { return {}; }
  void load_state(const std::string&) override {}
  std::string save_snapshot(const ModelSnapshot&) override { return {}; }
  SnapshotPtr load_snapshot(const std::string&) override { return std::make_shared<ModelSnapshot>(); }

 private:
  int nodes_;
  Bytes bytes_;
  int64_t batch_, train_size_;
};

}  // namespace gossipsim
