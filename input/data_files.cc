#include "input/data_files.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/json_reader.h"
#include "sim/scenario.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

// The first dimension of an IDX file (gzipped or plain), from its header.
int64_t idx_count(const std::string& dir, const std::string& stem, const std::string& file, int want_dims) {
  fs::path path;
  for (const char* ext : {".gz", ""})
    if (fs::is_regular_file(fs::path(dir) / (stem + ext))) {
      path = fs::path(dir) / (stem + ext);
      break;
    }
  if (path.empty())
    throw InputError(
        file, "/workload/data_dir",
        fmt::format("expected a folder holding {}.gz ({} has no such file; install Debian's dataset-fashion-mnist "
                    "or give the folder)",
                    stem, dir));
  unsigned char header[8];
  gzFile f = gzopen(path.c_str(), "rb");
  int n = f ? gzread(f, header, sizeof header) : -1;
  if (f) gzclose(f);
  if (n != static_cast<int>(sizeof header))
    throw InputError(path.string(), "header", "expected an IDX file (gzipped or plain) with its 8-byte header");
  const uint32_t magic =
      (uint32_t(header[0]) << 24) | (uint32_t(header[1]) << 16) | (uint32_t(header[2]) << 8) | header[3];
  if (magic != 0x0800u + static_cast<uint32_t>(want_dims))
    throw InputError(path.string(), "header",
                     fmt::format("expected IDX magic 0x{:08x}, got 0x{:08x}", 0x0800 + want_dims, magic));
  return (int64_t(header[4]) << 24) | (int64_t(header[5]) << 16) | (int64_t(header[6]) << 8) | header[7];
}

int64_t cifar_records(const std::string& dir, const std::string& name, const std::string& file) {
  const fs::path p = fs::path(dir) / name;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    throw InputError(
        file, "/workload/data_dir",
        fmt::format("expected a folder holding CIFAR-100's {} ({} not found; download cifar-100-binary.tar.gz "
                    "and unpack it)",
                    name, p.string()));
  const uintmax_t size = fs::file_size(p, ec);
  constexpr uintmax_t kRecord = 2 + 3072;
  if (ec || size == 0 || size % kRecord != 0)
    throw InputError(p.string(), "", fmt::format("expected a whole number of {}-byte CIFAR-100 records", kRecord));
  return static_cast<int64_t>(size / kRecord);
}

}  // namespace

DatasetInfo inspect_dataset(const WorkloadSpec& w, const std::string& file) {
  DatasetInfo d = published_dataset(w);
  if (w.dataset == DatasetKind::kFashionMnist) {
    const std::string dir = w.data_dir.empty() ? kFashionMnistDir : w.data_dir;
    d.train = idx_count(dir, "train-images-idx3-ubyte", file, 3);
    d.test = idx_count(dir, "t10k-images-idx3-ubyte", file, 3);
    if (idx_count(dir, "train-labels-idx1-ubyte", file, 1) != d.train ||
        idx_count(dir, "t10k-labels-idx1-ubyte", file, 1) != d.test)
      throw InputError(dir, "", "expected as many labels as images in Fashion-MNIST's files");
  } else if (w.dataset == DatasetKind::kCifar100) {
    d.train = cifar_records(w.data_dir, "train.bin", file);
    d.test = cifar_records(w.data_dir, "test.bin", file);
  }
  return d;
}

std::vector<std::string> named_data_files(const WorkloadSpec& w) {
  std::vector<std::string> files;
  if (w.data_dir.empty() || w.dataset == DatasetKind::kSynthetic) return files;
  std::vector<std::string> names = {"train.bin", "test.bin"};
  if (w.dataset == DatasetKind::kFashionMnist)
    names = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  for (const std::string& n : names)
    for (const char* ext : {"", ".gz"})
      if (fs::is_regular_file(fs::path(w.data_dir) / (n + ext)))
        files.push_back((fs::path(w.data_dir) / (n + ext)).string());
  return files;
}

namespace {
TorchFileReaders& readers() {
  static TorchFileReaders r;
  return r;
}
}  // namespace

void install_torch_file_readers(const TorchFileReaders& r) { readers() = r; }
const TorchFileReaders& torch_file_readers() { return readers(); }

std::string named_file(const JsonReader& r, const std::string& key, const std::string& what) {
  fs::path path = r.string(key);
  if (path.empty()) r.fail(key, "the path of " + what);
  if (path.is_relative() && !r.file().empty()) path = fs::path(r.file()).parent_path() / path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) r.fail(key, what + " (" + path.string() + " not found)");
  r.note_input(key, path.string());
  return path.string();
}

