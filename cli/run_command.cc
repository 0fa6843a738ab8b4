// `gossipsim run`: every method of a scenario, one after the other, into one
// result folder; with checkpoints, resumable after a crash or a kill.
//
// The checkpoint of a run written to OUT lives beside it, in OUT.checkpoint/:
//   checkpoint.json   the scenario as run (with --set applied), the options,
//                     the methods finished and the summary so far
//   methods/<label>/  the outputs of each finished method
//   current/          the method in progress (sim/checkpoint.h): state.json,
//                     learner.bin, snapshots.bin; replaced as a whole, by
//                     renames, at each checkpoint
// `run --resume OUT` reads it, copies the finished methods, and resumes the
// method in progress from `current/`; the folder is removed once the run
// has written OUT. SIGINT and SIGTERM take a last checkpoint, write OUT
// with what was done (marked incomplete) and exit 128 + the signal.
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "analysis/output_dir.h"
#include "analysis/provenance.h"
#include "analysis/summary.h"
#include "analysis/writers.h"
#include "base/console.h"
#include "base/error.h"
#include "cli/commands.h"
#include "emulate/real_network.h"
#include "input/data_files.h"
#include "input/scenario_reader.h"
#include "sim/checkpoint.h"
#include "sim/evaluation_cost.h"
#include "sim/methods/registry.h"
#include "sim/runner.h"
#ifdef GOSSIPSIM_WITH_TORCH
#include "kernels/torch_learner.h"
#endif
#ifdef GOSSIPSIM_WITH_MPI
#include "ranks/mpi_run.h"
#endif

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }
#ifdef GOSSIPSIM_WITH_MPI
// Under MPI: a stop writes its signal to a pipe, and a thread of its own
// reads it, does what Run::end_on_signals set, and ends the process (the
// thread that took the signal may be waiting on a rank that is gone, and
// MPI's threads take signals too).
int g_stop_pipe[2] = {-1, -1};
void on_signal_over_ranks(int sig) {
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
}
std::mutex g_stop_mutex;
std::function<void(int)> g_on_stop;
void stop_on_signals_over_ranks() {
  if (::pipe(g_stop_pipe) != 0) throw std::runtime_error("cannot make a pipe for signals");
  std::thread([] {
    unsigned char byte = 0;
    while (::read(g_stop_pipe[0], &byte, 1) != 1) {
    }
    std::lock_guard<std::mutex> lock(g_stop_mutex);
    if (g_on_stop) g_on_stop(byte);
    std::_Exit(128 + byte);
  }).detach();
  struct sigaction sa = {};
  sa.sa_handler = on_signal_over_ranks;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
#endif

class NullFactory : public LearnerFactory {
 public:
  NullFactory(Bytes model, int64_t batch, int64_t train) : model_(model), batch_(batch), train_(train) {}
  std::unique_ptr<Learner> make(int nodes) override {
    return std::make_unique<NullLearner>(nodes, model_, batch_, train_);
  }

 private:
  Bytes model_;
  int64_t batch_, train_;
};

std::unique_ptr<LearnerFactory> make_factory(const Scenario& sc, const std::string& kernels) {
  const WorkloadSpec& w = sc.workload;
  if (kernels == "none") {
    int64_t model = w.model_bytes;
#ifdef GOSSIPSIM_WITH_TORCH
    if (model == 0) model = model_state_bytes(w);
#endif
    if (model == 0)
      throw InputError(sc.file, "/workload/model_bytes", "expected a model size in bytes (built without LibTorch)");
    int64_t train = published_dataset(w).train;
    if (w.train_samples > 0) train = std::min(train, w.train_samples);
    return std::make_unique<NullFactory>(bytes(model), w.batch, train);
  }
#ifdef GOSSIPSIM_WITH_TORCH
  return make_torch_factory(w, sc.seed, sc.eval.test_samples_or_default());
#else
  throw InputError(sc.file, "", "expected --kernels none: this build has no LibTorch");
#endif
}

nlohmann::json histogram_json(const std::vector<std::vector<int64_t>>& h) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& row : h) j.push_back(row);
  return j;
}

