// Datasets held in memory once and shared by every node.
//
// Images are float tensors [N, C, H, W] already normalised with the
// dataset's per-channel mean and std; vectors (synthetic) are [N, D].
// Labels are int64 [N]. Loading errors are InputErrors naming the file.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace gossipsim {

struct Dataset {
  torch::Tensor inputs;  // float32, normalised; or int64 token ids (a data file of tensors)
  torch::Tensor labels;  // int64
  int classes = 0;
  bool augment = false;  // CIFAR: random crop (pad 4) and horizontal flip on training batches

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  std::vector<int64_t> sample_shape() const;
  // Keeps the first n samples (n <= size); the rest is released.
  void truncate(int64_t n);
};

struct DataPair {
  Dataset train, test;
  bool classes_given = true;  // a data file of tensors without "classes": its largest label + 1
};

// Fashion-MNIST from gzipped (or plain) IDX files: train-images-idx3-ubyte.gz,
// train-labels-idx1-ubyte.gz, t10k-*. Debian's dataset-fashion-mnist installs
// them in /usr/share/datasets/fashion-mnist.
DataPair load_fashion_mnist(const std::string& dir);

// CIFAR-100 binary version: train.bin and test.bin, records of
// <coarse label byte><fine label byte><3072 pixel bytes, R, G, B planes>.
DataPair load_cifar100(const std::string& dir, bool coarse_labels);

// Reads one IDX file (magic 0x00000803 images or 0x00000801 labels), gzip or plain.
torch::Tensor read_idx(const std::string& path);

// A data file of tensors written by Python's torch.save: a dict with float
// tensors x_train [N, ...] and x_test [M, ...] (one to three dimensions per
// sample, the same for both; or integer token ids, kept as int64, for a
// TorchScript model that embeds them), int labels y_train [N] and y_test [M], and
// optionally an int `classes` (default: the largest label plus one). Inputs
// are used as they are (normalise them in Python). Read with LibTorch's own
// unpickler; every error is an InputError naming the file and the key. The
// last file read is kept (shared, never copied), so that reading a scenario
// and then running it reads the file once.
std::shared_ptr<const DataPair> load_tensor_file(const std::string& path);

// Class prototypes plus Gaussian noise; a seeded, learnable toy problem.
DataPair make_synthetic(const SyntheticSpec& spec, uint64_t seed);

}  // namespace gossipsim
