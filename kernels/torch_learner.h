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

// A learner that holds a run's nodes for a run spread over processes
// (ranks/): every process makes one for the run's nodes, from the same
// factory, keeping the rows of its own nodes, and asks it only for their
// operations. What it adds to
// Learner moves nodes' state in and out as bytes, so that the numbers of a
// node are those of the one-process run whatever process holds it.
class PartLearner : public Learner {
 public:
  // step() with the run's own count of steps asked for so far (this
  // process sees only its own nodes' steps): which nonfinite loss came
  // first is then decided across processes.
  virtual void step_numbered(NodeId n, Time at, uint64_t asked) = 0;
  // Has a snapshot posted to its node's chain, so that another thread may
  // wait for it (save_snapshot) while this one goes on.
  virtual void post_snapshot(const SnapshotPtr& s) = 0;
  // A snapshot whose bytes come later (from another process): merges into
  // it wait on their chains until fill_snapshot, which any thread may call.
  virtual SnapshotPtr incoming_snapshot() = 0;
  virtual void fill_snapshot(const SnapshotPtr& s, const std::string& bytes) = 0;
  // This process's share of an evaluation: the rows of `nodes` (and their
  // own models' accuracy and loss with per_node), and the first nonfinite
  // loss among the steps numbered below steps_before, as bytes once their
  // chains reach it. finish_parts() evaluates the whole from every share
  // (the nodes in the order given) as evaluate_async() would have.
  virtual std::shared_future<std::string> evaluate_part(const std::vector<NodeId>& nodes, bool per_node,
                                                        uint64_t steps_before) = 0;
  virtual Evaluation finish_parts(const std::vector<std::string>& parts, const std::vector<NodeId>& nodes,
                                  bool per_node) = 0;
  // Each node's parameters, momentum and buffers as bytes, once every
  // operation asked for has run, and back.
  virtual std::vector<std::string> rows(const std::vector<NodeId>& nodes) = 0;
  virtual void set_rows(const std::vector<NodeId>& nodes, const std::vector<std::string>& rows) = 0;
  // Seconds spent in kernels, training and evaluating, so far.
  virtual std::pair<double, double> kernel_split() const = 0;
};

// A PartLearner from a factory make_torch_factory made, keeping the rows of
// the `held` nodes only (every node's where empty): a rank's memory is its
// own nodes'. It must not be asked about the others.
std::unique_ptr<PartLearner> make_part_learner(LearnerFactory& torch_factory, int nodes,
                                               const std::vector<NodeId>& held = {});

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
