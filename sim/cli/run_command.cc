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
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analysis/output_dir.h"
#include "analysis/summary.h"
#include "analysis/writers.h"
#include "sim/base/error.h"
#include "sim/checkpoint.h"
#include "sim/cli/commands.h"
#include "sim/dataset_info.h"
#include "sim/methods/registry.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#ifdef GOSSIPSIM_WITH_TORCH
#include "kernels/torch_learner.h"
#endif

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

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
    if (model == 0) throw InputError(sc.file, "/workload/model_bytes", "a model size in bytes (built without LibTorch)");
    int64_t train = published_dataset(w).train;
    if (w.train_samples > 0) train = std::min(train, w.train_samples);
    return std::make_unique<NullFactory>(bytes(model), w.batch, train);
  }
#ifdef GOSSIPSIM_WITH_TORCH
  return make_torch_factory(w, sc.seed, sc.eval.test_samples);
#else
  throw InputError(sc.file, "", "--kernels none: this build has no LibTorch");
#endif
}

nlohmann::json histogram_json(const std::vector<std::vector<int64_t>>& h) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& row : h) j.push_back(row);
  return j;
}

void copy_folder(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// The checkpoint folder of a run, beside its result folder.
class CheckpointFolder {
 public:
  explicit CheckpointFolder(fs::path dir) : dir_(std::move(dir)) {}
  const fs::path& dir() const { return dir_; }

  void write_header(const nlohmann::json& header) {
    fs::create_directories(dir_);
    write_file_atomically(dir_ / "checkpoint.json", header.dump(1) + "\n");
  }
  // The method in progress, replaced as a whole: current.new is complete
  // before it takes current's place.
  void write_current(const MethodCheckpoint& c) {
    const fs::path fresh = dir_ / "current.new", old = dir_ / "current.old", cur = dir_ / "current";
    fs::remove_all(fresh);
    fs::create_directories(fresh);
    write_method_checkpoint(fresh, c);
    fs::remove_all(old);
    if (fs::exists(cur)) fs::rename(cur, old);
    fs::rename(fresh, cur);
    fs::remove_all(old);
  }
  // After a kill between the two renames above, current.new is whole (its
  // state.json is written last) or current.old is the last whole one.
  std::optional<MethodCheckpoint> read_current() const {
    for (const char* name : {"current", "current.new", "current.old"})
      if (fs::exists(dir_ / name / "state.json")) return read_method_checkpoint(dir_ / name);
    return std::nullopt;
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

// Staging folders (OUT.tmp-<pid>) left by runs that were killed: their
// process is gone, and they never looked like a result.
void remove_dead_staging(const fs::path& out) {
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const std::string prefix = out.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(std::stoi(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

}  // namespace

int run_command(const RunCommand& cmd_in) {
  RunCommand cmd = cmd_in;
  Scenario sc;
  nlohmann::json header;  // checkpoint.json
  std::optional<MethodCheckpoint> resume_state;
  fs::path out;
  std::unique_ptr<CheckpointFolder> ckpt;
  if (!cmd.resume.empty()) {
    fs::path dir = cmd.resume;
    if (!fs::exists(dir / "checkpoint.json")) dir += ".checkpoint";
    if (!fs::exists(dir / "checkpoint.json"))
      throw InputError("--resume " + cmd.resume, "",
                       "a result folder with a checkpoint beside it (" + dir.string() + "/checkpoint.json not found)");
    ckpt = std::make_unique<CheckpointFolder>(dir);
    header = JsonReader::parse_file((dir / "checkpoint.json").string());
    try {
      cmd.scenario = header.at("scenario_file").get<std::string>();
      cmd.methods = header.at("methods").get<std::vector<std::string>>();
      cmd.kernels = header.at("kernels").get<std::string>();
      cmd.trace = header.at("trace").get<bool>();
      cmd.checkpoint_every = header.at("checkpoint_every").get<double>();
      out = header.at("out").get<std::string>();
      sc = parse_scenario(header.at("scenario"), cmd.scenario);
      sc.workload.workers = header.at("workers").get<int>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError((dir / "checkpoint.json").string(), "", std::string("expected a gossipsim checkpoint: ") + e.what());
    }
    if (cmd.workers > 0) sc.workload.workers = cmd.workers;  // results do not depend on it
    resume_state = ckpt->read_current();
    remove_dead_staging(out);
  } else {
    sc = load_scenario(cmd.scenario, cmd.sets);
    if (cmd.workers > 0) sc.workload.workers = cmd.workers;
  }
  std::vector<MethodOptions> methods;
  for (const auto& m : sc.methods)
    if (cmd.methods.empty() || std::find(cmd.methods.begin(), cmd.methods.end(), m.label) != cmd.methods.end())
      methods.push_back(m);
  for (const auto& want : cmd.methods)
    if (std::none_of(sc.methods.begin(), sc.methods.end(), [&](const auto& m) { return m.label == want; }))
      throw InputError(cmd.scenario, "/methods", "a method labelled " + want + " (from --methods)");
  if (!(cmd.checkpoint_every >= 0 && cmd.checkpoint_every <= kMaxVirtualSeconds))
    throw InputError("--checkpoint-every", "", fmt::format("expected a number of virtual seconds in [0, {:g}] (0: only "
                                                           "on SIGINT/SIGTERM)", kMaxVirtualSeconds));

  check_workload(sc, cmd.kernels);
  if (!ckpt) {
    out = choose_output(cmd.out.empty() ? fs::path("results") / sc.name : fs::path(cmd.out), "run", cmd.force);
    fs::path dir = out;
    dir += ".checkpoint";
    if (fs::exists(dir))
      throw InputError("--out " + out.string(), "",
                       "a folder without an unfinished run: " + dir.string() +
                           " holds one (resume it with --resume " + out.string() + ", or remove it)");
    ckpt = std::make_unique<CheckpointFolder>(dir);
    header = {{"scenario_file", cmd.scenario}, {"scenario", sc.document},   {"methods", cmd.methods},
              {"kernels", cmd.kernels},        {"trace", cmd.trace},        {"workers", sc.workload.workers},
              {"checkpoint_every", cmd.checkpoint_every}, {"out", out.string()}, {"done", nlohmann::json::array()},
              {"summary", nullptr}};
  } else {
    // The result folder may have changed since the run began: refuse, before
    // anything runs, to finish into a folder of other files.
    existing_result(out, {"run"}, "--resume");
  }
  OutputDir dir(out, "run", {{"scenario", sc.name}});
  auto factory = make_factory(sc, cmd.kernels);
  RunOptions opts;
  opts.trace = cmd.trace;
  opts.progress = !cmd.quiet && ::isatty(2);
  opts.checkpoint_every = seconds(cmd.checkpoint_every);
  opts.interrupted = &g_signal;
  // SIGINT and SIGTERM stop the run at the next event: a last checkpoint,
  // then the outputs so far, marked incomplete.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  nlohmann::json summary = header["summary"].is_object()
                               ? header["summary"]
                               : nlohmann::json{{"scenario", sc.name},
                                                {"file", cmd.scenario},
                                                {"seed", sc.seed},
                                                {"topology", sc.topology.description},
                                                {"nodes", sc.topology.node_count()},
                                                {"kernels", cmd.kernels},
                                                {"methods", nlohmann::json::array()}};
  std::vector<std::string> done = header["done"].get<std::vector<std::string>>();
  int checkpoints_written = 0;
  bool checkpointed = false;  // a checkpoint folder was written this run or before
  if (fs::exists(ckpt->dir() / "checkpoint.json")) checkpointed = true;
  std::string interrupted_label;
  for (const auto& m : methods) {
    if (std::find(done.begin(), done.end(), m.label) != done.end()) {
      copy_folder(ckpt->dir() / "methods" / m.label, dir.staging() / m.label);
      continue;
    }
    auto learner = factory->make(learner_nodes(sc, m));
    if (!summary.contains("label_histogram") && !m.type->trains_alone)
      summary["label_histogram"] = histogram_json(learner->label_histogram());
    header["summary"] = summary;
    opts.resume = resume_state && resume_state->label == m.label ? &*resume_state : nullptr;
    opts.on_checkpoint = [&](const MethodCheckpoint& c) {
      if (!checkpointed) ckpt->write_header(header);
      checkpointed = true;
      ckpt->write_current(c);
      maybe_raise(++checkpoints_written);
    };
    MethodRun r = run_method(sc, m, *learner, opts);
    write_method_outputs(dir.staging() / m.label, r);
    const nlohmann::json rs = method_summary(r);
    summary["methods"].push_back(rs);
    if (r.stop == StopReason::kInterrupted) {
      interrupted_label = m.label;
      break;
    }
    done.push_back(m.label);
    header["done"] = done;
    header["summary"] = summary;
    if (checkpointed) {
      ckpt->finish_method(m.label, dir.staging() / m.label);
      ckpt->write_header(header);
    }
    if (!opts.progress && !cmd.quiet)
      fmt::print(stderr, "{}: {:.1f} virtual s, {:.2f} epochs, accuracy {}, {:.1f} s wall\n", m.label,
                 rs["virtual_s"].get<double>(), rs["epochs"].get<double>(),
                 rs["final_accuracy"].dump(), rs["wall_s"].get<double>());
    if (!cmd.quiet)
      for (const auto& c : rs["starved_cuts"])
        fmt::print(stderr, "  warning: {}: no transfer crossed the cut {} for {:.1f} virtual s ({:.1f} to {:.1f} s)\n",
                   m.label, c["cut"].get<std::string>(), c["longest_gap_s"].get<double>(), c["from_s"].get<double>(),
                   c["to_s"].get<double>());
  }
  const bool complete = interrupted_label.empty();
  summary["complete"] = complete;
  std::ofstream(dir.file("scenario.json")) << sc.document.dump(2) << "\n";
  std::ofstream(dir.file("summary.json")) << summary.dump(2) << "\n";
  if (!complete) {
    // What was done, marked incomplete; the checkpoint stays for --resume.
    dir.mark({{"complete", false}});
    dir.commit();
    fmt::print(stderr, "\ngossipsim: interrupted in {} at {:.3f} virtual s; {} holds what was done (incomplete); "
                       "continue with: gossipsim run --resume {}\n",
               interrupted_label, summary["methods"].back()["virtual_s"].get<double>(), out.string(), out.string());
    return 128 + static_cast<int>(g_signal);
  }
  dir.commit();
  if (checkpointed) fs::remove_all(ckpt->dir());
  fmt::print("{}\n", out.string());
  return 0;
}

}  // namespace gossipsim
