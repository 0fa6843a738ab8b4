// What each node trains, as plain data (no LibTorch), read from /workload.
// kernels/ turns it into datasets, models and a Learner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/enum_names.h"

namespace gossipsim {

// /workload/dataset: Fashion-MNIST (Debian's files or data_dir), CIFAR-100's
// binary files (data_dir), synthetic data (/workload/synthetic), or a data
// file of tensors, given as {"tensors": FILE} (scripts/export-workload).
enum class DatasetKind { kFashionMnist, kCifar100, kSynthetic, kTensors };
inline const EnumNames<DatasetKind>& dataset_names() {
  static const EnumNames<DatasetKind> names{{"fashion-mnist", DatasetKind::kFashionMnist},
                                            {"cifar100", DatasetKind::kCifar100},
                                            {"synthetic", DatasetKind::kSynthetic},
                                            {"tensors", DatasetKind::kTensors}};
  return names;
}
inline const std::string& dataset_name(DatasetKind d) { return name_of(d, dataset_names()); }

struct PartitionSpec {
  enum class Kind { kIid, kDirichlet, kShards, kFile } kind = Kind::kIid;
  double alpha = 0.5;        // dirichlet concentration, > 0; small = strong label skew
  int classes_per_node = 2;  // shards: classes each node holds
  std::string path;          // file: the split file, as resolved (beside the scenario)
  std::vector<int> nodes;    // file: the node of each training sample, in sample order
  // node: the kind draws each node's share. region: it draws each region's
  // share (as if the region were one node), and a region's share is dealt
  // out IID among its nodes, so that data are skewed by region and alike
  // within one (not with kind file).
  enum class By { kNode, kRegion } by = By::kNode;
  std::vector<int> region_of;  // by region: each node's region (region_ids of the topology), set once it is built
};
inline const EnumNames<PartitionSpec::By>& partition_by_names() {
  static const EnumNames<PartitionSpec::By> names{{"node", PartitionSpec::By::kNode},
                                                  {"region", PartitionSpec::By::kRegion}};
  return names;
}
inline const EnumNames<PartitionSpec::Kind>& partition_names() {
  static const EnumNames<PartitionSpec::Kind> names{{"iid", PartitionSpec::Kind::kIid},
                                                    {"dirichlet", PartitionSpec::Kind::kDirichlet},
                                                    {"shards", PartitionSpec::Kind::kShards},
                                                    {"file", PartitionSpec::Kind::kFile}};
  return names;
}

// resnet20's normalization layers: batch norm (the default) or group norm.
enum class Norm { kBatch, kGroup };
inline const EnumNames<Norm>& norm_names() {
  static const EnumNames<Norm> names{{"batch", Norm::kBatch}, {"group", Norm::kGroup}};
  return names;
}

struct ModelSpec {
  std::string name = "cnn";             // mlp | cnn | cnn-wide | resnet20 | torchscript
  std::vector<int64_t> hidden = {128};  // mlp: hidden layer widths
  Norm norm = Norm::kBatch;             // resnet20
  std::string torchscript;              // torchscript: the module file, as resolved (beside the scenario)
  int64_t state_bytes = 0;              // torchscript: float32 parameters and buffers, found when it was read
};

struct SyntheticSpec {
  int classes = 10;
  std::vector<int64_t> shape = {1, 28, 28};  // one sample; {D} for vectors
  int64_t train = 6000, test = 1000;         // samples
  double noise = 1.0;                        // std around each class prototype (prototypes have std 1)
};

struct LrSchedule {
  enum class Kind { kConstant, kStep, kCosine } kind = Kind::kConstant;
  double every_epochs = 1;  // step: multiply by gamma every this many local epochs
  double gamma = 0.1;       // step
  double epochs = 10;       // cosine: local epochs to reach 0
};
inline const EnumNames<LrSchedule::Kind>& schedule_names() {
  static const EnumNames<LrSchedule::Kind> names{{"constant", LrSchedule::Kind::kConstant},
                                                 {"step", LrSchedule::Kind::kStep},
                                                 {"cosine", LrSchedule::Kind::kCosine}};
  return names;
}

// Where the kernels run: the CPU (default) or a CUDA device.
enum class Device { kCpu, kCuda };
inline const EnumNames<Device>& device_names() {
  static const EnumNames<Device> names{{"cpu", Device::kCpu}, {"cuda", Device::kCuda}};
  return names;
}

struct OptimizerSpec {
  double lr = 0.05;           // learning rate
  double momentum = 0.0;      // heavy-ball momentum (PyTorch's SGD convention), [0, 1)
  double weight_decay = 0.0;  // L2 coefficient added to the gradient
  LrSchedule schedule;
};

// The models the registry in kernels/models.h builds.
inline const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "cnn", "cnn-wide", "resnet20"};
  return names;
}

// Where Debian's dataset-fashion-mnist installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// What a data file of tensors holds (/workload/dataset {"tensors": ...}),
// found when the scenario was read.
struct TensorFileFacts {
  int64_t train = 0, test = 0;
  int classes = 0;
  std::vector<int64_t> shape;   // one sample
  bool integer_inputs = false;  // token ids (int64), for a TorchScript model's embedding
  bool classes_given = false;   // the file says its classes; else they are the largest label + 1
  int64_t largest_label = 0;
  std::string largest_label_at;  // where it is, e.g. "y_train sample 17"
};

// What a TorchScript model is, found when the scenario is read.
struct TorchScriptFacts {
  int64_t state_bytes = 0;  // float32 parameters and buffers
  int64_t outputs = 0;      // logits per sample
};

// Evaluations run the test samples through a model in chunks of this many
// (the last chunk holds the rest), so a model is checked on these sizes.
inline constexpr int64_t kEvaluationChunk = 128;

struct WorkloadSpec {
  DatasetKind dataset = DatasetKind::kFashionMnist;
  std::string data_dir;        // default: /usr/share/datasets/fashion-mnist for fashion-mnist
  std::string data_file;       // tensors: the file, as resolved (beside the scenario)
  TensorFileFacts data_facts;  // tensors
  bool coarse_labels = false;  // cifar100: 20 superclasses instead of 100 classes
  int64_t train_samples = 0;   // keep only the first n training samples (0: all)
  SyntheticSpec synthetic;
  ModelSpec model;
  int64_t batch = 32;  // mini-batch size per node iteration
  OptimizerSpec optimizer;
  PartitionSpec partition;
  int64_t model_bytes = 0;  // bytes of one model on the wire; 0: the model's parameters
                            // and buffers as float32 (needed with --kernels none
                            // only when built without LibTorch)
  Device device = Device::kCpu;
  int workers = 1;   // threads stepping nodes concurrently (results do not depend on it)
  bool fuse = true;  // run many nodes' steps and evaluations as one stacked computation
                     // where the model allows it (kernels/fusion.h); results do not depend on it
};

}  // namespace gossipsim