// checkpoint.json: how the run was started (--resume starts it again the
// same way), the methods finished so far and the summary they wrote, and
// the digests of the files it read. Written at the first checkpoint and
// after each method, read by --resume; both ends go through this struct.
struct RunHeader {
  std::string scenario_file;
  nlohmann::json scenario;  // the document as read, --set applied
  std::vector<std::string> methods;
  std::string kernels;
  bool trace = false;
  int workers = 1;
  double checkpoint_every = 0;
  std::string out;
  std::vector<std::string> done;  // labels of the methods finished
  nlohmann::json summary;         // summary.json so far; null before the first method
  // {"named_at", "path", "digest"} of every file read; null in checkpoints
  // written before inputs were kept.
  nlohmann::json inputs;
};
void to_json(nlohmann::json& j, const RunHeader& h) {
  j = {{"scenario_file", h.scenario_file},
       {"scenario", h.scenario},
       {"methods", h.methods},
       {"kernels", h.kernels},
       {"trace", h.trace},
       {"workers", h.workers},
       {"checkpoint_every", h.checkpoint_every},
       {"out", h.out},
       {"done", h.done},
       {"summary", h.summary},
       {"inputs", h.inputs}};
}
void from_json(const nlohmann::json& j, RunHeader& h) {
  j.at("scenario_file").get_to(h.scenario_file);
  h.scenario = j.at("scenario");
  j.at("methods").get_to(h.methods);
  j.at("kernels").get_to(h.kernels);
  j.at("trace").get_to(h.trace);
  j.at("workers").get_to(h.workers);
  j.at("checkpoint_every").get_to(h.checkpoint_every);
  j.at("out").get_to(h.out);
  j.at("done").get_to(h.done);
  h.summary = j.at("summary");
  h.inputs = j.value("inputs", nlohmann::json());
}

// The checkpoint folder of a run, beside its result folder.
class CheckpointFolder {
 public:
  explicit CheckpointFolder(fs::path dir) : dir_(std::move(dir)) {}
  const fs::path& dir() const { return dir_; }

  void write_header(const RunHeader& header) {
    make_folders(dir_);
    write_file_atomically(dir_ / "checkpoint.json", nlohmann::json(header).dump(1) + "\n");
  }
  // The method in progress, replaced as a whole: current.new is complete
  // before it takes current's place. A write that fails (a full disk)
  // removes current.new and leaves the last whole checkpoint as it was.
  void write_current(const MethodCheckpoint& c) {
    const fs::path fresh = dir_ / "current.new", old = dir_ / "current.old", cur = dir_ / "current";
    fs::remove_all(fresh);
    try {
      make_folders(fresh);
      write_method_checkpoint(fresh, c);
    } catch (...) {
      std::error_code ec;
      fs::remove_all(fresh, ec);
      throw;
    }
    fs::remove_all(old);
    if (fs::exists(cur)) rename_or_fail(cur, old);
    rename_or_fail(fresh, cur);
    fs::remove_all(old);
  }
  // After a kill between the two renames above, current.new is whole (its
  // state.json is written last) or current.old is the last whole one.
  std::optional<MethodCheckpoint> read_current() const {
    for (const char* name : {"current", "current.new", "current.old"})
      if (fs::exists(dir_ / name / "state.json")) return read_method_checkpoint(dir_ / name);
    return std::nullopt;
  }
  // A finished method's outputs, which a resume copies from here.
  void keep_method(const std::string& label, const fs::path& outputs) {
    fs::remove_all(dir_ / "methods" / label);
    copy_folder(outputs, dir_ / "methods" / label);
  }
  void finish_method(const std::string& label, const fs::path& outputs) {
    fs::remove_all(dir_ / "methods" / label);
    copy_folder(outputs, dir_ / "methods" / label);
    fs::remove_all(dir_ / "current");
    fs::remove_all(dir_ / "current.new");
    fs::remove_all(dir_ / "current.old");
  }

 private:
  fs::path dir_;
};

