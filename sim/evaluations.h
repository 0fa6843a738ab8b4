// The evaluations of a run, asked of the learner now and collected later,
// so that the event loop runs ahead of the kernels. The loop waits for one
// only when it is more than kRunAhead evaluations ahead (which bounds the
// copies of models that pending evaluations hold), or when the run stops
// on a target accuracy and needs each value at once. (The learner bounds
// the rest of the queued work itself.)
//
// Each metrics row is appended when it is asked for; its evaluation is
// filled in when collected, in order, and `on_collected` sees each row once.
// Not thread safe: one pipeline belongs to one run.
#pragma once

#include <functional>
#include <vector>

#include "sim/learner.h"
#include "sim/recorder.h"

namespace gossipsim {

class EvaluationPipeline {
 public:
  static constexpr size_t kRunAhead = 2;
  using Collected = std::function<void(const MetricRow&)>;

  // `rows` are the run's metrics rows; `at_once`: collect every evaluation
  // as soon as it is asked for (a run that stops on a target).
  EvaluationPipeline(Learner& learner, std::vector<MetricRow>& rows, bool at_once, Collected on_collected)
      : learner_(learner), rows_(rows), at_once_(at_once), on_collected_(std::move(on_collected)) {}

  // Appends `row` and asks for its evaluation.
  void ask(MetricRow row, bool per_node);
  // Waits for every evaluation asked for so far.
  void collect_all() { collect(pending_.size()); }
  // A resumed run: the rows replayed so far take the evaluations a
  // checkpoint saved, as if collected (on_collected does not see them).
  void restore(const std::vector<Evaluation>& saved);

 private:
  void collect(size_t upto);

  Learner& learner_;
  std::vector<MetricRow>& rows_;
  bool at_once_;
  Collected on_collected_;
  std::vector<PendingEvaluation> pending_;  // one per row; rows [collected_, end) not yet collected
  size_t collected_ = 0;
};

}  // namespace gossipsim
