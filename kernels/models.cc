#include "kernels/models.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/error.h"
#include "kernels/torch_error.h"

namespace gossipsim {

namespace nn = torch::nn;

namespace {

struct Mlp : Net {
  nn::Sequential body;
  Mlp(int64_t in, const std::vector<int64_t>& hidden, int classes) {
    int64_t width = in;
    for (int64_t h : hidden) {
      body->push_back(nn::Linear(width, h));
      body->push_back(nn::ReLU());
      width = h;
    }
    body->push_back(nn::Linear(width, classes));
    register_module("body", body);
  }
  torch::Tensor forward(torch::Tensor x) override { return body->forward(x.flatten(1)); }
};

struct Cnn : Net {
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Cnn(const std::vector<int64_t>& shape, int classes, int64_t c1, int64_t c2, int64_t hidden) {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(shape[0], c1, 5)));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(c1, c2, 5)));
    int64_t h = ((shape[1] - 4) / 2 - 4) / 2, w = ((shape[2] - 4) / 2 - 4) / 2;
    if (h < 1 || w < 1) throw std::invalid_argument("cnn needs images of at least 12x12");
    fc1 = register_module("fc1", nn::Linear(c2 * h * w, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    return fc2->forward(torch::relu(fc1->forward(x.flatten(1))));
  }
};

nn::AnyModule make_norm(Norm norm, int64_t channels) {
  if (norm == Norm::kGroup)
    return nn::AnyModule(nn::GroupNorm(nn::GroupNormOptions(std::min<int64_t>(8, channels), channels)));
  return nn::AnyModule(nn::BatchNorm2d(channels));
}

struct BasicBlock : nn::Module {
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::AnyModule bn1, bn2;
  int64_t stride, in, out;
  BasicBlock(int64_t in_, int64_t out_, int64_t stride_, Norm norm) : stride(stride_), in(in_), out(out_) {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = make_norm(norm, out);
    register_module("bn1", bn1.ptr());
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = make_norm(norm, out);
    register_module("bn2", bn2.ptr());
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = torch::relu(bn1.forward(conv1->forward(x)));
    y = bn2.forward(conv2->forward(y));
    auto shortcut = x;
    if (stride != 1 || in != out) {
      // Option A of He et al.: subsample, then pad the new channels with zeros.
      shortcut = x.index({torch::indexing::Slice(), torch::indexing::Slice(),
                          torch::indexing::Slice(torch::indexing::None, torch::indexing::None, stride),
                          torch::indexing::Slice(torch::indexing::None, torch::indexing::None, stride)});
      int64_t pad = out - in;
      shortcut = torch::constant_pad_nd(shortcut, {0, 0, 0, 0, pad / 2, pad - pad / 2});
    }
    return torch::relu(y + shortcut);
  }
};