std::vector<int> read_split_file(const JsonReader& r, const std::string& path, int nodes) {
  constexpr int64_t kMostLines = 100'000'000;
  std::error_code ec;
  if (fs::file_size(path, ec) > uintmax_t(16) * kMostLines)
    throw r.inside_named_file(InputError(path, "", "expected at most 100,000,000 lines of node ids"), "path",
                              "split file");
  std::ifstream in(path, std::ios::binary);
  std::vector<int> out;
  std::string line;
  int64_t number = 0;
  auto fail = [&](const std::string& expected) {
    throw r.inside_named_file(InputError(path, fmt::format("line {}", number), expected), "path", "split file");
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    const size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t");
    line = b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
    if (line.empty() || line[0] == '#' || (out.empty() && line == "node")) continue;
    const std::string digits = line[0] == 'n' ? line.substr(1) : line;
    int64_t id = -1;
    if (!digits.empty() && digits.size() <= 9 && digits.find_first_not_of("0123456789") == std::string::npos)
      id = std::stoll(digits);
    if (id < 0 || id >= nodes) {
      // Echoed printable: a binary file given by mistake must not garble the line.
      std::string shown = line.size() > 40 ? line.substr(0, 40) + "..." : line;
      for (char& c : shown)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
      fail(fmt::format("expected a node id, n0..n{} (or 0..{}), got '{}'", nodes - 1, nodes - 1, shown));
    }
    if (static_cast<int64_t>(out.size()) == kMostLines) fail("expected at most 100,000,000 training samples");
    out.push_back(static_cast<int>(id));
  }
  if (out.empty())
    throw r.inside_named_file(InputError(path, "", "expected one node id per training sample; found none"), "path",
                              "split file");
  return out;
}

void check_against_data(const Scenario& sc, const DatasetInfo& data) {
  const WorkloadSpec& w = sc.workload;
  if (w.train_samples > data.train)
    throw InputError(
        sc.file, "/workload/train_samples",
        fmt::format("expected at most the {} training samples of {}", data.train, dataset_name(w.dataset)));
  if (sc.eval.test_samples && *sc.eval.test_samples > data.test)
    throw InputError(
        sc.file, "/eval/test_samples",
        fmt::format("expected at most the {} test samples of {} (0: all of them)", data.test, dataset_name(w.dataset)));
  const int64_t train = w.train_samples > 0 ? w.train_samples : data.train;
  const int64_t nodes = sc.topology.node_count();
  if (train < nodes)
    throw InputError(
        sc.file, w.train_samples > 0 ? "/workload/train_samples" : "/topology",
        fmt::format("expected at least one training sample per node ({} samples for {} nodes)", train, nodes));
  if (w.partition.kind == PartitionSpec::Kind::kShards) {
    if (w.partition.classes_per_node > data.classes)
      throw InputError(sc.file, "/workload/partition/classes_per_node",
                       fmt::format("expected at most the {} classes of {}", data.classes, dataset_name(w.dataset)));
    const auto& region_of = w.partition.region_of;
    const bool by_region = w.partition.by == PartitionSpec::By::kRegion;
    const int64_t holders = by_region ? *std::max_element(region_of.begin(), region_of.end()) + 1 : nodes;
    if (holders * w.partition.classes_per_node > train)
      throw InputError(sc.file, "/workload/partition/classes_per_node",
                       fmt::format("expected at most one shard per training sample ({} {} x {} shards > {} samples)",
                                   holders, by_region ? "regions" : "nodes", w.partition.classes_per_node, train));
  }
  if (w.partition.kind == PartitionSpec::Kind::kFile) {
    const auto& split = w.partition.nodes;
    if (static_cast<int64_t>(split.size()) != train)
      throw InputError(
          w.partition.path, "",
          fmt::format("expected one node id per training sample, {} lines (the file has {}) (in the split file "
                      "that {}: /workload/partition/path names)",
                      train, split.size(), sc.file));
    std::vector<int64_t> count(nodes, 0);
    for (int n : split) ++count[n];
    for (int64_t n = 0; n < nodes; ++n)
      if (count[n] == 0)
        throw InputError(w.partition.path, "",
                         fmt::format("expected at least one training sample for every node; n{} has none (in the split "
                                     "file that {}: /workload/partition/path names)",
                                     n, sc.file));
  }
}

}  // namespace gossipsim
