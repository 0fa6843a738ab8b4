#include "kernels/sgd.h"

namespace gossipsim {

torch::Tensor forward_backward(ModuleView& view, const torch::Tensor& x, const torch::Tensor& y) {
  view.net().train();
  view.grad().zero_();
  auto loss = torch::nn::functional::cross_entropy(view.net().forward(x), y);
  loss.backward();
  view.gather_grads();
  return loss.detach();
}

void sgd_update(torch::Tensor params, torch::Tensor grad, torch::Tensor momentum, const OptimizerSpec& o, double lr) {
  torch::NoGradGuard guard;
  if (o.weight_decay != 0) grad.add_(params, o.weight_decay);
  if (o.momentum > 0) {
    momentum.mul_(o.momentum).add_(grad);
    params.add_(momentum, -lr);
  } else {
    params.add_(grad, -lr);
  }
}

}  // namespace gossipsim
