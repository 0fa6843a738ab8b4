#include "kernels/fusion.h"

#include <algorithm>

#include "kernels/sgd.h"

namespace gossipsim {

namespace {

// g linear layers at once: y = b + x W^T for x [g, B, in], W [g, out, in],
// b [g, out], with the per-node layer's products in forward and backward.
struct StackedLinear : torch::autograd::Function<StackedLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b) {
    ctx->save_for_backward({x, w});
    return at::baddbmm(b.unsqueeze(1), x, w.transpose(1, 2));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& w = saved[1];
    const torch::Tensor g = grads[0].contiguous();
    // As LibTorch's addmm backward for x W^T: the input's gradient g W, the
    // weight's (g^T x) -- x^T g transposed gives other last bits under an
    // optimized BLAS --, the bias's the sum over the batch.
    torch::Tensor gx = ctx->needs_input_grad(0) ? at::bmm(g, w) : torch::Tensor();
    return {gx, at::bmm(g.transpose(1, 2), x), g.sum(1)};
  }
};

// LibTorch multiplies a batch entry by entry with the per-node product only
// from this many multiply-adds on (aten's bmm_out_or_baddbmm_).
constexpr int64_t kPerEntryProducts = 400;

}  // namespace

torch::Tensor sample_losses(const torch::Tensor& logits, const torch::Tensor& labels) {
  return at::nll_loss(at::log_softmax(logits, 1), labels, {}, at::Reduction::None, -100).to(torch::kDouble);
}

StackedMlp::StackedMlp(const NodeStore& store) {
  const auto& l = store.param_layout;
  for (size_t k = 0; k + 1 < l.size(); k += 2)
    layers_.push_back(Layer{l[k].offset, l[k + 1].offset, l[k].shape[0], l[k].shape[1]});
}

bool StackedMlp::supports(const WorkloadSpec& spec, int64_t features, int classes, bool augmented,
                          const std::vector<int64_t>& eval_rows) {
  if (spec.model.name != "mlp" || augmented || spec.device != Device::kCpu) return false;
  std::vector<int64_t> widths = {features};
  widths.insert(widths.end(), spec.model.hidden.begin(), spec.model.hidden.end());
  widths.push_back(classes);
  for (size_t k = 0; k + 1 < widths.size(); ++k) {
    const int64_t in = widths[k], out = widths[k + 1];
    // Forward (B x in x out), the input's gradient (B x out x in), the
    // weight's (out x B x in): each B * in * out multiply-adds.
    if (spec.batch * in * out < kPerEntryProducts) return false;
    for (int64_t rows : eval_rows)
      if (rows * in * out < kPerEntryProducts) return false;
  }
  return true;
}

torch::Tensor StackedMlp::forward(const std::vector<torch::Tensor>& weights, const std::vector<torch::Tensor>& biases,
                                  torch::Tensor x) const {
  const int64_t g = weights.front().size(0);
  x = x.flatten(2);
  if (x.size(0) != g) x = x.expand({g, x.size(1), x.size(2)});
  for (size_t k = 0; k < layers_.size(); ++k) {
    x = StackedLinear::apply(x, weights[k], biases[k]);
    if (k + 1 < layers_.size()) x = torch::relu(x);
  }
  return x;
}

std::vector<double> StackedMlp::step(NodeStore& store, const std::vector<int64_t>& rows, const torch::Tensor& x,
                                     const torch::Tensor& y, const OptimizerSpec& o,
                                     const std::vector<double>& lr) const {
  const int64_t g = static_cast<int64_t>(rows.size()), batch = y.size(1);
  const auto index = torch::tensor(rows, torch::kInt64);
  torch::Tensor params = store.params.index_select(0, index);
  std::vector<torch::Tensor> weights, biases;
  for (const Layer& l : layers_) {
    weights.push_back(
        params.narrow(1, l.weight_offset, l.out * l.in).reshape({g, l.out, l.in}).detach().requires_grad_());
    biases.push_back(params.narrow(1, l.bias_offset, l.out).reshape({g, l.out}).detach().requires_grad_());
  }
  const torch::Tensor logits = forward(weights, biases, x);
  const int64_t classes = logits.size(2);
  // The per-node loss (cross_entropy: the mean of nll_loss over
  // log_softmax), each node's mean apart.
  const torch::Tensor losses = at::nll_loss(at::log_softmax(logits.reshape({g * batch, classes}), 1), y.reshape({-1}),
                                            {}, at::Reduction::None, -100)
                                   .view({g, batch})
                                   .mean(1);
  losses.sum().backward();
  torch::NoGradGuard guard;
  torch::Tensor grad = torch::empty_like(params);
  for (size_t k = 0; k < layers_.size(); ++k) {
    const Layer& l = layers_[k];
    grad.narrow(1, l.weight_offset, l.out * l.in).copy_(weights[k].grad().reshape({g, l.out * l.in}));
    grad.narrow(1, l.bias_offset, l.out).copy_(biases[k].grad());
  }
  // The update row by row: ATen's vectorized loops round the tail of a row
  // otherwise than its body, so one call over g rows would give the tail
  // of each row other bits than a call per row.
  torch::Tensor momentum = store.momentum.defined() ? store.momentum.index_select(0, index) : torch::Tensor();
  for (int64_t k = 0; k < g; ++k)
    sgd_update(params[k], grad[k], momentum.defined() ? momentum[k] : torch::Tensor(), o, lr[k]);
  store.params.index_copy_(0, index, params);
  if (momentum.defined()) store.momentum.index_copy_(0, index, momentum);
  const torch::Tensor l = losses.detach().to(torch::kDouble);
  return std::vector<double>(l.data_ptr<double>(), l.data_ptr<double>() + g);
}

std::vector<std::pair<double, double>> StackedMlp::evaluate(const NodeStore& store, const std::vector<int64_t>& rows,
                                                            const torch::Tensor& x, const torch::Tensor& y) const {
  torch::NoGradGuard guard;
  const int64_t g = static_cast<int64_t>(rows.size());
  const torch::Tensor params = store.params.index_select(0, torch::tensor(rows, torch::kInt64));
  std::vector<torch::Tensor> weights, biases;
  for (const Layer& l : layers_) {
    weights.push_back(params.narrow(1, l.weight_offset, l.out * l.in).reshape({g, l.out, l.in}));
    biases.push_back(params.narrow(1, l.bias_offset, l.out).reshape({g, l.out}));
  }
  torch::Tensor correct = torch::zeros({g}, torch::kInt64), loss = torch::zeros({g}, torch::kDouble);
  const int64_t n = y.size(0);
  for (int64_t at = 0; at < n; at += kEvaluationChunk) {
    const int64_t len = std::min(kEvaluationChunk, n - at);
    const torch::Tensor logits = forward(weights, biases, x.narrow(0, at, len).unsqueeze(0));  // [g, len, C]
    const torch::Tensor yy = y.narrow(0, at, len);
    // Each sample's loss, then each node's sum over the chunk: a row of
    // [g, len] is summed as the per-node path sums its [len].
    loss += sample_losses(logits.reshape({g * len, logits.size(2)}), yy.repeat({g})).view({g, len}).sum(1);
    correct += logits.argmax(2).eq(yy.unsqueeze(0)).sum(1);
  }
  std::vector<std::pair<double, double>> out;
  for (int64_t k = 0; k < g; ++k)
    out.emplace_back(static_cast<double>(correct[k].item<int64_t>()) / n, loss[k].item<double>() / n);
  return out;
}

}  // namespace gossipsim