// A test hook (GOSSIPSIM_TEST_RAISE=N:SIG): raise SIG in this process after
// its N-th checkpoint, to test a SIGKILL or SIGTERM at a known point.
void maybe_raise(int checkpoints_written) {
  const char* spec = std::getenv("GOSSIPSIM_TEST_RAISE");
  if (!spec) return;
  int n = 0, sig = 0;
  if (std::sscanf(spec, "%d:%d", &n, &sig) == 2 && n == checkpoints_written) std::raise(sig);
}

// A test hook (GOSSIPSIM_TEST_RAISE_AT=LABEL:SIG): raise SIG in this process
// as the method LABEL starts, to stop a run that takes no periodic
// checkpoints in a later method.
void maybe_raise_at(const std::string& label) {
  const char* spec = std::getenv("GOSSIPSIM_TEST_RAISE_AT");
  if (!spec) return;
  const std::string s = spec;
  const size_t colon = s.rfind(':');
  if (colon != std::string::npos && s.substr(0, colon) == label) std::raise(std::atoi(s.c_str() + colon + 1));
}

// A test hook (GOSSIPSIM_TEST_HOLD=SECONDS): wait that long once the output
// is claimed and staged, so that a test can kill the process (or its
// sweep) at a known point.
void maybe_hold() {
  const char* spec = std::getenv("GOSSIPSIM_TEST_HOLD");
  if (!spec) return;
  const double s = std::min(std::atof(spec), 600.0);
  for (double held = 0; held < s && !g_signal; held += 0.05) ::usleep(50000);  // a stop ends it
}

// Whether process `pid` has ended: it is gone, or it is a zombie that no
// one has reaped yet (a point run killed with its sweep, waiting for init).
bool process_ended(int pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t name_end = text.rfind(')');  // the state follows the command's name: "pid (name) S ..."
  return name_end != std::string::npos && name_end + 2 < text.size() && text[name_end + 2] == 'Z';
}

// Staging folders (OUT.tmp-<pid>) left by runs that were killed: their
// process has ended, and they never looked like a result.
void remove_dead_staging(const fs::path& out) {
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const std::string prefix = out.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (process_ended(std::stoi(pid))) fs::remove_all(e.path(), ec);
  }
}

}  // namespace

namespace {

// One `gossipsim run`, as steps over the state they share: where the run
// comes from (a scenario, or a checkpoint to resume), which methods, the
// result folder being staged, the checkpoint folder and the summary so far.
class Run {
 public:
  explicit Run(RunCommand cmd) : cmd_(std::move(cmd)) {}
#ifdef GOSSIPSIM_WITH_MPI
  Run(RunCommand cmd, MpiSession* mpi) : cmd_(std::move(cmd)), mpi_(mpi) {}
#endif

  int execute() {
    if (cmd_.real && !cmd_.resume.empty())
      throw InputError("--resume", "", "expected a simulated run: a real run (--real) is not resumed (run it again)");
    if (cmd_.resume.empty())
      load_scenario_file();
    else
      load_checkpoint();
    select_methods();
    check_options();
    check_workload(sc_, cmd_.kernels);
    if (cmd_.real) emulate::check_real_run(sc_);
#ifdef GOSSIPSIM_WITH_MPI
    if (mpi_) {
      check_mpi_options();
      // Ranks other than 0 hold nodes for rank 0 and write nothing.
      if (mpi_->rank() != 0) {
        note_binding();
        auto local = make_factory(sc_, cmd_.kernels);
        serve_rank(*local, *mpi_);
        return 0;
      }
    }
#endif
    warn_about_evaluation_cost();
    claim_output();
    OutputDir dir(out_, "run", {{"scenario", sc_.name}});
    dir_ = &dir;
    // From here a stop (SIGINT, SIGTERM) leaves a result marked incomplete
    // and a checkpoint, never a staging folder or a claim of a killed run.
    if (over_ranks())
      end_on_signals(dir.staging());
    else
      catch_signals();
    maybe_hold();
    factory_ = make_factory(sc_, cmd_.kernels);
#ifdef GOSSIPSIM_WITH_MPI
    if (mpi_) factory_ = make_rank_factory(std::move(factory_), *mpi_);
#endif
    start_summary();
    for (const auto& m : methods_)
      if (!run_method_entry(m)) break;
    return finish();
  }

