// What a workload's data files hold, found without loading them: file
// headers for Fashion-MNIST (IDX, gzipped or plain) and file sizes for
// CIFAR-100, the readers kernels/ installs for files only LibTorch reads,
// split files. `validate` and `run` check a scenario against them before
// anything is built, so that a missing data folder, a sample count larger
// than the data or more shards than classes are refused the same way by
// both, with the scenario's file and JSON path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/dataset_info.h"

namespace gossipsim {

struct Scenario;
class JsonReader;

// Files that only LibTorch reads: a data file of tensors (torch.save) and a
// TorchScript module. kernels/ installs the readers (kernels/torch_learner.cc)
// in every program that links it, and the command line, which loads kernels/
// as a module (kernels/module.h), readers that load it first; without them a
// scenario naming such a file is refused in one line.
struct TorchFileReaders {
  // What the data file holds; an InputError naming the file otherwise.
  TensorFileFacts (*data)(const std::string& path) = nullptr;
  // Loads the module, checks its parameters and its forward pass on samples
  // of `data`: one sample, then a training batch of batches[0] samples
  // (forward and backward) and an evaluation batch of each size after it;
  // returns its size and the logits it gives per sample.
  TorchScriptFacts (*model)(const std::string& path, const DatasetInfo& data,
                            const std::vector<int64_t>& batches) = nullptr;
};
void install_torch_file_readers(const TorchFileReaders& readers);
const TorchFileReaders& torch_file_readers();

// Reads /workload's files as parse_workload finds them: the path at `key` of
// `r`, resolved beside the scenario file, must exist; it is recorded as an
// input (a resume checks its digest).
std::string named_file(const JsonReader& r, const std::string& key, const std::string& what);

// A split file (/workload/partition {"kind": "file"}): one line per training
// sample, in sample order, naming its node as n<id> or <id>; blank lines,
// lines starting with # and a first line "node" are skipped. Each error names
// the file and the line. `r` is /workload/partition, for errors to say what
// named the file.
std::vector<int> read_split_file(const JsonReader& r, const std::string& path, int nodes);

// The data of `w` as its files hold them; InputError naming `file` and
// /workload/data_dir when the files are missing or not of their format.
DatasetInfo inspect_dataset(const WorkloadSpec& w, const std::string& file);

// Checks the scenario's sizes against its data: /workload/train_samples and
// /eval/test_samples (when given) within the data, at least one training
// sample per node, /workload/partition/classes_per_node within the classes
// and one sample per shard, a split file with one line per training sample
// and at least one sample for every node.
void check_against_data(const Scenario& sc, const DatasetInfo& data);

// The data files the scenario names through /workload/data_dir (none when it
// uses the default folder or synthetic data), for a resume to check.
std::vector<std::string> named_data_files(const WorkloadSpec& w);

}  // namespace gossipsim
