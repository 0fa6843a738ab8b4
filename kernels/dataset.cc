#include "kernels/dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "base/error.h"
#include "kernels/torch_error.h"

namespace gossipsim {

namespace fs = std::filesystem;

std::vector<int64_t> Dataset::sample_shape() const {
  auto s = inputs.sizes().vec();
  s.erase(s.begin());
  return s;
}

void Dataset::truncate(int64_t n) {
  if (n >= size()) return;
  inputs = inputs.narrow(0, 0, n).clone();
  labels = labels.narrow(0, 0, n).clone();
}

namespace {

std::string read_gz_or_plain(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!f) throw InputError(path, "", "expected a readable file");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  bool bad = n < 0;
  gzclose(f);
  if (bad) throw InputError(path, "", "expected a valid gzip stream");
  return out;
}

uint32_t big_endian(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint32_t(uint8_t(s[at + 3]));
}

std::string find_file(const std::string& dir, const std::string& stem, const std::string& package) {
  for (const char* ext : {".gz", ""}) {
    fs::path p = fs::path(dir) / (stem + ext);
    if (fs::exists(p)) return p.string();
  }
  throw InputError((fs::path(dir) / (stem + ".gz")).string(), "",
                   "expected the dataset file (missing; " + package + ")");
}

}  // namespace

torch::Tensor read_idx(const std::string& path) {
  std::string raw = read_gz_or_plain(path);
  if (raw.size() < 8) throw InputError(path, "header", "expected an IDX header");
  uint32_t magic = big_endian(raw, 0);
  int dims = magic & 0xff;
  if ((magic >> 8) != 0x08 || dims < 1 || dims > 4)
    throw InputError(path, "header",
                     fmt::format("expected IDX magic 0x0000080N of unsigned bytes, got 0x{:08x}", magic));
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (int d = 0; d < dims; ++d) {
    if (raw.size() < 8 + 4 * size_t(d)) throw InputError(path, "header", "expected an IDX header");
    shape.push_back(big_endian(raw, 4 + 4 * d));
    count *= shape.back();
  }
  size_t offset = 4 + 4 * size_t(dims);
  if (raw.size() != offset + size_t(count))
    throw InputError(path, "body",
                     fmt::format("expected {} bytes of data after the header, found {}", count, raw.size() - offset));
  auto t = torch::empty(shape, torch::kUInt8);
  std::memcpy(t.data_ptr<uint8_t>(), raw.data() + offset, count);
  return t;
}

DataPair load_fashion_mnist(const std::string& dir) {
  const std::string pkg = "install Debian's dataset-fashion-mnist, or give the folder in /workload/data_dir";
  auto images = [&](const std::string& stem) {
    auto t = read_idx(find_file(dir, stem, pkg));
    if (t.dim() != 3) throw InputError(stem, "", "expected an IDX file of images [N, 28, 28]");
    // In place: one float copy of the images, not three (60,000 images are 188 MB).
    return t.to(torch::kFloat32).div_(255.0).sub_(0.2860).div_(0.3530).unsqueeze(1);
  };
  auto labels = [&](const std::string& stem) { return read_idx(find_file(dir, stem, pkg)).to(torch::kInt64); };
  DataPair d;
  d.train.inputs = images("train-images-idx3-ubyte");
  d.train.labels = labels("train-labels-idx1-ubyte");
  d.test.inputs = images("t10k-images-idx3-ubyte");
  d.test.labels = labels("t10k-labels-idx1-ubyte");
  d.train.classes = d.test.classes = 10;
  if (d.train.labels.size(0) != d.train.inputs.size(0) || d.test.labels.size(0) != d.test.inputs.size(0))
    throw InputError(dir, "", "expected as many labels as images");
  return d;
}

