#include "sim/learner.h"

#include <cmath>

namespace gossipsim {

Evaluation NullLearner::evaluate(bool) {
  Evaluation e;
  e.accuracy = e.loss = NAN;
  e.consensus = NAN;
  return e;
}

}  // namespace gossipsim
