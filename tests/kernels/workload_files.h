// Files of a workload, written by the tests themselves: TorchScript modules
// defined in C++ (torch::jit::Module::define compiles the same TorchScript
// that torch.jit.script writes from Python) and data files of tensors in the
// format of Python's torch.save (torch::pickle_save).
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gossipsim::test {

// A module with the given parameters (in this order), buffers and forward.
inline void save_module(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& params,
                        const std::vector<std::pair<std::string, torch::Tensor>>& buffers, const std::string& source) {
  torch::jit::Module m("TestModule");
  m.register_attribute("training", c10::BoolType::get(), true);  // as every module scripted from Python has
  for (const auto& [name, t] : params) m.register_parameter(name, t.clone(), false);
  for (const auto& [name, t] : buffers) m.register_buffer(name, t.clone());
  m.define(source);
  m.save(path);
}

// y = x W^T + b, as a module with parameters weight [C, D] and bias [C].
inline void save_linear(const std::string& path, const torch::Tensor& weight, const torch::Tensor& bias) {
  save_module(path, {{"weight", weight}, {"bias", bias}}, {},
              "def forward(self, x):\n  return torch.linear(x.flatten(1), self.weight, self.bias)\n");
}

// A dict of tensors (and other values) as Python's torch.save writes it.
inline void save_tensors(const std::string& path, const std::vector<std::pair<std::string, c10::IValue>>& entries) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [k, v] : entries) dict.insert(k, v);
  const std::vector<char> bytes = torch::pickle_save(dict);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Synthetic data of `classes` classes in `features` dimensions: labels
// cycle through the classes; inputs are each class's corner plus a small,
// seeded noise, so that a linear model separates them.
inline void save_blobs(const std::string& path, int64_t train, int64_t test, int64_t features, int64_t classes) {
  torch::manual_seed(5);
  auto make = [&](int64_t n) {
    auto y = torch::arange(n, torch::kInt64).remainder(classes);
    auto x = torch::nn::functional::one_hot(y, features).to(torch::kFloat32) * 2 + 0.5 * torch::randn({n, features});
    return std::make_pair(x, y);
  };
  auto [x, y] = make(train);
  auto [xt, yt] = make(test);
  save_tensors(path, {{"x_train", x}, {"y_train", y}, {"x_test", xt}, {"y_test", yt}});
}

// A scenario of an own workload on a ring of `nodes`: blobs.pt, the
// TorchScript `model` and split.txt beside it, evaluations every second.
inline nlohmann::json own_scenario(const std::string& model, int nodes, const std::vector<std::string>& methods,
                                   double virtual_s) {
  return {{"name", "own-workload"},
          {"topology", {{"generator", "ring"}, {"nodes", nodes}}},
          {"workload",
           {{"dataset", {{"tensors", "blobs.pt"}}},
            {"model", {{"torchscript", model}}},
            {"batch", 8},
            {"partition", {{"kind", "file"}, {"path", "split.txt"}}}}},
          {"methods", methods},
          {"stop", {{"virtual_s", virtual_s}}},
          {"eval", {{"every_s", 1}}}};
}

}  // namespace gossipsim::test