DataPair load_cifar100(const std::string& dir, bool coarse_labels) {
  auto load = [&](const std::string& name) {
    fs::path p = fs::path(dir) / name;
    std::ifstream in(p, std::ios::binary);
    if (!in)
      throw InputError(p.string(), "",
                       "expected CIFAR-100 binary file (download cifar-100-binary.tar.gz and give its folder in "
                       "/workload/data_dir)");
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t rec = 2 + 3072;
    if (raw.empty() || raw.size() % rec != 0)
      throw InputError(p.string(), "", fmt::format("expected a whole number of {}-byte records", rec));
    int64_t n = raw.size() / rec;
    auto images = torch::empty({n, 3, 32, 32}, torch::kUInt8);
    auto labels = torch::empty({n}, torch::kInt64);
    for (int64_t i = 0; i < n; ++i) {
      const char* r = raw.data() + i * rec;
      int label = uint8_t(r[coarse_labels ? 0 : 1]);
      if (label >= (coarse_labels ? 20 : 100))
        throw InputError(p.string(), fmt::format("record {}", i), "expected a label in range");
      labels[i] = label;
      std::memcpy(images.data_ptr<uint8_t>() + i * 3072, r + 2, 3072);
    }
    Dataset d;
    auto mean = torch::tensor({0.5071, 0.4865, 0.4409}).view({1, 3, 1, 1});
    auto std = torch::tensor({0.2673, 0.2564, 0.2762}).view({1, 3, 1, 1});
    d.inputs = ((images.to(torch::kFloat32) / 255.0 - mean) / std).contiguous();
    d.labels = labels;
    d.classes = coarse_labels ? 20 : 100;
    return d;
  };
  DataPair d{load("train.bin"), load("test.bin")};
  d.train.augment = true;
  return d;
}

namespace {

DataPair read_tensor_file(const std::string& path) {
  constexpr uintmax_t kMostBytes = uintmax_t(16) << 30;
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "", "expected a readable file");
  if (size > kMostBytes) throw InputError(path, "", "expected a data file of at most 16 GiB");
  std::vector<char> raw(size);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(raw.data(), static_cast<std::streamsize>(size))) throw InputError(path, "", "expected a readable file");
  const std::string what = "expected a dict of tensors x_train, y_train, x_test, y_test written by torch.save";
  c10::IValue v;
  try {
    v = torch::pickle_load(raw);
  } catch (const std::exception& e) {
    throw InputError(path, "", fmt::format("{} (LibTorch: {})", what, torch_error_line(e.what())));
  }
  raw = {};
  if (!v.isGenericDict()) throw InputError(path, "", fmt::format("{}; found a {}", what, v.tagKind()));
  std::map<std::string, c10::IValue> entries;
  for (const auto& kv : v.toGenericDict()) {
    if (!kv.key().isString()) throw InputError(path, "", what + "; found a key that is not a string");
    const std::string key = kv.key().toStringRef();
    if (key != "x_train" && key != "y_train" && key != "x_test" && key != "y_test" && key != "classes")
      throw InputError(path, key, "unknown key; expected x_train, y_train, x_test, y_test and optionally classes");
    entries[key] = kv.value();
  }
  auto tensor = [&](const std::string& key, const std::string& expected) {
    auto it = entries.find(key);
    if (it == entries.end() || !it->second.isTensor())
      throw InputError(path, key,
                       fmt::format("expected {} ({})", expected,
                                   it == entries.end() ? "missing" : "found a " + it->second.tagKind()));
    return it->second.toTensor();
  };
  auto inputs = [&](const std::string& key) {
    auto x = tensor(key, "float inputs (or integer token ids) [samples, ...], one to three dimensions per sample");
    const bool ids = at::isIntegralType(x.scalar_type(), /*includeBool=*/false);
    if ((!x.is_floating_point() && !ids) || x.dim() < 2 || x.dim() > 4 || x.size(0) < 1)
      throw InputError(path, key,
                       fmt::format("expected float inputs (or integer token ids) [samples, ...] with one to "
                                   "three dimensions per sample and at least one sample; found {} {}",
                                   c10::toString(x.scalar_type()), fmt::format("{}", fmt::join(x.sizes(), "x"))));
    if (ids) return x.to(torch::kCPU, torch::kInt64).contiguous();
    x = x.to(torch::kCPU, torch::kFloat32).contiguous();
    if (!torch::isfinite(x).all().item<bool>())
      throw InputError(path, key, "expected finite inputs; found NaN or infinity");
    return x;
  };
  auto labels = [&](const std::string& key, int64_t n) {
    auto y = tensor(key, "integer labels [samples]");
    if (!at::isIntegralType(y.scalar_type(), /*includeBool=*/false) || y.dim() != 1 || y.size(0) != n)
      throw InputError(path, key,
                       fmt::format("expected integer labels [{}], one per input; found {} {}", n,
                                   c10::toString(y.scalar_type()), fmt::format("{}", fmt::join(y.sizes(), "x"))));
    return y.to(torch::kCPU, torch::kInt64).contiguous();
  };
  DataPair d;
  d.train.inputs = inputs("x_train");
  d.test.inputs = inputs("x_test");
  if (d.test.inputs.scalar_type() != d.train.inputs.scalar_type())
    throw InputError(path, "x_test",
                     fmt::format("expected inputs of x_train's kind, {}; found {}",
                                 d.train.inputs.is_floating_point() ? "float" : "integer token ids",
                                 d.test.inputs.is_floating_point() ? "float" : "integer token ids"));
  if (d.test.inputs.sizes().slice(1) != d.train.inputs.sizes().slice(1))
    throw InputError(
        path, "x_test",
        fmt::format("expected samples of the shape of x_train's, [{}]; found [{}]",
                    fmt::join(d.train.inputs.sizes().slice(1), ", "), fmt::join(d.test.inputs.sizes().slice(1), ", ")));
  d.train.labels = labels("y_train", d.train.inputs.size(0));
  d.test.labels = labels("y_test", d.test.inputs.size(0));
  int64_t classes = std::max(d.train.labels.max().item<int64_t>(), d.test.labels.max().item<int64_t>()) + 1;
  if (auto it = entries.find("classes"); it != entries.end()) {
    if (!it->second.isInt() || it->second.toInt() < 2 || it->second.toInt() > 100000)
      throw InputError(path, "classes", "expected an int in [2, 100000]");
    classes = it->second.toInt();
  }
  d.classes_given = entries.count("classes") > 0;
  for (const char* key : {"y_train", "y_test"}) {
    const auto& y = std::string(key) == "y_train" ? d.train.labels : d.test.labels;
    const int64_t lo = y.min().item<int64_t>(), hi = y.max().item<int64_t>();
    if (lo < 0 || hi >= classes)
      throw InputError(path, key,
                       fmt::format("expected labels in [0, {}) ({}); found {}", classes,
                                   entries.count("classes") ? "classes" : "from the largest label", lo < 0 ? lo : hi));
  }
  if (classes < 2) throw InputError(path, "y_train", "expected at least two classes");
  d.train.classes = d.test.classes = static_cast<int>(classes);
  return d;
}

}  // namespace