 private:
  void load_scenario_file() {
    sc_ = load_scenario(cmd_.scenario, cmd_.sets);
    if (cmd_.workers > 0) sc_.workload.workers = cmd_.workers;
  }

  // --resume: the run as it was started, from the checkpoint's header.
  void load_checkpoint() {
    fs::path dir = cmd_.resume;
    if (!fs::exists(dir / "checkpoint.json")) dir += ".checkpoint";
    if (!fs::exists(dir / "checkpoint.json"))
      throw InputError(
          "--resume " + cmd_.resume, "",
          "expected a result folder with a checkpoint beside it (" + dir.string() + "/checkpoint.json not found)");
    ckpt_ = std::make_unique<CheckpointFolder>(dir);
    try {
      header_ = JsonReader::parse_file((dir / "checkpoint.json").string()).get<RunHeader>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError((dir / "checkpoint.json").string(), "",
                       std::string("expected a gossipsim checkpoint: ") + e.what());
    }
    check_inputs_unchanged(dir / "checkpoint.json");
    cmd_.scenario = header_.scenario_file;
    cmd_.methods = header_.methods;
    cmd_.kernels = header_.kernels;
    cmd_.trace = header_.trace;
    cmd_.checkpoint_every = header_.checkpoint_every;
    out_ = header_.out;
    sc_ = parse_scenario(header_.scenario, cmd_.scenario);
    sc_.workload.workers = header_.workers;
    if (cmd_.workers > 0) sc_.workload.workers = cmd_.workers;  // results do not depend on it
    resume_state_ = ckpt_->read_current();
    remove_dead_staging(out_);
  }

  // Every file the scenario names (topology, regions, CSV traces, data
  // given by /workload/data_dir), with its digest: a resume refuses to go on
  // with files that changed since the run began, which would mix two inputs
  // in one result.
  nlohmann::json input_digests() const {
    nlohmann::json out = nlohmann::json::array();
    auto add = [&](const std::string& pointer, const std::string& path) {
      out.push_back({{"named_at", pointer}, {"path", fs::absolute(path).string()}, {"digest", file_digest(path)}});
    };
    for (const NamedInput& in : sc_.inputs) add(in.pointer, in.path);
    for (const std::string& f : named_data_files(sc_.workload)) add("/workload/data_dir", f);
    return out;
  }
  void check_inputs_unchanged(const fs::path& header_file) const {
    if (!header_.inputs.is_array()) return;  // written before inputs were kept
    for (const auto& in : header_.inputs) {
      const std::string path = in.value("path", ""), digest = file_digest(path);
      if (digest.empty())
        throw InputError(header_file.string(), in.value("named_at", ""),
                         "expected " + path +
                             ", which the run began with; it is gone or unreadable (restore it, or "
                             "run again without --resume)");
      if (digest != in.value("digest", ""))
        throw InputError(header_file.string(), in.value("named_at", ""),
                         "expected " + path +
                             " as it was when the run began; it has changed since (resuming would mix "
                             "two inputs in one result: restore it, or run again without --resume)");
    }
  }

  // Evaluations priced before they are paid: one line when they will take
  // more than half of the run's kernel work (sim/evaluation_cost.h).
  void warn_about_evaluation_cost() const {
    if (cmd_.kernels != "torch" || cmd_.quiet || !cmd_.resume.empty()) return;
    const int64_t tests = sc_.eval.used_test_samples(published_dataset(sc_.workload).test);
    Scenario chosen = sc_;
    chosen.methods = methods_;
    const std::string warning = evaluation_cost_warning(chosen, tests);
    if (!warning.empty()) say(stderr, "gossipsim: note: {}\n", warning);
  }

