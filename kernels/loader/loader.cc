// The functions of kernels/torch_learner.h in the gossipsim executable: each
// forwards to the module (kernels/module.h), loaded at the first call from
// the executable's own folder. The module resolves what it uses of base/,
// sim/ and input/ against the executable, which exports them: one copy of
// each in the process.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

#include "input/data_files.h"
#include "kernels/module.h"

namespace gossipsim {

namespace {

std::string module_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot find the gossipsim executable (/proc/self/exe): {}", ec.message()));
  return (exe.parent_path() / GOSSIPSIM_KERNELS_MODULE).string();
}

const KernelsModule& kernels() {
  static const KernelsModule* table = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = module_path();
    // Global: the module's libraries (LibTorch, the BLAS, oneDNN) are then
    // found by name, as kernels/blas.h and the provenance look them up.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      throw std::runtime_error(
          fmt::format("cannot load the kernels (LibTorch): {} (rebuild, or run with --kernels none)", ::dlerror()));
    auto entry = reinterpret_cast<const KernelsModule* (*)()>(::dlsym(handle, "gossipsim_kernels_module"));
    if (!entry)
      throw std::runtime_error(fmt::format("cannot load the kernels: {} has no gossipsim_kernels_module", path));
    const KernelsModule* t = entry();
    if (t->abi != KernelsModule::kAbi)
      throw std::runtime_error(
          fmt::format("cannot load the kernels: {} is from another build (table {}, expected {}); rebuild", path,
                      t->abi, KernelsModule::kAbi));
    table = t;  // never unloaded: LibTorch's state lives until the process ends
  });
  return *table;
}

// The readers of files only LibTorch reads (input/data_files.h): loading
// the module installs its own in their place (kernels/torch_learner.cc), so
// these ask again once it is loaded.
TensorFileFacts tensor_file_facts(const std::string& path);
TorchScriptFacts torchscript_facts(const std::string& path, const DatasetInfo& data,
                                   const std::vector<int64_t>& batches);

const TorchFileReaders& loaded_readers() {
  kernels();
  const TorchFileReaders& r = torch_file_readers();
  if (r.data == &tensor_file_facts || r.model == &torchscript_facts)
    throw std::runtime_error("cannot load the kernels: the module installed no readers of tensor files");
  return r;
}

TensorFileFacts tensor_file_facts(const std::string& path) { return loaded_readers().data(path); }
TorchScriptFacts torchscript_facts(const std::string& path, const DatasetInfo& data,
                                   const std::vector<int64_t>& batches) {
  return loaded_readers().model(path, data, batches);
}

[[maybe_unused]] const bool readers_installed =
    (install_torch_file_readers({&tensor_file_facts, &torchscript_facts}), true);

}  // namespace

std::unique_ptr<LearnerFactory> make_torch_factory(const WorkloadSpec& spec, uint64_t seed, int64_t test_samples) {
  return kernels().make_torch_factory(spec, seed, test_samples);
}

std::unique_ptr<PartLearner> make_part_learner(LearnerFactory& torch_factory, int nodes,
                                               const std::vector<NodeId>& held) {
  return kernels().make_part_learner(torch_factory, nodes, held);
}

std::vector<float> snapshot_values(const ModelSnapshot& snapshot) { return kernels().snapshot_values(snapshot); }

int64_t model_state_bytes(const WorkloadSpec& spec) { return kernels().model_state_bytes(spec); }

bool torch_has_cuda() { return kernels().torch_has_cuda(); }

nlohmann::json kernel_provenance(const WorkloadSpec& spec) { return kernels().kernel_provenance(spec); }

}  // namespace gossipsim
