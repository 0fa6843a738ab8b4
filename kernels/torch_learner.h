// The LibTorch side of a run: loads a workload's data once and makes
// Learners that train real models. This header does not include LibTorch,
// so the command line and the runner use it without depending on it.
//
// Threads: intra-op parallelism is one thread. With `workers` > 1 every node
// has a chain on a pool of `workers` threads (kernels/node_chains.h): steps,
// snapshots, merges and evaluations of a node run in the order the event loop
// asked for them, different nodes' side by side, each on a module of its own. The
// event loop waits for no step, snapshot, merge or evaluation (a merge waits
// for its snapshot on the receiver's chain; an evaluation is a copy on each
// chain); it waits for all chains only before an all-reduce. A node's
// results are therefore bit-identical whatever the worker count.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/learner.h"
#include "sim/workload.h"

namespace gossipsim {

std::unique_ptr<LearnerFactory> make_torch_factory(const WorkloadSpec& spec, uint64_t seed, int64_t test_samples);

// The parameters a snapshot holds, in the order of the model's parameters().
std::vector<float> snapshot_values(const ModelSnapshot& snapshot);

// Bytes of one model of the workload (float32 parameters and buffers),
// computed from the dataset's sample shape without loading any data.
int64_t model_state_bytes(const WorkloadSpec& spec);

// Whether this LibTorch build can use CUDA devices.
bool torch_has_cuda();

// What the kernels of `spec` run on, for a result's provenance
// (analysis/provenance.h): libtorch (its version, and Debian's package
// version where it is installed from the archive), blas (kernels/blas.h),
// intra_op_threads, workers. Sets the BLAS to one thread first.
nlohmann::json kernel_provenance(const WorkloadSpec& spec);

}  // namespace gossipsim