  void select_methods() {
    for (const auto& m : sc_.methods)
      if (cmd_.methods.empty() || std::find(cmd_.methods.begin(), cmd_.methods.end(), m.label) != cmd_.methods.end())
        methods_.push_back(m);
    for (const auto& want : cmd_.methods)
      if (std::none_of(sc_.methods.begin(), sc_.methods.end(), [&](const auto& m) { return m.label == want; })) {
        std::string labels;
        for (const auto& m : sc_.methods) labels += (labels.empty() ? "" : ", ") + m.label;
        throw InputError(
            cmd_.scenario, "/methods",
            fmt::format("no method labelled {} (from --methods); the scenario's labels are {}", want, labels));
      }
  }

  void check_options() const {
    if (cmd_.real && cmd_.checkpoint_every > 0)
      throw InputError("--checkpoint-every", "", "expected no checkpoints with --real: a real run is not resumed");
    if (!(cmd_.checkpoint_every >= 0 && cmd_.checkpoint_every <= kMaxVirtualSeconds))
      throw InputError("--checkpoint-every", "",
                       fmt::format("expected a number of virtual seconds in [0, {:g}] (0: only on SIGINT/SIGTERM)",
                                   kMaxVirtualSeconds));
  }

#ifdef GOSSIPSIM_WITH_MPI
  // A run over MPI ranks is a simulated run with real kernels that starts
  // and ends in one go.
  void check_mpi_options() const {
    const std::string ranks = fmt::format(" (this run is over {} MPI ranks)", mpi_->size());
    if (cmd_.real) throw InputError("--real", "", "expected a simulated run: --real runs in one process" + ranks);
    if (!cmd_.resume.empty())
      throw InputError("--resume", "", "expected a fresh run: a run over MPI ranks is not resumed" + ranks);
    if (cmd_.checkpoint_every > 0)
      throw InputError("--checkpoint-every", "", "expected no checkpoints: a run over MPI ranks takes none" + ranks);
    if (cmd_.kernels != "torch")
      throw InputError("--kernels", "", "expected torch: without kernels there is nothing to spread" + ranks);
  }
#endif

#ifdef GOSSIPSIM_WITH_MPI
  // Open MPI binds each of 2 ranks (or fewer) to one core: a rank's workers
  // then share it, and its kernels took twice their time (docs/scale.md).
  void note_binding() const {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return;
    const int cores = CPU_COUNT(&set), workers = std::max(1, sc_.workload.workers);
    if (cores < workers && !cmd_.quiet)
      say(stderr,
          "gossipsim: note: rank {} may run on {} core(s) but has {} workers (--workers): start mpirun with "
          "--bind-to none, or give each rank one worker\n",
          mpi_->rank(), cores, workers);
  }
#endif

  // Rank 0 of a run over MPI ranks: a stop (the user's, or the launcher's
  // when another rank died) may find this process waiting on a rank that is
  // gone, so the thread that reads stops (stop_on_signals_over_ranks) ends
  // it, after removing what it staged and its claim, with one line.
  void end_on_signals([[maybe_unused]] const fs::path& staging) {
#ifdef GOSSIPSIM_WITH_MPI
    std::lock_guard<std::mutex> lock(g_stop_mutex);
    g_on_stop = [staging, lock = fs::path(out_.string() + ".lock"), out = out_](int sig) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      fs::remove(lock, ec);
      say(stderr,
          "\ngossipsim: stopped by signal {} (the user's, or the launcher's when a rank ended); nothing was "
          "written to {}: a run over MPI ranks is not resumed, run it again\n",
          sig, out.string());
    };
#endif
  }

  // Where the result goes, and the checkpoint folder beside it.
  void claim_output() {
    if (ckpt_) {
      claim_ = std::make_unique<FolderClaim>(out_, "--resume");
      // The result folder may have changed since the run began: refuse, before
      // anything runs, to finish into a folder of other files.
      existing_result(out_, {"run"}, "--resume");
      return;
    }
    out_ = choose_output(cmd_.out.empty() ? fs::path("results") / sc_.name : fs::path(cmd_.out), "run", cmd_.force);
    claim_ = std::make_unique<FolderClaim>(out_, "--out");
    remove_dead_staging(out_);  // of a run into the same folder that was killed
    fs::path dir = out_;
    dir += ".checkpoint";
    if (fs::exists(dir))
      throw InputError("--out " + out_.string(), "",
                       "expected a folder without an unfinished run: " + dir.string() +
                           " holds one (resume it with --resume " + out_.string() + ", or remove it)");
    ckpt_ = std::make_unique<CheckpointFolder>(dir);
    header_.scenario_file = cmd_.scenario;
    header_.scenario = sc_.document;
    header_.methods = cmd_.methods;
    header_.kernels = cmd_.kernels;
    header_.trace = cmd_.trace;
    header_.workers = sc_.workload.workers;
    header_.checkpoint_every = cmd_.checkpoint_every;
    header_.out = out_.string();
    header_.inputs = input_digests();
  }

