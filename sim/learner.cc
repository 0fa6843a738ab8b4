#include "sim/learner.h"

#include <cmath>

namespace gossipsim {

PendingEvaluation NullLearner::evaluate_async(bool) {
  Evaluation e;
  e.accuracy = e.loss = NAN;
  e.consensus = NAN;
  std::promise<Evaluation> ready;
  ready.set_value(e);
  return ready.get_future().share();
}

}  // namespace gossipsim