struct ResNet20 : Net {
  nn::Conv2d stem{nullptr};
  nn::AnyModule bn;
  std::vector<std::shared_ptr<BasicBlock>> blocks;
  nn::Linear fc{nullptr};
  ResNet20(const std::vector<int64_t>& shape, int classes, Norm norm) {
    stem = register_module("stem", nn::Conv2d(nn::Conv2dOptions(shape[0], 16, 3).padding(1).bias(false)));
    bn = make_norm(norm, 16);
    register_module("bn", bn.ptr());
    int64_t in = 16;
    for (int stage = 0; stage < 3; ++stage) {
      int64_t out = 16 << stage;
      for (int b = 0; b < 3; ++b) {
        auto block = std::make_shared<BasicBlock>(in, out, (stage > 0 && b == 0) ? 2 : 1, norm);
        blocks.push_back(register_module("block" + std::to_string(stage) + "_" + std::to_string(b), block));
        in = out;
      }
    }
    fc = register_module("fc", nn::Linear(64, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn.forward(stem->forward(x)));
    for (auto& b : blocks) x = b->forward(x);
    return fc->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
};

torch::jit::Module load_script(const std::string& path) {
  // Every operation as eager LibTorch runs it (no fusion, no symbolic
  // gradients): a scripted model then equals its eager twin bit for bit.
  torch::jit::setGraphExecutorOptimize(false);
  try {
    return torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    throw InputError(path, "",
                     fmt::format("expected a TorchScript module saved by torch.jit.save (or .save() of "
                                 "torch.jit.script/trace) (LibTorch: {})",
                                 torch_error_line(e.what())));
  }
}

std::string dotless(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// Whether the module's forward, with every call inlined, runs an operation
// that draws from the global generator.
bool forward_draws_random_numbers(const torch::jit::Module& m) {
  static const std::set<std::string> random_ops = {"aten::dropout",
                                                   "aten::dropout_",
                                                   "aten::feature_dropout",
                                                   "aten::feature_dropout_",
                                                   "aten::alpha_dropout",
                                                   "aten::alpha_dropout_",
                                                   "aten::feature_alpha_dropout",
                                                   "aten::rand",
                                                   "aten::rand_like",
                                                   "aten::randn",
                                                   "aten::randn_like",
                                                   "aten::randint",
                                                   "aten::randint_like",
                                                   "aten::randperm",
                                                   "aten::bernoulli",
                                                   "aten::bernoulli_",
                                                   "aten::multinomial",
                                                   "aten::normal",
                                                   "aten::normal_",
                                                   "aten::uniform_",
                                                   "aten::rrelu",
                                                   "aten::rrelu_",
                                                   "aten::poisson",
                                                   "aten::exponential_",
                                                   "aten::cauchy_",
                                                   "aten::geometric_",
                                                   "aten::log_normal_",
                                                   "aten::random_"};
  auto graph = m.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  std::function<bool(torch::jit::Block*)> visit = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      if (random_ops.count(n->kind().toQualString())) return true;
      for (torch::jit::Block* inner : n->blocks())
        if (visit(inner)) return true;
    }
    return false;
  };
  return visit(graph->block());
}

// A TorchScript module as a Net: its tensors registered as this module's.
struct ScriptNet : Net {
  torch::jit::Module module;
  bool random = false;
  bool draws_random_numbers() const override { return random; }
  explicit ScriptNet(torch::jit::Module m) : module(std::move(m)) {
    random = forward_draws_random_numbers(module);
    int k = 0;
    for (const auto& p : module.named_parameters(/*recurse=*/true))
      register_parameter(fmt::format("p{}_{}", k++, dotless(p.name)), p.value);
    for (const auto& b : module.named_buffers(/*recurse=*/true))
      if (b.value.is_floating_point()) register_buffer(fmt::format("b{}_{}", k++, dotless(b.name)), b.value);
  }
  torch::Tensor forward(torch::Tensor x) override { return module.forward({x}).toTensor(); }
  void train(bool on) override {
    Net::train(on);
    module.train(on);
  }
};

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

std::shared_ptr<Net> make_model(const ModelSpec& spec, const std::vector<int64_t>& shape, int classes) {
  if (spec.name == "torchscript") return std::make_shared<ScriptNet>(load_script(spec.torchscript));
  if (spec.name == "mlp") return std::make_shared<Mlp>(product(shape), spec.hidden, classes);
  if (shape.size() != 3) throw std::invalid_argument(spec.name + " needs image inputs [C, H, W]");
  if (spec.name == "cnn") return std::make_shared<Cnn>(shape, classes, 16, 32, 128);
  if (spec.name == "cnn-wide") return std::make_shared<Cnn>(shape, classes, 32, 64, 256);
  if (spec.name == "resnet20") return std::make_shared<ResNet20>(shape, classes, spec.norm);
  throw std::invalid_argument("unknown model " + spec.name);
}

TorchScriptFacts check_torchscript(const std::string& path, const std::vector<int64_t>& shape, bool integer_inputs,
                                   const std::vector<int64_t>& batches) {
  const auto dtype = integer_inputs ? torch::kInt64 : torch::kFloat32;
  torch::jit::Module m = load_script(path);
  if (!m.find_method("forward")) throw InputError(path, "forward", "expected a module with a forward method");
  int64_t n = 0;
  for (const auto& p : m.named_parameters(true)) {
    if (p.value.scalar_type() != torch::kFloat32)
      throw InputError(path, p.name,
                       fmt::format("expected float32 parameters (call .float() before saving); found {}",
                                   c10::toString(p.value.scalar_type())));
    n += p.value.numel();
  }
  if (n == 0) throw InputError(path, "", "expected a module with at least one parameter to train");
  for (const auto& b : m.named_buffers(true)) {
    if (b.value.is_floating_point() && b.value.scalar_type() != torch::kFloat32)
      throw InputError(path, b.name,
                       fmt::format("expected float32 buffers (call .float() before saving); found {}",
                                   c10::toString(b.value.scalar_type())));
    if (b.value.is_floating_point()) n += b.value.numel();
  }
  ScriptNet net(m.clone());
  auto sizes = [&](int64_t samples) {
    std::vector<int64_t> s = {samples};
    s.insert(s.end(), shape.begin(), shape.end());
    return s;
  };
  auto described = [&](int64_t samples) {
    return fmt::format("{} {} [{}]{}", samples, samples == 1 ? "sample" : "samples", fmt::join(sizes(samples), ", "),
                       integer_inputs ? " of token ids" : "");
  };
  // Inputs that are not all alike (a batch of equal rows can hide a shape
  // mistake): a ramp over [-1, 1], or token ids 0.
  auto input = [&](int64_t samples) {
    const auto s = sizes(samples);
    return integer_inputs ? torch::zeros(s, dtype) : torch::linspace(-1, 1, product(s)).view(s);
  };
  TorchScriptFacts facts;
  facts.state_bytes = 4 * n;
  // Runs forward on `samples` and checks the logits' shape; `training`: in
  // training mode, with a backward pass that must reach the parameters.
  auto pass = [&](int64_t samples, bool training, const char* what) {
    torch::Tensor out;
    try {
      std::optional<torch::NoGradGuard> no_grad;
      if (!training) no_grad.emplace();
      net.train(training);
      auto result = net.module.forward({input(samples)});
      if (!result.isTensor())
        throw InputError(path, "forward",
                         fmt::format("expected forward to return logits for {} ({}); it returned a {}",
                                     described(samples), what, result.tagKind()));
      out = result.toTensor();
      if (out.dim() != 2 || out.size(0) != samples || !out.is_floating_point() ||
          (facts.outputs > 0 && out.size(1) != facts.outputs))
        throw InputError(
            path, "forward",
            fmt::format("expected forward to return float logits [{}, {}] for {} ({}); it returned {} [{}]", samples,
                        facts.outputs > 0 ? std::to_string(facts.outputs) : "classes", described(samples), what,
                        c10::toString(out.scalar_type()), fmt::join(out.sizes(), ", ")));
      facts.outputs = out.size(1);
      if (training) {
        auto loss = out.logsumexp(1).sum();
        if (!loss.requires_grad())
          throw InputError(path, "forward",
                           "expected the output to depend on the parameters (no gradient reaches them)");
        loss.backward();
      }
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      throw InputError(path, "forward",
                       fmt::format("expected forward to run on {} ({}); it failed (LibTorch: {})", described(samples),
                                   what, torch_error_line(e.what())));
    }
  };
  pass(1, false, "one sample");
  if (!batches.empty()) pass(batches[0], true, "a training batch of /workload/batch, with its backward pass");
  for (size_t i = 1; i < batches.size(); ++i) pass(batches[i], false, "an evaluation batch of the test samples");
  if (batches.empty()) pass(2, true, "a training pass");
  return facts;
}

}  // namespace gossipsim
