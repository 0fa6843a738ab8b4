// Per-node state in flat, contiguous tensors, and module views into it.
//
// NodeStore holds, for N nodes of one model kind, parameters [N, P],
// momentum [N, P] (only when momentum > 0) and floating-point buffers
// [N, B] (BatchNorm running statistics). Nothing else is kept per node:
// memory is 4(2P + B) bytes per node plus a constant.
//
// ModuleView is one shared module of the kind (one per worker thread) whose
// parameters and buffers are views into a node's rows, bound by bind() with no
// copy, and whose gradients are views into one flat gradient [P].
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "kernels/models.h"

namespace gossipsim {

struct TensorSlice {
  int64_t offset, numel;
  std::vector<int64_t> shape;
};

std::vector<torch::Tensor> float_buffers(Net& net);

class NodeStore {
 public:
  // Every node starts from the prototype's current values.
  NodeStore(Net& prototype, int nodes, bool with_momentum);

  int node_count() const { return static_cast<int>(params.size(0)); }
  int64_t param_count() const { return params.size(1); }
  int64_t buffer_count() const { return buffers.size(1); }

  torch::Tensor params, momentum, buffers;
  std::vector<TensorSlice> param_layout, buffer_layout;
};

class ModuleView {
 public:
  ModuleView(std::shared_ptr<Net> net, const NodeStore& store);
  void bind(const torch::Tensor& param_row, const torch::Tensor& buffer_row);
  Net& net() { return *net_; }
  torch::Tensor& grad() { return grad_; }
  // Copies gradients into grad() where autograd did not accumulate in place.
  void gather_grads();

 private:
  std::shared_ptr<Net> net_;
  std::vector<torch::Tensor> params_, buffers_;
  const NodeStore& store_;
  torch::Tensor grad_;
};

}  // namespace gossipsim
