// The model registry. One module per model kind is built and shared: nodes
// keep only flat tensors (see node_store.h), which are viewed into it.
//
//   mlp       flatten, hidden layers (default [128]) with ReLU, linear
//   cnn       conv 1->16 k5, maxpool 2, conv 16->32 k5, maxpool 2,
//             fc ->128, fc 128->classes (80,202 parameters on 1x28x28, 10 classes)
//   cnn-wide  the same with 32/64 channels and fc ->256
//   resnet20  He et al. 2016's CIFAR ResNet (3 stages of 3 basic blocks,
//             16/32/64 channels, identity shortcuts with zero padding)
// `norm` for resnet20: batch (BatchNorm; its running statistics are node
// state) or group (GroupNorm, 8 groups; no running statistics).
//   torchscript  a module saved from Python by torch.jit.save (ScriptNet):
//             its parameters and floating-point buffers become this module's,
//             in the order of the module's parameters() and buffers(), so
//             they live in the node store like a built-in model's. Integer
//             buffers (BatchNorm's num_batches_tracked) stay in the module,
//             shared by the nodes and never merged. The module runs in the
//             TorchScript interpreter without graph optimisation, so each
//             operation is the one eager LibTorch runs. A module whose
//             forward (inlined) calls a random operation (dropout, rand,
//             bernoulli, ...) draws random numbers (Net::draws_random_numbers).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace gossipsim {

struct Net : torch::nn::Module {
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  // Whether forward draws from LibTorch's global generator (dropout and
  // the like; none of the built-in models does). The learner then seeds the
  // generator before each step from (seed, node, step), one step at a time,
  // so that results depend neither on the worker count nor on a resume.
  virtual bool draws_random_numbers() const { return false; }
};

std::shared_ptr<Net> make_model(const ModelSpec& spec, const std::vector<int64_t>& sample_shape, int classes);

// Loads a TorchScript module and checks it against data of `sample_shape`:
// float32 parameters (at least one), and forward passes that return float
// logits [samples, k] with the same k each time: one sample (evaluation
// mode), a training batch of batches[0] samples whose backward pass reaches
// the parameters, and an evaluation batch of each later size (without
// batches: a training pass on two samples). Inputs are float32, or int64
// token ids with `integer_inputs`. Returns the module's float32 parameters
// and buffers in bytes and k. Errors are InputErrors naming the file and
// the batch that failed.
TorchScriptFacts check_torchscript(const std::string& path, const std::vector<int64_t>& sample_shape,
                                   bool integer_inputs = false, const std::vector<int64_t>& batches = {});

}  // namespace gossipsim
