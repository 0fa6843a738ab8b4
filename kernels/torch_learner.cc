#include "kernels/torch_learner.h"

#include <ATen/Version.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>

#include "base/binary_io.h"
#include "base/error.h"
#include "input/data_files.h"
#include "kernels/allocator.h"
#include "kernels/blas.h"
#include "kernels/dataset.h"
#include "kernels/fusion.h"
#include "kernels/node_chains.h"
#include "kernels/node_store.h"
#include "kernels/partition.h"
#include "kernels/sgd.h"
#include "kernels/torch_error.h"

namespace gossipsim {

namespace {
// Filled on the sender's chain. As a gate it lets merges that need it wait
// on their own chains without holding a worker; `ready` lets any other
// thread wait for it.
struct TorchSnapshot : ModelSnapshot, NodeChains::Gate {
  std::shared_future<void> ready;
  torch::Tensor params, buffers;
  // Taken after a step that waits in the learner's open group of fused
  // steps: not posted yet. Whoever waits for it from the event loop's
  // thread has the group posted first (flush); workers never see it held.
  bool held = false;
  std::function<void()> flush;
  // A snapshot from another process (PartLearner::incoming_snapshot): set
  // by fill_snapshot, which then opens the gate on `chains`.
  std::shared_ptr<std::promise<void>> incoming;
  NodeChains* chains = nullptr;
  void wait() const {
    if (held && flush) flush();
    if (ready.valid()) ready.get();
  }
};

// Nodes' operations that run as one (a fused step or evaluation): each
// member's chain arrives at it, the last one runs it, and every chain goes
// on once it ran (the gate).
struct FusedGroup : NodeChains::Gate {
  std::atomic<int> remaining{0};
};
}  // namespace

bool torch_has_cuda() { return torch::cuda::is_available(); }

namespace {
// oneDNN, which runs LibTorch's convolutions: its version and the
// instruction set it chose on this CPU (uncapped, unlike ATen's: a cnn's
// numbers differ between an AVX2 and an AVX-512 machine). Asked through its
// C API as loaded; null where LibTorch was built without it.
nlohmann::json onednn_provenance() {
  struct Version {
    int major, minor, patch;
    const char* hash;
  };
  auto version = reinterpret_cast<const Version* (*)()>(::dlsym(RTLD_DEFAULT, "dnnl_version"));
  auto isa = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"));
  if (!version || !isa) return nullptr;
  const Version* v = version();
  const int value = isa();
  static const std::map<int, const char*> names = {{0x1, "sse41"},
                                                   {0x3, "avx"},
                                                   {0x7, "avx2"},
                                                   {0x27, "avx512_core"},
                                                   {0x67, "avx512_core_vnni"},
                                                   {0xe7, "avx512_core_bf16"},
                                                   {0x3e7, "avx512_core_amx"}};
  const auto name = names.find(value);
  return {{"version", fmt::format("{}.{}.{}", v->major, v->minor, v->patch)},
          {"isa", name != names.end() ? std::string(name->second) : fmt::format("{:#x}", value)}};
}
}  // namespace

nlohmann::json kernel_provenance(const WorkloadSpec& spec) {
  use_one_blas_thread();
  const BlasInfo b = blas_info();
  nlohmann::json blas = {{"name", b.name}, {"version", b.version}, {"threads", b.threads}, {"library", b.library}};
  if (!b.core.empty()) blas["core"] = b.core;
  // The vector instructions LibTorch's own kernels chose on this CPU (AVX2
  // is Debian's build's choice even where AVX-512 exists; ATEN_CPU_CAPABILITY
  // changes it): another set gives other last bits, like another BLAS.
  std::string capability = "unknown";
  const std::string config = at::show_config();
  const size_t at = config.find("CPU capability usage: ");
  if (at != std::string::npos) {
    const size_t from = at + std::string("CPU capability usage: ").size();
    capability = config.substr(from, config.find('\n', from) - from);
  }
  return {{"libtorch",
           {{"version", TORCH_VERSION},
            {"package", debian_package_version("libtorch1.13")},
            {"cpu_capability", capability},
            {"onednn", onednn_provenance()}}},
          {"blas", blas},
          {"intra_op_threads", 1},
          {"workers", std::max(1, spec.workers)},
          {"fuse", spec.fuse}};
}

namespace {
// The readers scenario parsing uses for files only LibTorch reads
// (input/data_files.h), installed in every program that links this file.
TensorFileFacts tensor_file_facts(const std::string& path) {
  auto d = load_tensor_file(path);
  TensorFileFacts f;
  f.train = d->train.size();
  f.test = d->test.size();
  f.classes = d->train.classes;
  f.shape = d->train.sample_shape();
  f.integer_inputs = d->train.inputs.scalar_type() == torch::kInt64;
  f.classes_given = d->classes_given;
  for (const auto& [name, set] : {std::pair<const char*, const Dataset*>{"y_train", &d->train}, {"y_test", &d->test}}) {
    const int64_t at = set->labels.argmax().item<int64_t>(), label = set->labels[at].item<int64_t>();
    if (f.largest_label_at.empty() || label > f.largest_label) {
      f.largest_label = label;
      f.largest_label_at = fmt::format("{} sample {}", name, at);
    }
  }
  return f;
}
TorchScriptFacts torchscript_facts(const std::string& path, const DatasetInfo& data,
                                   const std::vector<int64_t>& batches) {
  use_one_blas_thread();
  return check_torchscript(path, data.sample_shape, data.integer_inputs, batches);
}
[[maybe_unused]] const bool readers_installed =
    (install_torch_file_readers({&tensor_file_facts, &torchscript_facts}), true);
}  // namespace

std::vector<float> snapshot_values(const ModelSnapshot& snapshot) {
  const auto& s = static_cast<const TorchSnapshot&>(snapshot);
  s.wait();
  auto p = s.params.to(torch::kCPU).contiguous();
  return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

int64_t model_state_bytes(const WorkloadSpec& spec) {
  if (spec.model.name == "torchscript") return spec.model.state_bytes;
  const DatasetInfo data = published_dataset(spec);
  auto net = make_model(spec.model, data.sample_shape, data.classes);
  int64_t n = 0;
  for (const auto& p : net->parameters()) n += p.numel();
  for (const auto& b : float_buffers(*net)) n += b.numel();
  return 4 * n;
}

namespace {

struct Shared {
  WorkloadSpec spec;
  DataPair data;
  torch::Tensor test_inputs, test_labels;
  std::vector<int64_t> train_labels;
  uint64_t seed;
};

using Clock = std::chrono::steady_clock;

class TorchLearner : public PartLearner {
  // A step asked for and held in the open group of fused steps
  // (kernels/fusion.h; flush_group).
  struct PendingStep {
    NodeId node;
    uint64_t asked;
    Time at;
  };
  // An operation that a node in the open group asked for after its step.
  struct HeldOp {
    NodeId node;
    std::function<void()> fn;
    std::shared_ptr<TorchSnapshot> after;
  };
  // An evaluation under way: each node's rows copied on its chain (and its
  // own model evaluated there), the average model evaluated by the last.
  struct EvalJob {
    bool per_node = false;
    // A share of an evaluation across processes (evaluate_part): the rows
    // and results as bytes, instead of the evaluation.
    bool part = false;
    std::promise<std::string> part_promise;
    uint64_t steps_before = 0;  // steps asked for before it: their nonfinite losses count
    std::atomic<int> remaining{0};
    std::vector<torch::Tensor> params, buffers;   // each node's rows, copied on its chain
    std::vector<std::pair<double, double>> node;  // each node's accuracy and loss
    std::vector<int> groups;                      // each row's group; empty: none
    std::vector<NodeId> part_nodes;               // a share's nodes, in the order of its rows
    std::promise<Evaluation> promise;
    std::atomic<bool> settled{false};  // the promise is set (a failure may come after a result)
    void fail(std::exception_ptr e) {
      if (settled.exchange(true)) return;
      part ? part_promise.set_exception(e) : promise.set_exception(e);
    }
  };

 public:
  // `held`: the nodes whose rows this learner keeps (a rank of a run over
  // MPI ranks); empty: all of them. Partition and samplers are every node's,
  // so a node's data are the same whoever holds it.
  TorchLearner(std::shared_ptr<const Shared> shared, int nodes, const std::vector<NodeId>& held = {})
      : shared_(std::move(shared)),
        spec_(shared_->spec),
        device_(spec_.device == Device::kCuda ? torch::kCUDA : torch::kCPU),
        nodes_(nodes) {
    const Streams streams(shared_->seed);
    torch::manual_seed(streams.seed_for("model-init"));
    auto prototype = build_net();
    random_ = prototype->draws_random_numbers();
    row_of_.assign(nodes, held.empty() ? 0 : -1);
    for (NodeId n = 0; n < nodes; ++n)
      if (held.empty()) row_of_[n] = n;
    for (size_t k = 0; k < held.size(); ++k) row_of_.at(held[k]) = static_cast<int64_t>(k);
    // At least one row: the initial model and a snapshot's shape come from it.
    const int rows = held.empty() ? nodes : std::max<int>(1, static_cast<int>(held.size()));
    store_ = std::make_unique<NodeStore>(*prototype, rows, spec_.optimizer.momentum > 0);
    if (!device_.is_cpu()) {
      store_->params = store_->params.to(device_);
      store_->buffers = store_->buffers.to(device_);
      if (store_->momentum.defined()) store_->momentum = store_->momentum.to(device_);
    }
    const int workers = std::max(1, spec_.workers);
    initial_params_ = store_->params[0].clone();  // every node starts from the same model
    initial_buffers_ = store_->buffers[0].clone();
    views_.push_back(std::make_unique<ModuleView>(prototype, *store_));
    for (int w = 1; w < workers; ++w) views_.push_back(std::make_unique<ModuleView>(build_net(), *store_));
    for (auto& v : views_) free_views_.push_back(v.get());
    // Kernels on the workers use one intra-op thread each, like the caller.
    chains_ = std::make_unique<NodeChains>(nodes, workers, [] { at::set_num_threads(1); });

    Rng prng = streams.stream("partition");
    partition_ = make_partition(shared_->train_labels, shared_->data.train.classes, nodes, spec_.partition, prng);
    samplers_.resize(nodes);
    for (int n = 0; n < nodes; ++n) {
      samplers_[n].rng = streams.stream("sampler", n);
      samplers_[n].augment_rng = streams.stream("augment", n);
      samplers_[n].order = partition_[n];
      seeded_shuffle(samplers_[n].order, samplers_[n].rng);
    }
    // Fused steps where the model and every product a run meets allow them
    // (kernels/fusion.h); /workload/fuse false keeps per-node steps.
    const int64_t tests = shared_->test_labels.size(0);
    std::vector<int64_t> eval_rows = {std::min(tests, kEvaluationChunk)};
    if (tests > kEvaluationChunk && tests % kEvaluationChunk) eval_rows.push_back(tests % kEvaluationChunk);
    const Dataset& train = shared_->data.train;
    if (spec_.fuse && !random_ &&
        StackedMlp::supports(spec_, train.inputs[0].numel(), train.classes, train.augment, eval_rows)) {
      stacked_ = std::make_unique<StackedMlp>(*store_);
      in_group_.assign(nodes, -1);
    }
  }

  bool fused() const { return stacked_ != nullptr; }

  ~TorchLearner() override { chains_->join(); }  // first: its operations use everything else

  int node_count() const override { return nodes_; }
  Bytes model_bytes() const override {
    return bytes(spec_.model_bytes > 0 ? spec_.model_bytes : 4 * (store_->param_count() + store_->buffer_count()));
  }
  int64_t batch() const override { return spec_.batch; }
  int64_t train_size() const override { return shared_->data.train.size(); }
  double kernel_seconds() const override { return (kernel_ns_.load() + eval_ns_.load()) * 1e-9; }
  double evaluation_seconds() const override { return eval_ns_.load() * 1e-9; }
  std::vector<std::vector<int64_t>> label_histogram() const override {
    return gossipsim::label_histogram(partition_, shared_->train_labels, shared_->data.train.classes);
  }

  // Kernels run on each node's chain (see on_node): the event loop hands a
  // step over and goes on; it waits only where it needs a node's tensors.
  void step(NodeId n, Time at) override { step_numbered(n, at, asked_steps_); }
  void step_numbered(NodeId n, Time at, uint64_t asked) override {
    row(n);  // a node this learner holds, checked here rather than on a worker
    asked_steps_ = asked + 1;
    if (stacked_) {
      // Fused: the step waits in the open group, which a second step of
      // the same node, a full group, or anything that must see the steps
      // (an evaluation, a snapshot waited for, an average) posts.
      if (in_group_[n] >= 0) flush_group();
      in_group_[n] = static_cast<int>(group_.size());
      group_.push_back(PendingStep{n, asked, at});
      if (group_.size() >= kMostFused) flush_group();
      return;
    }
    on_node(n, [this, n, at, asked] {
      Timer t(kernel_ns_);
      const double loss = guarded([&] { return fmt::format("node {}'s training step {}", n, samplers_[n].steps + 1); },
                                  [&] { return run_step(*Lease(*this), n); });
      if (!std::isfinite(loss)) note_nonfinite(asked, NonFiniteLoss{n, samplers_[n].steps, at, loss});
    });
  }

  SnapshotPtr snapshot(NodeId n) override {
    auto s = std::make_shared<TorchSnapshot>();
    auto done = std::make_shared<std::promise<void>>();
    s->ready = done->get_future().share();
    if (stacked_ && in_group_[n] >= 0) {
      s->held = true;
      s->flush = [this] { flush_group(); };
      held_snapshots_.push_back(s);
    }
    on_node(n, [this, n, s, done] {
      std::exception_ptr error;
      try {
        Timer t(kernel_ns_);
        s->params = store_->params[row(n)].clone();
        s->buffers = store_->buffers[row(n)].clone();
      } catch (...) {
        error = std::current_exception();
      }
      error ? done->set_exception(error) : done->set_value();
      chains_->open(*s);  // merges waiting for it run, and rethrow its error
      if (error) std::rethrow_exception(error);
    });
    return s;
  }

  void merge(NodeId r, const SnapshotPtr& snap, double w_self, double w_other) override {
    // The snapshot may still be queued on its sender's chain: the merge waits
    // for it on the receiver's chain, never in the event loop.
    auto s = std::const_pointer_cast<TorchSnapshot>(std::static_pointer_cast<const TorchSnapshot>(snap));
    const double w = w_other / (w_self + w_other);
    on_node(
        r,
        [this, r = row(r), s, w] {
          s->wait();  // rethrows a failed snapshot
          Timer t(kernel_ns_);
          store_->params[r].mul_(1 - w).add_(s->params, w);
          if (store_->buffer_count() > 0) store_->buffers[r].mul_(1 - w).add_(s->buffers, w);
        },
        s);
  }

  void average(const std::vector<NodeId>& nodes) override {
    if (nodes.empty()) return;
    flush_group();
    chains_->drain();
    Timer t(kernel_ns_);
    torch::NoGradGuard guard;
    const bool all = static_cast<int>(nodes.size()) == node_count() && store_->node_count() == node_count();
    torch::Tensor index;  // only a subset needs one
    if (!all) index = torch::tensor(rows_of(nodes), torch::kInt64).to(device_);
    auto avg = [&](torch::Tensor& rows) {
      if (!rows.defined() || rows.size(1) == 0) return;
      if (all) return void(rows.copy_(rows.mean(0, true).expand_as(rows)));
      auto mean = rows.index_select(0, index).mean(0, true);
      rows.index_copy_(0, index, mean.expand({index.size(0), rows.size(1)}).contiguous());
    };
    avg(store_->params);
    avg(store_->momentum);
    avg(store_->buffers);
  }

  void reset_node(NodeId n, const std::vector<NodeId>& from) override {
    flush_group();
    chains_->drain();
    Timer t(kernel_ns_);
    torch::NoGradGuard guard;
    auto set = [&](torch::Tensor& rows, const torch::Tensor& initial) {
      if (!rows.defined() || rows.size(1) == 0) return;
      if (from.empty()) return void(rows[row(n)].copy_(initial));
      auto index = torch::tensor(rows_of(from), torch::kInt64).to(device_);
      rows[row(n)].copy_(rows.index_select(0, index).mean(0));
    };
    set(store_->params, initial_params_);
    set(store_->buffers, initial_buffers_);
    if (store_->momentum.defined()) store_->momentum[row(n)].zero_();
  }

  void set_evaluated(const std::vector<NodeId>& nodes) override { evaluated_ = nodes; }
  void set_groups(const std::vector<int>& groups) override { groups_ = groups; }

  // Every node's chain copies its rows (and evaluates its own model) where
  // the evaluation was asked for; the last to do so evaluates the average
  // model. The event loop does not wait, and workers never idle for it.
  // The copies are taken as chains reach them, so pending evaluations cost
  // memory only once their chains run.
  PendingEvaluation evaluate_async(bool per_node) override {
    flush_group();  // the steps asked for before it
    std::vector<NodeId> nodes = evaluated_;
    if (nodes.empty())
      for (NodeId i = 0; i < node_count(); ++i) nodes.push_back(i);
    auto job = std::make_shared<EvalJob>();
    job->per_node = per_node;
    job->steps_before = asked_steps_;
    if (groups_.size() == static_cast<size_t>(node_count()))
      for (NodeId i : nodes) job->groups.push_back(groups_[i]);
    PendingEvaluation result = job->promise.get_future().share();
    start_evaluation(nodes, job);
    return result;
  }

  std::shared_future<std::string> evaluate_part(const std::vector<NodeId>& nodes, bool per_node,
                                                uint64_t steps_before) override {
    flush_group();
    auto job = std::make_shared<EvalJob>();
    job->per_node = per_node;
    job->part = true;
    job->steps_before = steps_before;
    job->part_nodes = nodes;
    auto result = job->part_promise.get_future().share();
    start_evaluation(nodes, job);
    return result;
  }

  Evaluation finish_parts(const std::vector<std::string>& parts, const std::vector<NodeId>& nodes,
                          bool per_node) override {
    EvalJob job;
    job.per_node = per_node;
    std::map<NodeId, size_t> at;
    for (size_t k = 0; k < nodes.size(); ++k) at[nodes[k]] = k;
    job.params.resize(nodes.size());
    job.buffers.resize(nodes.size());
    job.node.resize(nodes.size());
    std::optional<std::pair<uint64_t, NonFiniteLoss>> first;
    for (const std::string& bytes : parts) {
      BinaryReader r(bytes, "an evaluation's share");
      const int64_t count = r.get<int64_t>();
      for (int64_t i = 0; i < count; ++i) {
        const auto k = at.find(static_cast<NodeId>(r.get<int64_t>()));
        if (k == at.end()) r.fail();
        job.params[k->second] = torch::empty_like(store_->params[0]);
        job.buffers[k->second] = torch::empty_like(store_->buffers[0]);
        get_tensor(r, job.params[k->second]);
        get_tensor(r, job.buffers[k->second]);
        job.node[k->second].first = r.get<double>();
        job.node[k->second].second = r.get<double>();
      }
      if (r.get<uint8_t>()) {
        const auto f = get_nonfinite(r);
        if (!first || f.first < first->first) first = f;
      }
      if (!r.at_end()) r.fail();
    }
    for (const auto& p : job.params) GOSSIPSIM_CHECK(p.defined(), "an evaluation's shares hold every node's rows");
    if (groups_.size() == static_cast<size_t>(node_count()))
      for (NodeId i : nodes) job.groups.push_back(groups_[i]);
    Evaluation e = summarize(job);
    if (first) e.nonfinite = first->second;
    return e;
  }

  void post_snapshot(const SnapshotPtr& snap) override {
    if (static_cast<const TorchSnapshot&>(*snap).held) flush_group();
  }

  SnapshotPtr incoming_snapshot() override {
    auto s = std::make_shared<TorchSnapshot>();
    s->incoming = std::make_shared<std::promise<void>>();
    s->ready = s->incoming->get_future().share();
    s->chains = chains_.get();
    return s;
  }

  void fill_snapshot(const SnapshotPtr& snap, const std::string& bytes) override {
    auto s = std::const_pointer_cast<TorchSnapshot>(std::static_pointer_cast<const TorchSnapshot>(snap));
    GOSSIPSIM_CHECK(s->incoming != nullptr, "fill_snapshot on a snapshot not made by incoming_snapshot");
    try {
      BinaryReader r(bytes, "a snapshot from another process");
      s->params = torch::empty_like(store_->params[0]);
      s->buffers = torch::empty_like(store_->buffers[0]);
      get_tensor(r, s->params);
      get_tensor(r, s->buffers);
      if (!r.at_end()) r.fail();
      s->incoming->set_value();
    } catch (...) {
      s->incoming->set_exception(std::current_exception());
    }
    s->chains->open(*s);
  }

  std::vector<std::string> rows(const std::vector<NodeId>& nodes) override {
    flush_group();
    chains_->drain();
    std::vector<std::string> out;
    for (NodeId n : nodes) {
      BinaryWriter w;
      for (torch::Tensor* t : {&store_->params, &store_->momentum, &store_->buffers})
        put_tensor(w, t->defined() ? (*t)[row(n)] : torch::Tensor());
      out.push_back(w.bytes());
    }
    return out;
  }

  void set_rows(const std::vector<NodeId>& nodes, const std::vector<std::string>& rows) override {
    GOSSIPSIM_CHECK(nodes.size() == rows.size(), "set_rows with a row per node");
    flush_group();
    chains_->drain();
    for (size_t k = 0; k < nodes.size(); ++k) {
      BinaryReader r(rows[k], "a node's rows");
      for (torch::Tensor* t : {&store_->params, &store_->momentum, &store_->buffers}) {
        torch::Tensor at = t->defined() ? (*t)[row(nodes[k])] : torch::Tensor();
        get_tensor(r, at);
      }
      if (!r.at_end()) r.fail();
    }
  }

  std::pair<double, double> kernel_split() const override { return {kernel_ns_.load() * 1e-9, eval_ns_.load() * 1e-9}; }

  std::string save_state() override {
    flush_group();
    chains_->drain();
    BinaryWriter w;
    w.put<uint32_t>(kStateMagic);
    w.put<int64_t>(node_count());
    w.put<uint64_t>(asked_steps_);
    {
      std::lock_guard<std::mutex> lock(nonfinite_mutex_);
      w.put<uint8_t>(first_nonfinite_ ? 1 : 0);
      if (first_nonfinite_) put_nonfinite(w, *first_nonfinite_);
    }
    for (torch::Tensor* t : {&store_->params, &store_->momentum, &store_->buffers}) put_tensor(w, *t);
    for (const Sampler& sm : samplers_) {
      w.put_string(rng_text(sm.rng));
      w.put_string(rng_text(sm.augment_rng));
      w.put_vector(sm.order);
      w.put<uint64_t>(sm.position);
      w.put<int64_t>(sm.steps);
    }
    return w.bytes();
  }

  void load_state(const std::string& bytes) override {
    flush_group();
    chains_->drain();
    BinaryReader r(bytes, "learner state");
    if (r.get<uint32_t>() != kStateMagic || r.get<int64_t>() != node_count()) r.fail();
    asked_steps_ = r.get<uint64_t>();
    {
      std::lock_guard<std::mutex> lock(nonfinite_mutex_);
      first_nonfinite_.reset();
      if (r.get<uint8_t>()) first_nonfinite_ = get_nonfinite(r);
    }
    for (torch::Tensor* t : {&store_->params, &store_->momentum, &store_->buffers}) get_tensor(r, *t);
    for (Sampler& sm : samplers_) {
      set_rng(sm.rng, r.get_string());
      set_rng(sm.augment_rng, r.get_string());
      sm.order = r.get_vector<int64_t>();
      sm.position = r.get<uint64_t>();
      sm.steps = r.get<int64_t>();
      if (sm.position > sm.order.size()) r.fail();
    }
    if (!r.at_end()) r.fail();
  }

  std::string save_snapshot(const ModelSnapshot& snapshot) override {
    const auto& s = static_cast<const TorchSnapshot&>(snapshot);
    s.wait();
    BinaryWriter w;
    put_tensor(w, s.params);
    put_tensor(w, s.buffers);
    return w.bytes();
  }

  SnapshotPtr load_snapshot(const std::string& bytes) override {
    auto s = std::make_shared<TorchSnapshot>();
    BinaryReader r(bytes, "snapshot");
    s->params = store_->params[0].clone();
    s->buffers = store_->buffers[0].clone();
    get_tensor(r, s->params);
    get_tensor(r, s->buffers);
    std::promise<void> done;
    done.set_value();
    s->ready = done.get_future().share();
    chains_->open(*s);
    return s;
  }

 private:
  static constexpr uint32_t kStateMagic = 0x67736c32;  // "gsl2": with the steps asked and the first nonfinite loss

  static void put_tensor(BinaryWriter& w, const torch::Tensor& t) {
    if (!t.defined()) {
      w.put<int64_t>(-1);
      return;
    }
    auto c = t.to(torch::kCPU).contiguous();
    w.put<int64_t>(c.numel());
    w.put_raw(c.data_ptr<float>(), c.numel() * sizeof(float));
  }
  // Into a tensor of the same size, in place (it keeps its device).
  static void get_tensor(BinaryReader& r, torch::Tensor& t) {
    const int64_t n = r.get<int64_t>();
    if (!t.defined()) {
      if (n != -1) r.fail();
      return;
    }
    if (n != t.numel()) r.fail();
    auto c = torch::empty({n}, torch::kFloat32);
    r.get_raw(c.data_ptr<float>(), n * sizeof(float));
    t.copy_(c.view(t.sizes()));
  }
  static std::string rng_text(const Rng& rng) {
    std::ostringstream out;
    out << rng;
    return out.str();
  }
  static void set_rng(Rng& rng, const std::string& text) {
    std::istringstream in(text);
    in >> rng;  // sets failbit at the end of the text even when it read the state whole
    if (rng_text(rng) != text) throw InputError("learner state", "", "expected a random stream's state");
  }

  struct Sampler {
    Rng rng, augment_rng;
    std::vector<int64_t> order;
    size_t position = 0;
    int64_t steps = 0;
  };

  struct Timer {
    std::atomic<int64_t>& sink;
    Clock::time_point start = Clock::now();
    explicit Timer(std::atomic<int64_t>& s) : sink(s) {}
    ~Timer() { sink += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count(); }
  };

  // The row of node n in the store (a learner that holds only some nodes
  // is never asked about the others).
  int64_t row(NodeId n) const {
    const int64_t r = row_of_.at(n);
    GOSSIPSIM_CHECK(r >= 0, "a learner asked about a node it does not hold");
    return r;
  }
  std::vector<int64_t> rows_of(const std::vector<NodeId>& nodes) const {
    std::vector<int64_t> out;
    for (NodeId n : nodes) out.push_back(row(n));
    return out;
  }

  std::shared_ptr<Net> build_net() {
    auto net = make_model(spec_.model, shared_->data.train.sample_shape(), shared_->data.train.classes);
    net->to(device_);
    return net;
  }

  // Runs fn on node n's chain (kernels/node_chains.h), after `after` is
  // taken when there is one. With fused steps, an operation of a node whose
  // step waits in the open group waits there too, after the step; one that
  // needs a snapshot still held in the group has the group posted first.
  void on_node(NodeId n, std::function<void()> fn, std::shared_ptr<TorchSnapshot> after = nullptr) {
    row(n);  // a node this learner holds
    if (stacked_) {
      if (in_group_[n] >= 0) {
        held_.push_back(HeldOp{n, std::move(fn), std::move(after)});
        return;
      }
      if (after && after->held) flush_group();
    }
    chains_->post(n, std::move(fn), std::move(after));
  }

  // Posts the open group: a fused step per slice of it (one slice per
  // worker, so that they run side by side), then what each member asked
  // for after its step, in order. Which steps are fused depends only on the
  // order the event loop asked for them, never on threads; and a fused
  // step gives each node the numbers its own step would (kernels/fusion.h).
  void flush_group() {
    if (group_.empty()) return;
    std::vector<PendingStep> members = std::move(group_);
    std::vector<HeldOp> held = std::move(held_);
    group_.clear();
    held_.clear();
    for (const PendingStep& m : members) in_group_[m.node] = -1;
    const size_t slices = std::min(members.size(), static_cast<size_t>(std::max(1, spec_.workers)));
    for (size_t k = 0; k < slices; ++k) {
      auto slice = std::make_shared<std::vector<PendingStep>>(members.begin() + members.size() * k / slices,
                                                              members.begin() + members.size() * (k + 1) / slices);
      run_as_one(*slice, [this, slice] { fused_step(*slice); });
    }
    // In the order they were asked for: with one worker each runs at once,
    // and a merge may need a snapshot asked for before it.
    for (auto& s : held_snapshots_) s->held = false;
    held_snapshots_.clear();
    for (HeldOp& op : held) chains_->post(op.node, std::move(op.fn), std::move(op.after));
  }

  // fn once every member's chain has reached this point; the chains go on
  // once it ran. The last to arrive runs it, on its worker.
  template <class Members>
  void run_as_one(const Members& members, std::function<void()> fn) {
    auto gate = std::make_shared<FusedGroup>();
    gate->remaining = static_cast<int>(members.size());
    auto op = std::make_shared<std::function<void()>>(std::move(fn));
    for (const auto& m : members)
      chains_->post(node_of(m), [this, gate, op] {
        if (--gate->remaining > 0) return;
        std::exception_ptr error;
        try {
          (*op)();
        } catch (...) {
          error = std::current_exception();
        }
        chains_->open(*gate);
        if (error) std::rethrow_exception(error);
      });
    for (const auto& m : members)
      chains_->post(
          node_of(m), [] {}, gate);
  }
  static NodeId node_of(const PendingStep& m) { return m.node; }
  static NodeId node_of(NodeId n) { return n; }

  // The steps of `members` as one stacked step (kernels/fusion.h).
  void fused_step(const std::vector<PendingStep>& members) {
    Timer t(kernel_ns_);
    const Dataset& train = shared_->data.train;
    std::vector<int64_t> rows, samples;
    std::vector<double> lr;
    for (const PendingStep& m : members) {
      Sampler& s = samplers_[m.node];
      lr.push_back(learning_rate(s, m.node));
      const std::vector<int64_t> batch = next_batch(s);
      samples.insert(samples.end(), batch.begin(), batch.end());
      rows.push_back(row(m.node));
    }
    const int64_t g = static_cast<int64_t>(members.size());
    const auto index = torch::tensor(samples, torch::kInt64);
    std::vector<int64_t> shape = {g, spec_.batch};
    for (int64_t d : train.sample_shape()) shape.push_back(d);
    const auto x = train.inputs.index_select(0, index).view(shape);
    const auto y = train.labels.index_select(0, index).view({g, spec_.batch});
    const std::vector<double> losses = guarded(
        [&] { return fmt::format("a fused training step of {} nodes (the first node {})", g, members.front().node); },
        [&] { return stacked_->step(*store_, rows, x, y, spec_.optimizer, lr); });
    for (int64_t k = 0; k < g; ++k) {
      const PendingStep& m = members[k];
      ++samplers_[m.node].steps;
      if (!std::isfinite(losses[k]))
        note_nonfinite(m.asked, NonFiniteLoss{m.node, samplers_[m.node].steps, m.at, losses[k]});
    }
  }

  // Every evaluated node's own model as stacked evaluations (one per slice
  // of the nodes, a slice per worker), then the average model's.
  void evaluate_fused(const std::vector<NodeId>& nodes, const std::shared_ptr<EvalJob>& job) {
    const int n = static_cast<int>(nodes.size());
    const int slices = std::min(n, std::max(1, spec_.workers));
    job->remaining = slices;
    for (int k = 0; k < slices; ++k) {
      const int from = n * k / slices, to = n * (k + 1) / slices;
      std::vector<NodeId> slice(nodes.begin() + from, nodes.begin() + to);
      run_as_one(slice, [this, job, slice, from] {
        try {
          Timer t(eval_ns_);
          const std::vector<int64_t> rows = rows_of(slice);
          for (size_t i = 0; i < slice.size(); ++i) {
            job->params[from + i] = store_->params[row(slice[i])].clone();
            job->buffers[from + i] = store_->buffers[row(slice[i])].clone();
          }
          const auto results =
              guarded([&] { return fmt::format("the fused evaluation of {} nodes", slice.size()); },
                      [&] { return stacked_->evaluate(*store_, rows, shared_->test_inputs, shared_->test_labels); });
          for (size_t i = 0; i < slice.size(); ++i) job->node[from + i] = results[i];
          if (--job->remaining == 0) complete(*job);
        } catch (...) {
          job->fail(std::current_exception());
          throw;
        }
      });
    }
  }

  // A module to run a kernel on, for as long as the lease lives (also when
  // the kernel throws). There is one per worker, and a worker runs one
  // operation at a time, so one is always free.
  class Lease {
   public:
    explicit Lease(TorchLearner& l) : l_(l) {
      std::lock_guard<std::mutex> lock(l_.views_mutex_);
      v_ = l_.free_views_.back();
      l_.free_views_.pop_back();
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(l_.views_mutex_);
      l_.free_views_.push_back(v_);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ModuleView& operator*() const { return *v_; }

   private:
    TorchLearner& l_;
    ModuleView* v_;
  };

  std::vector<int64_t> next_batch(Sampler& s) {
    std::vector<int64_t> idx;
    idx.reserve(spec_.batch);
    while (static_cast<int64_t>(idx.size()) < spec_.batch) {
      if (s.position == s.order.size()) {
        seeded_shuffle(s.order, s.rng);
        s.position = 0;
      }
      idx.push_back(s.order[s.position++]);
    }
    return idx;
  }

  double learning_rate(const Sampler& s, NodeId n) const {
    const auto& o = spec_.optimizer;
    double local_epochs = static_cast<double>(s.steps * spec_.batch) / partition_[n].size();
    switch (o.schedule.kind) {
      case LrSchedule::Kind::kConstant:
        return o.lr;
      case LrSchedule::Kind::kStep:
        return o.lr * std::pow(o.schedule.gamma, std::floor(local_epochs / o.schedule.every_epochs));
      case LrSchedule::Kind::kCosine:
        return 0.5 * o.lr * (1 + std::cos(M_PI * std::min(1.0, local_epochs / o.schedule.epochs)));
    }
    return o.lr;
  }

  torch::Tensor augment(torch::Tensor x, Rng& rng) const {
    // Random crop with 4 pixels of zero padding, and a horizontal flip, per sample.
    auto padded = torch::constant_pad_nd(x, {4, 4, 4, 4});
    auto out = torch::empty_like(x);
    const int64_t h = x.size(2), w = x.size(3);
    for (int64_t i = 0; i < x.size(0); ++i) {
      int64_t dy = uniform_index(rng, 9), dx = uniform_index(rng, 9);
      auto crop = padded[i].narrow(1, dy, h).narrow(2, dx, w);
      out[i].copy_(uniform_index(rng, 2) ? crop.flip({2}) : crop);
    }
    return out;
  }

  // The one boundary of LibTorch errors in a run: a kernel that fails (a
  // scripted forward that cannot take a batch, a shape the data did not
  // promise, memory) ends the run in one line that names the model, the node
  // and what it was running, instead of a multi-line traceback. An own
  // model's failure is an InputError naming its file.
  template <class Where, class Fn>
  auto guarded(Where&& where, Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      if (spec_.model.name == "torchscript")
        throw InputError(spec_.model.torchscript, "forward",
                         fmt::format("expected forward to run on the data; it failed in {} (LibTorch: {})", where(),
                                     torch_error_line(e.what())));
      throw std::runtime_error(fmt::format("the {} model failed in {} (LibTorch: {})", spec_.model.name, where(),
                                           torch_error_line(e.what())));
    }
  }

  // Keeps the nonfinite loss of the step asked for first: which step that
  // is does not depend on which worker ran first.
  void note_nonfinite(uint64_t asked, const NonFiniteLoss& f) {
    std::lock_guard<std::mutex> lock(nonfinite_mutex_);
    if (!first_nonfinite_ || asked < first_nonfinite_->first) first_nonfinite_.emplace(asked, f);
  }

  // One step of node n; its training loss (the batch's mean cross-entropy).
  double run_step(ModuleView& v, NodeId n) {
    Sampler& s = samplers_[n];
    const Dataset& train = shared_->data.train;
    auto idx = torch::tensor(next_batch(s), torch::kInt64);
    auto x = train.inputs.index_select(0, idx);
    auto y = train.labels.index_select(0, idx);
    if (train.augment) x = augment(x, s.augment_rng);
    x = x.to(device_);
    y = y.to(device_);
    auto params = store_->params[row(n)];
    v.bind(params, store_->buffers[row(n)]);
    torch::Tensor loss;
    if (random_) {
      // The model draws from LibTorch's global generator: one step at a
      // time, from a seed of its own.
      std::lock_guard<std::mutex> lock(random_mutex_);
      torch::manual_seed(Streams(shared_->seed).seed_for("model-random", (uint64_t(n) << 40) ^ uint64_t(s.steps)));
      loss = forward_backward(v, x, y);
    } else {
      loss = forward_backward(v, x, y);
    }
    sgd_update(params, v.grad(), store_->momentum.defined() ? store_->momentum[row(n)] : torch::Tensor(),
               spec_.optimizer, learning_rate(s, n));
    ++s.steps;
    return loss.item<double>();
  }

  // Every node's chain copies its rows (and evaluates its own model) where
  // the evaluation was asked for; the last to do so completes the job.
  void start_evaluation(const std::vector<NodeId>& nodes, const std::shared_ptr<EvalJob>& job) {
    const int n = static_cast<int>(nodes.size());
    job->remaining = n;
    job->params.resize(n);
    job->buffers.resize(n);
    job->node.resize(n);
    if (n == 0) return complete(*job);
    if (stacked_ && job->per_node) return evaluate_fused(nodes, job);
    for (int k = 0; k < n; ++k)
      on_node(nodes[k], [this, i = nodes[k], at = row(nodes[k]), k, job] {
        try {
          Timer t(eval_ns_);
          job->params[k] = store_->params[at].clone();
          job->buffers[k] = store_->buffers[at].clone();
          if (job->per_node)
            job->node[k] =
                guarded([&] { return fmt::format("the evaluation of node {}'s model", i); },
                        [&] { return evaluate_rows(*Lease(*this), store_->params[at], store_->buffers[at]); });
          if (--job->remaining == 0) complete(*job);
        } catch (...) {
          job->fail(std::current_exception());
          throw;
        }
      });
  }

  // A whole evaluation, or a share of one as bytes (evaluate_part).
  void complete(EvalJob& job) {
    if (!job.part) return finish_evaluation(job);
    BinaryWriter w;
    w.put<int64_t>(static_cast<int64_t>(job.part_nodes.size()));
    for (size_t k = 0; k < job.part_nodes.size(); ++k) {
      w.put<int64_t>(job.part_nodes[k]);
      put_tensor(w, job.params[k]);
      put_tensor(w, job.buffers[k]);
      w.put<double>(job.node[k].first);
      w.put<double>(job.node[k].second);
    }
    {
      std::lock_guard<std::mutex> lock(nonfinite_mutex_);
      const bool counts = first_nonfinite_ && first_nonfinite_->first < job.steps_before;
      w.put<uint8_t>(counts ? 1 : 0);
      if (counts) put_nonfinite(w, *first_nonfinite_);
    }
    if (!job.settled.exchange(true)) job.part_promise.set_value(w.bytes());
  }

  static void put_nonfinite(BinaryWriter& w, const std::pair<uint64_t, NonFiniteLoss>& first) {
    const auto& [asked, f] = first;
    w.put<uint64_t>(asked);
    w.put<int64_t>(f.node);
    w.put<int64_t>(f.step);
    w.put<int64_t>(f.at.ns());
    w.put<double>(f.loss);
  }
  static std::pair<uint64_t, NonFiniteLoss> get_nonfinite(BinaryReader& r) {
    const uint64_t asked = r.get<uint64_t>();
    NonFiniteLoss f;
    f.node = static_cast<NodeId>(r.get<int64_t>());
    f.step = r.get<int64_t>();
    f.at = Time::ns(r.get<int64_t>());
    f.loss = r.get<double>();
    return {asked, f};
  }

  void finish_evaluation(EvalJob& job) {
    Evaluation e = summarize(job);
    {
      // Every step asked for before this evaluation has run (each node's
      // chain ran its steps before its part of the evaluation).
      std::lock_guard<std::mutex> lock(nonfinite_mutex_);
      if (first_nonfinite_ && first_nonfinite_->first < job.steps_before) e.nonfinite = first_nonfinite_->second;
    }
    if (!job.settled.exchange(true)) job.promise.set_value(e);
  }

  // Evaluates the mean of the copied rows and sums up the per-node results.
  // Stacking the rows in node order gives the same mean, bit for bit, as the
  // store's own rows would: results do not depend on which chain came last.
  Evaluation summarize(EvalJob& job) {
    torch::NoGradGuard guard;
    Evaluation e;
    auto params = torch::stack(job.params), buffers = torch::stack(job.buffers);
    job.params.clear();
    job.buffers.clear();
    auto mean_params = params.mean(0), mean_buffers = buffers.mean(0);
    std::tie(e.accuracy, e.loss) = guarded([] { return std::string("the evaluation of the average model"); },
                                           [&] { return evaluate_rows(*Lease(*this), mean_params, mean_buffers); });
    e.consensus = (params - mean_params).pow(2).sum(1).mean().item<double>();
    if (!job.groups.empty()) {
      // Each row's group mean, then the two parts of the consensus distance.
      auto group =
          torch::tensor(std::vector<int64_t>(job.groups.begin(), job.groups.end()), torch::kInt64).to(params.device());
      const int64_t groups = group.max().item<int64_t>() + 1;
      auto sums = torch::zeros({groups, params.size(1)}, params.options()).index_add_(0, group, params);
      auto counts = torch::zeros({groups}, params.options())
                        .index_add_(0, group, torch::ones({params.size(0)}, params.options()));
      auto row_mean = (sums / counts.clamp_min(1).unsqueeze(1)).index_select(0, group);
      e.consensus_within = (params - row_mean).pow(2).sum(1).mean().item<double>();
      e.consensus_between = (row_mean - mean_params).pow(2).sum(1).mean().item<double>();
    }
    if (job.per_node) {
      const double n = job.node.size();
      e.per_node = true;
      e.node_accuracy_min = e.node_loss_min = INFINITY;
      e.node_accuracy_max = e.node_loss_max = -INFINITY;
      for (auto [acc, loss] : job.node) {
        e.node_accuracy_mean += acc / n;
        e.node_loss_mean += loss / n;
        e.node_accuracy_min = std::min(e.node_accuracy_min, acc);
        e.node_accuracy_max = std::max(e.node_accuracy_max, acc);
        e.node_loss_min = std::min(e.node_loss_min, loss);
        e.node_loss_max = std::max(e.node_loss_max, loss);
      }
    }
    return e;
  }

  std::pair<double, double> evaluate_rows(ModuleView& v, const torch::Tensor& params, const torch::Tensor& buffers) {
    torch::NoGradGuard guard;
    v.bind(params, buffers);
    v.net().eval();
    const auto& x = shared_->test_inputs;
    const auto& y = shared_->test_labels;
    // Chunks small enough that their activations (cnn: 100 kB per image in
    // the first layer) stay in the allocator's heap: 1,000 images at once
    // went to fresh pages from the kernel on every call and cost more in
    // page faults than in arithmetic.
    const int64_t n = y.size(0), chunk = kEvaluationChunk;
    double correct = 0, loss = 0;
    for (int64_t at = 0; at < n; at += chunk) {
      int64_t len = std::min(chunk, n - at);
      auto logits = v.net().forward(x.narrow(0, at, len).to(device_));
      auto yy = y.narrow(0, at, len).to(device_);
      // Each sample's loss summed in double (kernels/fusion.h sums many
      // models' the same way, so that a fused evaluation gives these bits).
      loss += sample_losses(logits, yy).sum().item<double>();
      correct += logits.argmax(1).eq(yy).sum().item<double>();
    }
    return {correct / n, loss / n};
  }

  std::shared_ptr<const Shared> shared_;
  const WorkloadSpec& spec_;
  torch::Device device_;
  int nodes_;
  std::vector<int64_t> row_of_;  // per node: its row in the store, or -1 where not held
  std::unique_ptr<NodeStore> store_;
  std::vector<std::unique_ptr<ModuleView>> views_;
  std::vector<ModuleView*> free_views_;
  std::mutex views_mutex_;
  std::unique_ptr<NodeChains> chains_;
  Partition partition_;
  std::vector<Sampler> samplers_;
  torch::Tensor initial_params_, initial_buffers_;  // for nodes that join fresh
  std::vector<NodeId> evaluated_;                   // empty: all
  std::vector<int> groups_;                         // per node; empty: none
  std::atomic<int64_t> kernel_ns_{0}, eval_ns_{0};  // training and merging; evaluating
  bool random_ = false;                             // the model draws random numbers (Net::draws_random_numbers)
  uint64_t asked_steps_ = 0;                        // steps asked for so far (the event loop's thread)
  // Fused steps (kernels/fusion.h), where the workload allows them; the
  // open group of steps asked for and not posted yet, with what each of its
  // nodes asked for after its step (the event loop's thread only).
  static constexpr size_t kMostFused = 256;
  std::unique_ptr<StackedMlp> stacked_;
  std::vector<PendingStep> group_;
  std::vector<HeldOp> held_;                                    // in the order they were asked for
  std::vector<std::shared_ptr<TorchSnapshot>> held_snapshots_;  // taken by held operations
  std::vector<int> in_group_;                                   // per node: its place in group_, or -1
  std::mutex nonfinite_mutex_;
  std::optional<std::pair<uint64_t, NonFiniteLoss>> first_nonfinite_;  // by the order steps were asked for
  std::mutex random_mutex_;                                            // then its steps run one at a time
};

class TorchFactory : public LearnerFactory {
 public:
  explicit TorchFactory(std::shared_ptr<const Shared> shared) : shared_(std::move(shared)) {}
  std::unique_ptr<Learner> make(int nodes) override { return std::make_unique<TorchLearner>(shared_, nodes); }
  std::unique_ptr<PartLearner> make_part(int nodes, const std::vector<NodeId>& held) {
    return std::make_unique<TorchLearner>(shared_, nodes, held);
  }

 private:
  std::shared_ptr<const Shared> shared_;
};

}  // namespace

std::unique_ptr<PartLearner> make_part_learner(LearnerFactory& torch_factory, int nodes,
                                               const std::vector<NodeId>& held) {
  return dynamic_cast<TorchFactory&>(torch_factory).make_part(nodes, held);
}

std::unique_ptr<LearnerFactory> make_torch_factory(const WorkloadSpec& spec, uint64_t seed, int64_t test_samples) {
  at::set_num_threads(1);
  use_one_blas_thread();
  keep_freed_memory();
  auto shared = std::make_shared<Shared>();
  shared->spec = spec;
  shared->seed = seed;
  if (spec.device != Device::kCpu && !torch::cuda::is_available())
    throw InputError("", "/workload/device", "expected cpu (this LibTorch build has no CUDA device)");
  if (spec.dataset == DatasetKind::kFashionMnist) {
    shared->data = load_fashion_mnist(spec.data_dir.empty() ? kFashionMnistDir : spec.data_dir);
  } else if (spec.dataset == DatasetKind::kCifar100) {
    shared->data = load_cifar100(spec.data_dir, spec.coarse_labels);
  } else if (spec.dataset == DatasetKind::kTensors) {
    shared->data = *load_tensor_file(spec.data_file);  // shares the tensors
  } else {
    shared->data = make_synthetic(spec.synthetic, Streams(seed).seed_for("synthetic-data"));
  }
  if (spec.train_samples > 0) shared->data.train.truncate(spec.train_samples);
  auto& test = shared->data.test;
  int64_t n = test_samples > 0 ? std::min(test_samples, test.size()) : test.size();
  shared->test_inputs = test.inputs.narrow(0, 0, n);
  shared->test_labels = test.labels.narrow(0, 0, n);
  auto labels = shared->data.train.labels.contiguous();
  shared->train_labels.assign(labels.data_ptr<int64_t>(), labels.data_ptr<int64_t>() + labels.numel());
  return std::make_unique<TorchFactory>(std::move(shared));
}

}  // namespace gossipsim
