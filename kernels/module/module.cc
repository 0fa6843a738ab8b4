#include "kernels/module.h"

extern "C" const gossipsim::KernelsModule* gossipsim_kernels_module() {
  using namespace gossipsim;
  static const KernelsModule table{KernelsModule::kAbi, &make_torch_factory, &make_part_learner, &snapshot_values,
                                   &model_state_bytes,  &torch_has_cuda,     &kernel_provenance};
  return &table;
}
