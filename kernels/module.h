// The kernels as the command line reaches them: kernels/ is built twice, as
// a static library that the tests and benchmarks link, and as a module
// (gossipsim-kernels.so, beside the gossipsim executable) that the command
// line loads at the first call of a function of kernels/torch_learner.h
// (kernels/loader/). LibTorch takes 0.7 s to load (2 s under
// AddressSanitizer) and most commands need none of it: a refusal of bad
// input, `plot`, `sweep`'s own process, `net replay`, a run with --kernels
// none and model_bytes set. The module exports this one function; its
// table holds the functions of kernels/torch_learner.h.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/torch_learner.h"

namespace gossipsim {

struct KernelsModule {
  // Changes whenever this table does: a module left from another build is
  // refused rather than called through a table of another shape.
  static constexpr int kAbi = 1;
  int abi;
  std::unique_ptr<LearnerFactory> (*make_torch_factory)(const WorkloadSpec&, uint64_t, int64_t);
  std::unique_ptr<PartLearner> (*make_part_learner)(LearnerFactory&, int, const std::vector<NodeId>&);
  std::vector<float> (*snapshot_values)(const ModelSnapshot&);
  int64_t (*model_state_bytes)(const WorkloadSpec&);
  bool (*torch_has_cuda)();
  nlohmann::json (*kernel_provenance)(const WorkloadSpec&);
};

}  // namespace gossipsim

// The module's one exported symbol.
extern "C" const gossipsim::KernelsModule* gossipsim_kernels_module();
