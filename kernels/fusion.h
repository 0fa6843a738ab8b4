// Many nodes' steps and evaluations as one stacked computation (horizontal
// fusion, as HFTA does for training many models at once: Wang et al.,
// "Horizontally Fused Training Array", MLSys 2021), for the built-in mlp.
//
// For models this small the cost of a node's step is mostly the overhead of
// its dozens of operations, each dispatched for a 32-sample batch. Stacked,
// g nodes' layers are tensors [g, out, in] and one batched product runs
// them all: the dispatch is paid once per group.
//
// Exactness: every number is the per-node path's, bit for bit. LibTorch
// computes a batched product on the CPU (without MKL) as one matrix product
// per batch entry, the same call with the same strides as a per-node
// linear layer's; the layers here use a function of their own whose
// backward pass forms each gradient as the per-node layer's does (the
// weight's as grad^T x, which is not autograd's choice for a batched
// product: OpenBLAS gives other last bits for x^T grad); the loss, its
// gradient and the SGD update are the per-node ones, row by row. Where a
// product is small enough for LibTorch to take another path (fewer than 400
// multiply-adds, supports() checks every shape a run meets) or the data are
// augmented, a run keeps per-node steps. Tested against the per-node path
// (tests/kernels/fusion_test.cc).
//
// Not thread safe: one call at a time per StackedMlp (the learner runs a
// group on one worker).
#pragma once

#include <torch/torch.h>

#include <utility>
#include <vector>

#include "kernels/node_store.h"
#include "sim/workload.h"

namespace gossipsim {

// Each sample's cross-entropy of `logits` [n, C] against `labels` [n], in
// double: what an evaluation sums, fused or per node, the same way.
torch::Tensor sample_losses(const torch::Tensor& logits, const torch::Tensor& labels);

class StackedMlp {
 public:
  // The linear layers of the store's mlp layout: weight [out, in], bias [out], ...
  explicit StackedMlp(const NodeStore& store);

  // Whether runs of `spec` on samples of `features` values can be fused:
  // the built-in mlp, no augmentation, and every product of a training step
  // (batch `batch`) and of an evaluation chunk (`eval_rows`) at or above
  // LibTorch's threshold for per-entry products.
  static bool supports(const WorkloadSpec& spec, int64_t features, int classes, bool augmented,
                       const std::vector<int64_t>& eval_rows);

  // One SGD step of the nodes `rows` (store rows, g of them) on inputs x
  // [g, B, ...] and labels y [g, B], with each node's learning rate: the
  // store's parameters and momentum of those rows are updated. Returns each
  // node's loss (the batch's mean cross-entropy).
  std::vector<double> step(NodeStore& store, const std::vector<int64_t>& rows, const torch::Tensor& x,
                           const torch::Tensor& y, const OptimizerSpec& o, const std::vector<double>& lr) const;

  // Each node's accuracy and mean loss on the test samples x, y, in chunks
  // of kEvaluationChunk as the per-node evaluation runs them, each sample's
  // loss summed in double (sample_losses).
  std::vector<std::pair<double, double>> evaluate(const NodeStore& store, const std::vector<int64_t>& rows,
                                                  const torch::Tensor& x, const torch::Tensor& y) const;

 private:
  // Logits [g, B, C] of x [g, B, D] (or [1, B, D], shared) through layers
  // given as weights [g, out, in] and biases [g, out].
  torch::Tensor forward(const std::vector<torch::Tensor>& weights, const std::vector<torch::Tensor>& biases,
                        torch::Tensor x) const;

  struct Layer {
    int64_t weight_offset, bias_offset, out, in;
  };
  std::vector<Layer> layers_;
};

}  // namespace gossipsim
