// A learner whose model is one number per node, for tests that follow the
// merge arithmetic by hand: step(n) adds 1 + n/10 to x_n; merges, averages
// and resets follow the Learner contract exactly; evaluations report the
// mean of the x_n as "accuracy", their min and max as the node accuracy
// range, their spread as the consensus and x_0 as the "loss".
#pragma once

#include <algorithm>
#include <future>
#include <vector>

#include "base/binary_io.h"
#include "sim/learner.h"

namespace gossipsim::test {

class ToyLearner : public Learner {
 public:
  explicit ToyLearner(int nodes, int64_t model_bytes = 200'000) : x_(nodes, 0.0), bytes_(model_bytes) {}
  int node_count() const override { return static_cast<int>(x_.size()); }
  Bytes model_bytes() const override { return bytes(bytes_); }
  void step(NodeId n, Time) override { x_[n] += 1 + n / 10.0; }
  SnapshotPtr snapshot(NodeId n) override { return std::make_shared<Value>(x_[n]); }
  void merge(NodeId r, const SnapshotPtr& s, double w_self, double w_other) override {
    x_[r] = (w_self * x_[r] + w_other * static_cast<const Value&>(*s).x) / (w_self + w_other);
  }
  void average(const std::vector<NodeId>& nodes) override {
    double m = 0;
    for (NodeId n : nodes) m += x_[n] / nodes.size();
    for (NodeId n : nodes) x_[n] = m;
  }
  void reset_node(NodeId n, const std::vector<NodeId>& from) override {
    double m = 0;
    for (NodeId k : from) m += x_[k] / from.size();
    x_[n] = m;
  }
  void set_evaluated(const std::vector<NodeId>& nodes) override { evaluated_ = nodes; }
  void set_groups(const std::vector<int>& groups) override { groups_ = groups; }
  PendingEvaluation evaluate_async(bool per_node) override {
    std::vector<NodeId> ids = evaluated_;
    if (ids.empty())
      for (NodeId n = 0; n < node_count(); ++n) ids.push_back(n);
    std::vector<double> x;
    for (NodeId n : ids) x.push_back(x_[n]);
    Evaluation e;
    e.per_node = per_node;
    e.node_accuracy_min = *std::min_element(x.begin(), x.end());
    e.node_accuracy_max = *std::max_element(x.begin(), x.end());
    for (double v : x) e.accuracy += v / x.size();
    for (double v : x) e.consensus += (v - e.accuracy) * (v - e.accuracy) / x.size();
    if (!groups_.empty()) {  // within + between, as the Learner contract splits it
      std::vector<double> sum(*std::max_element(groups_.begin(), groups_.end()) + 1), count(sum.size());
      for (NodeId n : ids) sum[groups_[n]] += x_[n], ++count[groups_[n]];
      e.consensus_within = e.consensus_between = 0;
      for (NodeId n : ids) {
        const double mean = sum[groups_[n]] / count[groups_[n]];
        e.consensus_within += (x_[n] - mean) * (x_[n] - mean) / ids.size();
        e.consensus_between += (mean - e.accuracy) * (mean - e.accuracy) / ids.size();
      }
    }
    e.loss = x_[0];
    std::promise<Evaluation> p;
    p.set_value(e);
    return p.get_future().share();
  }
  int64_t batch() const override { return 8; }
  int64_t train_size() const override { return 4000; }
  double kernel_seconds() const override { return 0; }
  std::string save_state() override {
    BinaryWriter w;
    w.put_vector(x_);
    return w.bytes();
  }
  void load_state(const std::string& b) override {
    BinaryReader r(b, "toy");
    x_ = r.get_vector<double>();
  }
  std::string save_snapshot(const ModelSnapshot& s) override {
    BinaryWriter w;
    w.put(static_cast<const Value&>(s).x);
    return w.bytes();
  }
  SnapshotPtr load_snapshot(const std::string& b) override {
    BinaryReader r(b, "toy snapshot");
    return std::make_shared<Value>(r.get<double>());
  }

 private:
  struct Value : ModelSnapshot {
    explicit Value(double v) : x(v) {}
    double x;
  };
  std::vector<double> x_;
  std::vector<NodeId> evaluated_;
  std::vector<int> groups_;
  int64_t bytes_;
};

}  // namespace gossipsim::test
