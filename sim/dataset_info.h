// What a workload's data hold: as published (the sizes of Fashion-MNIST and
// CIFAR-100, the spec itself for synthetic data and data files), for what a
// run needs before or without loading them (a model's size, an epoch's
// length). input/data_files.h reads what the files themselves hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace gossipsim {

struct DatasetInfo {
  int64_t train = 0, test = 0;  // samples in the files
  int classes = 0;
  std::vector<int64_t> sample_shape;
  bool integer_inputs = false;  // int64 inputs (token ids) rather than float32
  // A data file of tensors that does not say its classes: they are its
  // largest label + 1, found at `largest_label_at`.
  bool classes_from_labels = false;
  std::string largest_label_at;
};

// What the dataset of `w` holds as published (Fashion-MNIST 60,000 + 10,000
// samples of 1x28x28 in 10 classes; CIFAR-100 50,000 + 10,000 of 3x32x32 in
// 100 classes, or 20 coarse ones; synthetic data as specified), without
// reading a file: what a timeline-only run and the model's size need.
DatasetInfo published_dataset(const WorkloadSpec& w);

}  // namespace gossipsim
