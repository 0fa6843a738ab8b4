#include "sim/evaluations.h"

#include <algorithm>
#include <future>

namespace gossipsim {

void EvaluationPipeline::ask(MetricRow row, bool per_node) {
  rows_.push_back(row);
  pending_.push_back(learner_.evaluate_async(per_node));
  const size_t n = pending_.size();
  collect(at_once_ ? n : n - std::min(n, kRunAhead));
}

void EvaluationPipeline::collect(size_t upto) {
  for (; collected_ < upto; ++collected_) {
    MetricRow& row = rows_[collected_];
    row.eval = pending_[collected_].get();
    if (on_collected_) on_collected_(row);
  }
}

void EvaluationPipeline::restore(const std::vector<Evaluation>& saved) {
  for (size_t i = 0; i < saved.size(); ++i) {
    rows_[i].eval = saved[i];
    std::promise<Evaluation> ready;
    ready.set_value(saved[i]);
    pending_[i] = ready.get_future().share();
  }
  collected_ = saved.size();
}

}  // namespace gossipsim
