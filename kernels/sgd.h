// One training step on flat tensors.
//
// forward_backward: the mean cross-entropy of a batch through a module view;
// the gradient lands in view.grad().
// sgd_update: SGD as PyTorch's torch.optim.SGD defines it (dampening 0, no
// Nesterov): d = g + wd x; m = mu m + d; x -= lr m (x -= lr d when mu = 0).
// `grad` is modified (weight decay is added to it).
#pragma once

#include <torch/torch.h>

#include "kernels/node_store.h"
#include "sim/workload.h"

namespace gossipsim {

torch::Tensor forward_backward(ModuleView& view, const torch::Tensor& x, const torch::Tensor& y);
void sgd_update(torch::Tensor params, torch::Tensor grad, torch::Tensor momentum, const OptimizerSpec& o, double lr);

}  // namespace gossipsim
