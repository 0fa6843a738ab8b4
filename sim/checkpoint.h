// Checkpoints of a method's run, and the learner that makes them possible.
//
// A run's events depend on the scenario and its seed alone, never on what
// the kernels compute (the methods choose by time, not by model values).
// So a checkpoint does not store the event queue: it stores where the run
// was (the number of events executed, with figures to check against), what
// it measured so far, the learner's whole state, and every model snapshot
// still in flight. Resuming replays the events up to that point without
// kernels (timeline only: about a million events a second), checks that it
// arrived at the same place, puts the learner's state and the snapshots in
// flight back, and goes on with kernels. The result is the same, byte for
// byte, as a run that was never interrupted.
//
// TrackingLearner sits between the methods and the real learner: it numbers
// every snapshot so that the ones in flight at a checkpoint can be saved and
// matched again after the replay, and during the replay it runs no kernel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"
#include "sim/learner.h"

namespace gossipsim {

struct MethodCheckpoint {
  std::string label;
  uint64_t events = 0;  // simulator events executed when it was taken
  Time now;
  // Checked after the replay: the same counts mean the same place.
  int64_t iterations = 0, bytes_sent = 0, transfers = 0, merges = 0;
  std::vector<Evaluation> evaluations;                      // of the metrics rows so far, in order
  std::string learner_state;                                // Learner::save_state()
  std::vector<std::pair<uint64_t, std::string>> snapshots;  // in flight: creation number, bytes
  std::string source;  // the folder it was read from, for errors ("" when not read from files)
};

// Files in `dir` (state.json, learner.bin, snapshots.bin); `dir` must exist.
void write_method_checkpoint(const std::filesystem::path& dir, const MethodCheckpoint& c);
MethodCheckpoint read_method_checkpoint(const std::filesystem::path& dir);

class TrackingLearner : public Learner {
 public:
  explicit TrackingLearner(Learner& inner) : inner_(inner) {}

  // While on, no call reaches the real learner: snapshots are numbered
  // placeholders and evaluations are NaN.
  void set_replaying(bool on) { replaying_ = on; }
  bool replaying() const { return replaying_; }
  // Snapshots still referenced by a transfer, a queue or a reservation.
  std::vector<std::pair<uint64_t, std::string>> save_live_snapshots();
  // Fills the live placeholders made during a replay with the saved models.
  void restore_live_snapshots(const std::vector<std::pair<uint64_t, std::string>>& saved);

  int node_count() const override { return inner_.node_count(); }
  Bytes model_bytes() const override { return inner_.model_bytes(); }
  bool trains() const override { return inner_.trains(); }
  void step(NodeId n, Time at) override;
  void step_all(const std::vector<NodeId>& nodes, Time at) override;
  SnapshotPtr snapshot(NodeId n) override;
  void merge(NodeId receiver, const SnapshotPtr& s, double w_self, double w_other) override;
  void average(const std::vector<NodeId>& nodes) override;
  void reset_node(NodeId n, const std::vector<NodeId>& from) override;
  // Reaches the real learner during a replay too: it is a setting, not state
  // that load_state restores.
  void set_evaluated(const std::vector<NodeId>& nodes) override { inner_.set_evaluated(nodes); }
  void set_groups(const std::vector<int>& groups) override { inner_.set_groups(groups); }
  PendingEvaluation evaluate_async(bool per_node) override;
  int64_t batch() const override { return inner_.batch(); }
  int64_t train_size() const override { return inner_.train_size(); }
  double kernel_seconds() const override { return inner_.kernel_seconds(); }
  double evaluation_seconds() const override { return inner_.evaluation_seconds(); }
  std::vector<std::vector<int64_t>> label_histogram() const override { return inner_.label_histogram(); }
  std::string save_state() override { return inner_.save_state(); }
  void load_state(const std::string& bytes) override { inner_.load_state(bytes); }
  std::string save_snapshot(const ModelSnapshot& s) override;
  SnapshotPtr load_snapshot(const std::string& bytes) override;

 private:
  struct Tracked : ModelSnapshot {
    uint64_t number = 0;
    SnapshotPtr real;  // empty: a placeholder made during a replay
  };
  void prune();

  Learner& inner_;
  bool replaying_ = false;
  uint64_t next_number_ = 0;
  std::vector<std::weak_ptr<Tracked>> live_;
  size_t prune_at_ = 1024;
};

}  // namespace gossipsim
