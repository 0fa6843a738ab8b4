#include "kernels/node_store.h"

namespace gossipsim {

std::vector<torch::Tensor> float_buffers(Net& net) {
  std::vector<torch::Tensor> out;
  for (auto& b : net.buffers())
    if (b.is_floating_point()) out.push_back(b);
  return out;
}

namespace {
std::vector<TensorSlice> layout_of(const std::vector<torch::Tensor>& tensors, int64_t& total) {
  std::vector<TensorSlice> out;
  total = 0;
  for (const auto& t : tensors) {
    out.push_back(TensorSlice{total, t.numel(), t.sizes().vec()});
    total += t.numel();
  }
  return out;
}

torch::Tensor flatten_all(const std::vector<torch::Tensor>& tensors, int64_t total) {
  auto flat = torch::empty({total});
  int64_t at = 0;
  for (const auto& t : tensors) {
    flat.narrow(0, at, t.numel()).copy_(t.detach().reshape({-1}));
    at += t.numel();
  }
  return flat;
}
}  // namespace

NodeStore::NodeStore(Net& prototype, int nodes, bool with_momentum) {
  int64_t p = 0, b = 0;
  auto ps = prototype.parameters();
  auto bs = float_buffers(prototype);
  param_layout = layout_of(ps, p);
  buffer_layout = layout_of(bs, b);
  params = flatten_all(ps, p).unsqueeze(0).repeat({nodes, 1}).contiguous();
  buffers = flatten_all(bs, b).unsqueeze(0).repeat({nodes, 1}).contiguous();
  if (with_momentum) momentum = torch::zeros({nodes, p});
}

ModuleView::ModuleView(std::shared_ptr<Net> net, const NodeStore& store) : net_(std::move(net)), store_(store) {
  params_ = net_->parameters();
  buffers_ = float_buffers(*net_);
  grad_ = torch::zeros({store.param_count()});
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto& s = store.param_layout[k];
    params_[k].mutable_grad() = grad_.narrow(0, s.offset, s.numel).view(s.shape);
  }
}

void ModuleView::bind(const torch::Tensor& param_row, const torch::Tensor& buffer_row) {
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto& s = store_.param_layout[k];
    params_[k].set_data(param_row.narrow(0, s.offset, s.numel).view(s.shape));
  }
  for (size_t k = 0; k < buffers_.size(); ++k) {
    const auto& s = store_.buffer_layout[k];
    buffers_[k].set_data(buffer_row.narrow(0, s.offset, s.numel).view(s.shape));
  }
}

void ModuleView::gather_grads() {
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto& s = store_.param_layout[k];
    auto view = grad_.narrow(0, s.offset, s.numel);
    auto& g = params_[k].mutable_grad();
    if (!g.defined()) {
      view.zero_();
    } else if (g.data_ptr() != view.data_ptr()) {
      view.copy_(g.reshape({-1}));
      g = view.view(s.shape);
    }
  }
}

}  // namespace gossipsim