  // SIGINT and SIGTERM stop the run at the next event: a last checkpoint,
  // then the outputs so far, marked incomplete.
  static void catch_signals() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
  }

  // What makes this process's results (analysis/provenance.h).
  nlohmann::json provenance() const {
    nlohmann::json p = build_provenance();
    p["kernels"] = cmd_.kernels;
#ifdef GOSSIPSIM_WITH_TORCH
    if (cmd_.kernels == "torch") p.update(kernel_provenance(sc_.workload));
#endif
#ifdef GOSSIPSIM_WITH_MPI
    if (mpi_) p["mpi"] = {{"ranks", mpi_->size()}, {"library", mpi_->library()}};
#endif
    return p;
  }

  void start_summary() {
    // A resume keeps the provenance the run began with, and says so where
    // this process would make other numbers.
    if (header_.summary.is_object()) {
      nlohmann::json& before = header_.summary["provenance"];
      const nlohmann::json now = provenance();
      if (before.is_object() && comparable_provenance(before) != comparable_provenance(now))
        before["resumed_with"] = now;
    }
    summary_ = header_.summary.is_object() ? header_.summary
                                           : nlohmann::json{{"scenario", sc_.name},
                                                            {"provenance", provenance()},
                                                            {"file", cmd_.scenario},
                                                            {"seed", sc_.seed},
                                                            {"topology", sc_.topology.description},
                                                            {"nodes", sc_.topology.node_count()},
                                                            {"kernels", cmd_.kernels},
                                                            {"real", cmd_.real},
                                                            {"deterministic", !cmd_.real},
                                                            {"methods", nlohmann::json::array()}};
    done_ = header_.done;
    checkpointed_ = fs::exists(ckpt_->dir() / "checkpoint.json");
  }

  RunOptions run_options(const MethodOptions& m) {
    RunOptions opts;
    opts.trace = cmd_.trace;
    opts.progress = !cmd_.quiet;
    opts.progress_lines = !::isatty(2);
    opts.method_count = static_cast<int>(methods_.size());
    opts.method_index = static_cast<int>(
        std::find_if(methods_.begin(), methods_.end(), [&](const MethodOptions& o) { return o.label == m.label; }) -
        methods_.begin());
    for (const auto& done : summary_["methods"]) opts.wall_before_s += done.value("wall_s", 0.0);
    if (opts.progress && opts.progress_lines)
      say(stderr, "[{}/{}] {}: started\n", opts.method_index + 1, opts.method_count, m.label);
    opts.checkpoint_every = seconds(cmd_.checkpoint_every);
    opts.interrupted = &g_signal;
    if (cmd_.real) {  // no checkpoints: a real run is not resumed
      opts.real_network = emulate::real_network_for(sc_);
      return opts;
    }
    if (over_ranks()) return opts;  // nor is a run over MPI ranks (a stop ends it: end_on_signals)
    opts.resume = resume_state_ && resume_state_->label == m.label ? &*resume_state_ : nullptr;
    opts.on_checkpoint = [this](const MethodCheckpoint& c) {
      try {
        if (!checkpointed_) {
          // The first checkpoint of this run (without --checkpoint-every,
          // the last one a signal takes): the methods finished before it go
          // in first, or a resume would find none of their outputs.
          for (const std::string& label : done_) ckpt_->keep_method(label, dir_->staging() / label);
          ckpt_->write_header(header_);
        }
        checkpointed_ = true;
        ckpt_->write_current(c);
      } catch (const WriteError& e) {
        throw WriteError(e.path(), e.reason() + "; the last whole checkpoint is kept in " + ckpt_->dir().string() +
                                       " (gossipsim run --resume " + out_.string() + " continues from it)");
      }
      maybe_raise(++checkpoints_written_);
    };
    return opts;
  }

  // Runs (or, done before a resume, copies) one method; false once interrupted.
  bool run_method_entry(const MethodOptions& m) {
    if (std::find(done_.begin(), done_.end(), m.label) != done_.end()) {
      copy_folder(ckpt_->dir() / "methods" / m.label, dir_->staging() / m.label);
      return true;
    }
    maybe_raise_at(m.label);
    auto learner = factory_->make(learner_nodes(sc_, m));
    if (!summary_.contains("label_histogram") && !m.type->trains_alone)
      summary_["label_histogram"] = histogram_json(learner->label_histogram());
    header_.summary = summary_;
    const RunOptions opts = run_options(m);
    MethodRun r = run_method(sc_, m, *learner, opts);
    write_method_outputs(dir_->staging() / m.label, r);
    const nlohmann::json rs = method_summary(r);
    summary_["methods"].push_back(rs);
    if (r.stop == StopReason::kInterrupted) {
      interrupted_label_ = m.label;
      return false;
    }
    done_.push_back(m.label);
    header_.done = done_;
    header_.summary = summary_;
    if (checkpointed_) {
      ckpt_->finish_method(m.label, dir_->staging() / m.label);
      ckpt_->write_header(header_);
    }
    report(rs, opts.progress && !opts.progress_lines);
    return true;
  }

  // One line per method whose training loss went NaN or infinite; a run
  // that stopped a method for it exits 3 (its results are kept, and marked,
  // but are not a result). With /stop/nonfinite_loss false the user asked
  // to watch the divergence: the line, and exit 0.
  int report_nonfinite() const {
    int stopped_count = 0;
    for (const auto& m : summary_["methods"]) {
      const auto& f = m.value("nonfinite_loss", nlohmann::json());
      if (f.is_null()) continue;
      const bool stopped = m.value("stop_reason", "") == "nonfinite_loss";
      stopped_count += stopped ? 1 : 0;
      say(stderr, "gossipsim: {}: the training loss of {} became {} at node {}'s step {} ({:.6g} virtual s){}\n",
          m["label"].get<std::string>(), model_name(), f["loss"].get<std::string>(), f["node"].get<int>(),
          f["step"].get<int64_t>(), f["virtual_s"].get<double>(),
          stopped ? fmt::format("; the method stopped at {:.6g} virtual s (/stop/nonfinite_loss: false runs on)",
                                m["virtual_s"].get<double>())
                  : "; it ran on (/stop/nonfinite_loss is false)");
    }
    return stopped_count;
  }
  std::string model_name() const {
    const ModelSpec& m = sc_.workload.model;
    return m.name == "torchscript" ? m.torchscript : "the " + m.name + " model";
  }

  void report(const nlohmann::json& rs, bool progress_shown) const {
    if (cmd_.quiet) return;
    if (!progress_shown)
      say(stderr, "{}: {:.1f} virtual s, {:.2f} epochs, accuracy {}, {:.1f} s wall\n", rs["label"].get<std::string>(),
          rs["virtual_s"].get<double>(), rs["epochs"].get<double>(), rs["final_accuracy"].dump(),
          rs["wall_s"].get<double>());
    for (const auto& c : rs["starved_cuts"])
      say(stderr, "  warning: {}: no transfer crossed the cut {} for {:.1f} virtual s ({:.1f} to {:.1f} s)\n",
          rs["label"].get<std::string>(), c["cut"].get<std::string>(), c["longest_gap_s"].get<double>(),
          c["from_s"].get<double>(), c["to_s"].get<double>());
  }

  // Writes the run's files and commits the folder; an interrupted run keeps
  // its checkpoint and exits 128 + the signal.
  int finish() {
    const bool complete = interrupted_label_.empty();
    summary_["complete"] = complete;
#ifdef GOSSIPSIM_WITH_MPI
    if (mpi_) summary_["mpi"] = rank_stats(*factory_);
#endif
    write_file_atomically(dir_->file("scenario.json"), sc_.document.dump(2) + "\n");
    write_file_atomically(dir_->file("summary.json"), summary_.dump(2) + "\n");
    if (!complete && cmd_.real) {
      dir_->mark({{"complete", false}});
      dir_->commit();
      say(stderr,
          "\ngossipsim: interrupted in {}; {} holds what was done (incomplete); a real run is not "
          "resumed: run it again\n",
          interrupted_label_, out_.string());
      return 128 + static_cast<int>(g_signal);
    }
    if (!complete) {
      dir_->mark({{"complete", false}});
      dir_->commit();
      say(stderr,
          "\ngossipsim: interrupted in {} at {:.3f} virtual s; {} holds what was done (incomplete); "
          "continue with: gossipsim run --resume {}\n",
          interrupted_label_, summary_["methods"].back()["virtual_s"].get<double>(), out_.string(), out_.string());
      return 128 + static_cast<int>(g_signal);
    }
    dir_->commit();
    if (checkpointed_) fs::remove_all(ckpt_->dir());
    say(stdout, "{}\n", out_.string());
    const int diverged = report_nonfinite();
    const int invalid = cmd_.real ? report_real_validity() : 0;
    return diverged > 0 ? 3 : invalid;
  }

  // A real run whose events fired too late, or whose emulator fell behind,
  // is kept but marked invalid (summary.json) and exits 3, never silently.
  int report_real_validity() const {
    int invalid = 0;
    for (const auto& m : summary_["methods"]) {
      const auto& r = m.value("real", nlohmann::json::object());
      if (r.value("valid", true)) continue;
      ++invalid;
      say(stderr, "gossipsim: run --real: {} is invalid: {}\n", m["label"].get<std::string>(),
          r.value("invalid_because", std::string()));
    }
    return invalid > 0 ? 3 : 0;
  }

  bool over_ranks() const {
#ifdef GOSSIPSIM_WITH_MPI
    return mpi_ != nullptr;
#else
    return false;
#endif
  }

  RunCommand cmd_;