std::shared_ptr<const DataPair> load_tensor_file(const std::string& path) {
  static std::mutex mutex;
  static std::string last_key;
  static std::shared_ptr<const DataPair> last;
  std::error_code ec;
  const auto stamp = fs::last_write_time(path, ec).time_since_epoch().count();
  const std::string key = fmt::format("{}\n{}\n{}", fs::absolute(path).string(), stamp, fs::file_size(path, ec));
  std::lock_guard<std::mutex> lock(mutex);
  if (last && key == last_key) return last;
  last.reset();  // before reading the next, so that two are never held
  last = std::make_shared<const DataPair>(read_tensor_file(path));
  last_key = key;
  return last;
}

DataPair make_synthetic(const SyntheticSpec& spec, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  std::vector<int64_t> proto_shape = {spec.classes};
  proto_shape.insert(proto_shape.end(), spec.shape.begin(), spec.shape.end());
  auto prototypes = at::normal(0.0, 1.0, proto_shape, gen);
  auto make = [&](int64_t n) {
    Dataset d;
    d.labels = at::randint(spec.classes, {n}, gen, torch::kInt64);
    std::vector<int64_t> shape = {n};
    shape.insert(shape.end(), spec.shape.begin(), spec.shape.end());
    d.inputs = (prototypes.index_select(0, d.labels) + spec.noise * at::normal(0.0, 1.0, shape, gen)).contiguous();
    d.classes = spec.classes;
    return d;
  };
  DataPair d;
  d.train = make(spec.train);
  d.test = make(spec.test);
  return d;
}

}  // namespace gossipsim