#ifdef GOSSIPSIM_WITH_MPI
  MpiSession* mpi_ = nullptr;  // a run over MPI ranks (size > 1)
#endif
  Scenario sc_;
  RunHeader header_;  // checkpoint.json
  std::optional<MethodCheckpoint> resume_state_;
  fs::path out_;
  std::unique_ptr<CheckpointFolder> ckpt_;
  std::unique_ptr<FolderClaim> claim_;  // held until the process ends
  std::vector<MethodOptions> methods_;
  OutputDir* dir_ = nullptr;  // the staged result, while execute() runs
  std::unique_ptr<LearnerFactory> factory_;
  nlohmann::json summary_;
  std::vector<std::string> done_;  // labels finished, this run or before
  int checkpoints_written_ = 0;
  bool checkpointed_ = false;  // a checkpoint folder was written this run or before
  std::string interrupted_label_;
};

}  // namespace

int run_command(const RunCommand& cmd) {
#ifdef GOSSIPSIM_WITH_MPI
  if (launched_by_mpi()) {
    // A stop ends every rank at once; rank 0 first removes what it staged
    // (end_on_signals). The other ranks hold nothing to clean up.
    stop_on_signals_over_ranks();
    MpiSession mpi;
    if (mpi.size() == 1) return Run(cmd).execute();
    try {
      return Run(cmd, &mpi).execute();
    } catch (const InputError&) {
      // Every rank read the same input: rank 0 says what is wrong with it,
      // and its leaving without MPI_Finalize makes the launcher end the
      // others. They wait for that rather than leave first: a rank that
      // leaves first has the launcher end rank 0 too, often before it has
      // said anything. A rank whose error rank 0 did not meet (its input
      // differed) says its own after the wait.
      if (mpi.rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(30));
      throw;
    }
  }
#endif
  return Run(cmd).execute();
}

}  // namespace gossipsim
