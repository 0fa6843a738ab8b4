// `gossipsim sweep`: every point of a grid run as a `gossipsim run` of its
// own, several at once, into OUT/points/<i>; points already done are
// skipped, so a sweep stopped and started again goes on where it was.
// sweep.csv is gathered only once every point of the grid is done.
//
// Point runs die with their sweep: each is started with a parent-death
// signal (SIGKILL), so a sweep that is killed leaves no orphan writing into
// its folder; a point killed so leaves no result (its staging folder goes
// when that point runs again), and the restart runs it again. SIGINT and
// SIGTERM stop the sweep cleanly instead: no new point starts, the running
// ones get SIGTERM (each stops with a result marked incomplete, which the
// restart runs again) and are waited for, and the sweep exits 128 + the
// signal.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "analysis/output_dir.h"
#include "analysis/sweep_csv.h"
#include "base/console.h"
#include "base/error.h"
#include "cli/commands.h"
#include "input/scenario_reader.h"
#include "input/sweep.h"
#include "sim/dataset_info.h"
#include "sim/evaluation_cost.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

// SIGINT and SIGTERM, taken by one thread of the sweep (sigwait) rather than
// by a handler: the signals are blocked in every thread of the sweep and in
// a point run until it has exec'd, so none can run an inherited handler
// between fork and exec (a point so signalled used to hold its 60 s test
// hold and outlive the stop), and the set of running points is guarded by a
// mutex that the stop and each start both take, so a point that starts
// while the sweep stops is stopped too.
class Stopper {
 public:
  Stopper() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set_, &before_);
    waiter_ = std::thread([this] { wait(); });
  }
  ~Stopper() {
    done_ = true;
    waiter_.join();
    ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);  // a signal still pending acts as usual
  }
  Stopper(const Stopper&) = delete;
  Stopper& operator=(const Stopper&) = delete;

  int signal() const { return signal_.load(); }
  const sigset_t& blocked() const { return set_; }

  // false when the sweep is stopping (the point is then stopped at once).
  bool add(pid_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (signal_.load()) {
      ::kill(pid, SIGTERM);
      return false;
    }
    children_.insert(pid);
    return true;
  }
  void remove(pid_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    children_.erase(pid);
  }

 private:
  void wait() {
    const timespec tick{0, 100'000'000};
    while (!done_) {
      const int sig = ::sigtimedwait(&set_, nullptr, &tick);
      if (sig <= 0) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!signal_.load()) signal_ = sig;
      for (pid_t pid : children_) ::kill(pid, SIGTERM);
    }
  }

  sigset_t set_{}, before_{};
  std::atomic<int> signal_{0};
  std::atomic<bool> done_{false};
  std::mutex mutex_;
  std::set<pid_t> children_;
  std::thread waiter_;
};

// Runs this binary with `args` (args[0] is its name), output into `log`, and
// waits for it; its exit code (128 + the signal if one ended it). The child
// dies with the thread that started it (PR_SET_PDEATHSIG).
// `program` (found on PATH) instead of this binary when given.
int run_child(const std::vector<std::string>& args, const fs::path& log, Stopper& stopper,
              const std::string& program = "") {
  static const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // A sweep started by an MPI launcher (a shard per rank) runs each point
  // in one process: the launcher's variables, which the child inherits,
  // would make it wait for ranks that are not there (ranks/mpi_run.h).
  static std::string one_process = "GOSSIPSIM_ONE_PROCESS=1";
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(one_process.data());
  envp.push_back(nullptr);
  // A test hook (GOSSIPSIM_TEST_HOLD_BEFORE_EXEC=SECONDS): each point waits
  // that long between fork and exec, so that a test can stop the sweep there.
  static const double hold_before_exec = [] {
    const char* spec = std::getenv("GOSSIPSIM_TEST_HOLD_BEFORE_EXEC");
    return spec ? std::min(std::max(std::atof(spec), 0.0), 600.0) : 0.0;
  }();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a point run: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the sweep died before the line above
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(127);
    if (hold_before_exec > 0) ::usleep(static_cast<useconds_t>(hold_before_exec * 1e6));
    // The run installs its own handlers; until then a stop ends it.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::pthread_sigmask(SIG_UNBLOCK, &stopper.blocked(), nullptr);
    if (program.empty())
      ::execve(self.c_str(), argv.data(), envp.data());
    else
      ::execvpe(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  const bool added = stopper.add(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (added) stopper.remove(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class SweepRun {
 public:
  explicit SweepRun(const SweepCommand& cmd)
      : cmd_(cmd),
        sweep_(load_sweep(cmd.sweep)),
        out_(cmd.out.empty() ? fs::path("results") / sweep_.name : fs::path(cmd.out)) {}

  int execute() {
    auto [shard, shards] = parse_shard(cmd_.shard);
    const bool slurm = cmd_.slurm || !cmd_.slurm_script.empty();
    check_slurm_options(slurm);
    check_sets();
    prepare_folder();
    if (slurm) return slurm_array();
    std::vector<size_t> todo;
    size_t done = 0;
    for (size_t p : shard_points(sweep_.size(), shard, shards)) {
      if (point_done(p))
        ++done;
      else
        todo.push_back(p);
    }
    say(stderr, "sweep {}: {} points, shard {}/{}: {} done already, {} to run\n", sweep_.name, sweep_.size(), shard,
        shards, done, todo.size());
    int stopped_by = 0;
    {
      Stopper stopper;
      stopper_ = &stopper;
      run_points(todo);
      stopped_by = stopper.signal();
      stopper_ = nullptr;
    }
    if (stopped_by) {
      say(stderr, "sweep {}: stopped by signal {}; the points not done run when the sweep starts again\n", sweep_.name,
          stopped_by);
      return 128 + stopped_by;
    }
    return gather();
  }

 private:
  // --set applies to every point, after the sweep file's "set"; an axis's
  // own path is refused (the axis would silently win). The base is read with
  // every value of every axis (check_sweep_values), so that a malformed
  // --set or a value the base does not take is one line here, naming where
  // it was written, not a failure of every point.
  void check_sets() const {
    for (const auto& s : cmd_.sets) {
      const std::string path = s.substr(0, s.find('='));
      for (const auto& a : sweep_.axes)
        if (path == a.path)
          throw InputError("--set " + s, "",
                           "expected a path that is not an axis of the sweep (" + a.path +
                               " is one: change its values in " + sweep_.file + ")");
    }
    check_sweep_values(sweep_, cmd_.sets);
    // Evaluations priced before the points pay for them (the first point's).
    if (cmd_.kernels == "torch") {
      const Scenario first = load_scenario(sweep_.base, point_sets(0));
      const int64_t tests = first.eval.used_test_samples(published_dataset(first.workload).test);
      const std::string warning = evaluation_cost_warning(first, tests);
      if (!warning.empty()) say(stderr, "sweep {}: note: in its first point, {}\n", sweep_.name, warning);
    }
  }

  // The Slurm options, before anything is written.
  void check_slurm_options(bool slurm) const {
    if (!slurm) {
      if (!cmd_.slurm_args.empty())
        throw InputError("--slurm-arg " + cmd_.slurm_args.front(), "", "expected --slurm or --slurm-script beside it");
      if (cmd_.slurm_tasks)
        throw InputError("--slurm-tasks " + std::to_string(cmd_.slurm_tasks), "",
                         "expected --slurm or --slurm-script beside it");
      return;
    }
    if (cmd_.shard != "0/1")
      throw InputError(
          "--shard " + cmd_.shard, "",
          "expected no --shard with --slurm: the job array's tasks are the shards (--slurm-tasks N for N of "
          "them)");
    for (const auto& a : cmd_.slurm_args) check_sbatch_arg(a);
    if (!cmd_.slurm_script.empty() && (fs::exists(cmd_.slurm_script) || fs::is_symlink(cmd_.slurm_script)))
      throw InputError("--slurm-script " + cmd_.slurm_script, "",
                       "expected a file that does not exist yet (this one does: remove it, or choose another name)");
    if (!cmd_.slurm_script.empty()) {
      const fs::path folder = fs::absolute(cmd_.slurm_script).parent_path();
      if (!fs::is_directory(folder))
        throw InputError("--slurm-script " + cmd_.slurm_script, "",
                         "expected a file in an existing folder (" + folder.string() + " is not one)");
    }
    if (cmd_.slurm && !on_path("sbatch"))
      throw InputError("--slurm", "",
                       "expected Slurm's sbatch on PATH (none found: install Slurm's client, or write the script with "
                       "--slurm-script FILE and submit it where Slurm is)");
  }

  static bool on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (size_t at = 0; at <= dirs.size();) {
      const size_t end = std::min(dirs.find(':', at), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(at, end - at)) / program;
      if (::access(candidate.c_str(), X_OK) == 0) return true;
      at = end + 1;
    }
    return false;
  }

  // Waits until Slurm holds no task of the job (or a stop), asking squeue
  // every second for the first minute, then every 5 s. sbatch --wait polled
  // at up to half a minute: a sweep of six 5-s points on the test's cluster
  // took 43 s with it, against 14 s with --jobs 2 on the same cores.
  void wait_for_job(const std::string& job_id, const fs::path& log, Stopper& stopper) {
    const auto start = std::chrono::steady_clock::now();
    int failures = 0;
    while (!stopper.signal()) {
      const int rc =
          run_child({"squeue", "--noheader", "--array", "--format=%i", "--jobs=" + job_id}, log, stopper, "squeue");
      std::ifstream in(log);
      const std::string listed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (rc == 0 && listed.find_first_not_of(" \n") == std::string::npos) return;  // no task left
      // squeue says a finished job is invalid once the controller forgot it.
      if (rc != 0 && listed.find("Invalid job id") != std::string::npos) return;
      if (rc != 0 && ++failures >= 30 && !stopper.signal())
        throw std::runtime_error(fmt::format("squeue failed {} times in a row waiting for Slurm job {}: {}", failures,
                                             job_id, listed.substr(0, listed.find('\n'))));
      if (rc == 0) failures = 0;
      const bool first_minute = std::chrono::steady_clock::now() - start < std::chrono::minutes(1);
      for (int tick = 0; tick < (first_minute ? 10 : 50) && !stopper.signal(); ++tick)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // The points not done as one Slurm job array: its batch script (task t
  // runs shard t of the grid with this binary, so the tasks skip what is
  // done, claim each point as local shards do, and the last to finish
  // gathers), submitted with sbatch and waited for when --slurm is given. A task
  // that ended without its points is reported with its logs; a stop
  // (SIGINT, SIGTERM) cancels the job; a new submission runs what is left.
  int slurm_array() {
    std::vector<bool> done(sweep_.size());
    for (size_t p = 0; p < sweep_.size(); ++p) done[p] = point_done(p);
    const auto [shards, tasks] = slurm_tasks(sweep_.size(), done, static_cast<size_t>(cmd_.slurm_tasks));
    const size_t todo = static_cast<size_t>(std::count(done.begin(), done.end(), false));
    const fs::path logs = fs::absolute(out_ / "slurm");
    make_folders(logs);
    const int jobs = cmd_.jobs > 0 ? cmd_.jobs : 1;
    SlurmArray job;
    job.job_name = "gossipsim-" + sweep_.name;
    job.shards = shards;
    job.tasks = tasks;
    job.output = (logs / "%A_%a.log").string();
    job.chdir = fs::current_path().string();
    job.cpus_per_task = jobs * cmd_.workers;
    job.sbatch_args = cmd_.slurm_args;
    job.command = {fs::read_symlink("/proc/self/exe").string(),
                   "sweep",
                   fs::absolute(sweep_.file).string(),
                   "--out",
                   fs::absolute(out_).string(),
                   "--shard",
                   "{task}/" + std::to_string(shards),
                   "--jobs",
                   std::to_string(jobs),
                   "--workers",
                   std::to_string(cmd_.workers),
                   "--kernels",
                   cmd_.kernels};
    if (cmd_.trace) job.command.push_back("--trace");
    for (const auto& set : cmd_.sets) job.command.insert(job.command.end(), {"--set", set});
    const fs::path script = cmd_.slurm_script.empty() ? logs / "sweep.sbatch" : fs::path(cmd_.slurm_script);
    write_file_atomically(script, slurm_batch_script(job));
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
    if (!cmd_.slurm) {
      say(stderr, "sweep {}: {} of {} points to run, as a Slurm job array of {} task(s); submit it with sbatch {}\n",
          sweep_.name, todo, sweep_.size(), tasks.size(), script.string());
      say(stdout, "{}\n", script.string());
      return 0;
    }
    if (tasks.empty()) return gather();
    say(stderr,
        "sweep {}: {} of {} points to run, as a Slurm job array of {} task(s) ({}): submitting it and waiting\n",
        sweep_.name, todo, sweep_.size(), tasks.size(), script.string());
    const fs::path submitted = logs / "sbatch.log";
    int rc = 0, stopped_by = 0;
    std::string job_id;
    {
      Stopper stopper;
      rc = run_child({"sbatch", "--parsable", script.string()}, submitted, stopper, "sbatch");
      std::ifstream in(submitted);
      const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (char c : said) {
        if (c < '0' || c > '9') break;
        job_id += c;
      }
      if (job_id.empty() && !stopper.signal())
        throw InputError(
            "--slurm", "",
            fmt::format("expected a job array that sbatch takes; it refused {} (exit {}): {}", script.string(), rc,
                        said.empty() ? std::string("no output") : said.substr(0, said.find('\n'))));
      if (!job_id.empty()) wait_for_job(job_id, logs / "squeue.log", stopper);
      stopped_by = stopper.signal();
    }
    if (stopped_by && job_id.empty()) {
      say(stderr, "sweep {}: stopped by signal {} before Slurm took the job\n", sweep_.name, stopped_by);
      return 128 + stopped_by;
    }
    if (stopped_by) {
      const int cancelled = std::system(("scancel " + job_id + " > /dev/null 2>&1").c_str());
      say(stderr,
          "sweep {}: stopped by signal {}; Slurm job {} {}; the points not done run when the sweep is "
          "submitted again\n",
          sweep_.name, stopped_by, job_id, cancelled == 0 ? "cancelled" : "could not be cancelled (scancel it)");
      return 128 + stopped_by;
    }
    // Each task that ended without its points, with the last line of its log.
    size_t not_done = 0;
    for (size_t t : tasks) {
      std::vector<size_t> left;
      for (size_t p : shard_points(sweep_.size(), t, shards))
        if (!point_done(p)) left.push_back(p);
      if (left.empty()) continue;
      not_done += left.size();
      const fs::path task_log = logs / fmt::format("{}_{}.log", job_id, t);
      if (!fs::exists(task_log)) {
        say(stderr, "Slurm task {}_{} (point(s) {}) never started: the array was cancelled first\n", job_id, t,
            fmt::join(left, ", "));
        continue;
      }
      std::ifstream task_in(task_log);
      std::string text((std::istreambuf_iterator<char>(task_in)), std::istreambuf_iterator<char>());
      while (!text.empty() && text.back() == '\n') text.pop_back();
      const size_t last = text.rfind('\n');
      say(stderr, "Slurm task {}_{} (point(s) {}) ended without them: {} ({})\n", job_id, t, fmt::join(left, ", "),
          text.empty() ? std::string("no output") : text.substr(last == std::string::npos ? 0 : last + 1),
          task_log.string());
    }
    if (not_done) {
      say(stderr,
          "sweep {}: {} of {} points not done by Slurm job {}; no sweep.csv until every point is done "
          "(submit the sweep again to run them)\n",
          sweep_.name, not_done, sweep_.size(), job_id);
      return 3;
    }
    return gather();
  }

  std::vector<std::string> point_sets(size_t p) const {
    std::vector<std::string> sets = sweep_.overrides(p);
    sets.insert(sets.end() - static_cast<std::ptrdiff_t>(sweep_.axes.size()), cmd_.sets.begin(), cmd_.sets.end());
    return sets;
  }

  // What decides a point's results besides the sweep file: a folder swept
  // with other --set or --kernels is not resumed but refused.
  nlohmann::json settings() const { return {{"set", cmd_.sets}, {"kernels", cmd_.kernels}}; }

  // The folder of a sweep: new, empty, or the same sweep's (resumed; --force
  // starts it over). Anything else is refused. Shards of one sweep share
  // the folder (each point has a claim of its own, run_point); they check
  // and write its marker one at a time.
  void prepare_folder() {
    claim_ = std::make_unique<FolderClaim>(out_, "--out",
                                           cmd_.force ? FolderClaim::Mode::kExclusive : FolderClaim::Mode::kShared);
    check_folder_path(out_, "--out");
    make_folders(out_);
    FolderSetupLock setup(out_);
    if (auto marker = existing_result(out_, {"sweep"}, "--out")) {
      const std::string name = marker->value("name", sweep_.name);
      if (name != sweep_.name && !cmd_.force)
        throw InputError("--out " + out_.string(), "",
                         "expected a folder of sweep " + sweep_.name + "; it holds sweep " + name +
                             " (choose another --out, or --force to start over)");
      const nlohmann::json before = marker->value("settings", settings());
      if (before != settings() && !cmd_.force)
        throw InputError("--out " + out_.string(), "",
                         "expected the settings it was swept with, " + before.dump() + " (now " + settings().dump() +
                             "; the same --set and --kernels to resume, or --force to start over)");
      if (cmd_.force) {
        for (const auto& e : fs::directory_iterator(out_)) fs::remove_all(e.path());
      }
    }
    make_folders(out_ / "points");
    mark(false);
  }

  // A point is done when its run finished: an interrupted one (marked
  // incomplete) runs again.
  bool point_done(size_t p) const {
    auto marker = read_result_marker(out_ / "points" / std::to_string(p));
    return marker && marker->value("complete", true);
  }
  void mark(bool complete) const {
    write_result_marker(
        out_, "sweep",
        {{"name", sweep_.name}, {"points", sweep_.size()}, {"complete", complete}, {"settings", settings()}});
  }

  std::vector<std::string> point_args(size_t p) const {
    const fs::path dir = out_ / "points" / std::to_string(p);
    // A point stopped by a signal took a last checkpoint beside its folder:
    // it goes on from there (to the bytes of a run never stopped) rather
    // than fail on the checkpoint its fresh run would not overwrite.
    if (fs::exists(fs::path(dir.string() + ".checkpoint") / "checkpoint.json"))
      return {"gossipsim", "run", "--resume", dir.string(), "--quiet", "--workers", std::to_string(cmd_.workers)};
    std::vector<std::string> args = {
        "gossipsim", "run",        sweep_.base, "--quiet",   "--force", "--workers", std::to_string(cmd_.workers),
        "--kernels", cmd_.kernels, "--out",     dir.string()};
    if (cmd_.trace) args.push_back("--trace");
    for (const auto& o : point_sets(p)) args.insert(args.end(), {"--set", o});
    return args;
  }

  void run_points(const std::vector<size_t>& todo) {
    const int jobs = cmd_.jobs > 0 ? cmd_.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    started_ = std::chrono::steady_clock::now();
    to_run_ = todo.size();
    boost::asio::thread_pool pool(jobs);
    for (size_t p : todo)
      boost::asio::post(pool, [this, p] {
        if (!stopper_->signal()) run_point(p);
      });
    pool.join();
  }

  // A point runs under a claim of its own (points/<p>.sweep-lock), so that
  // shards, or a sweep started again while another still runs, never run
  // one point twice: a point another process holds is left to it.
  void run_point(size_t p) {
    std::unique_ptr<FolderClaim> claim;
    try {
      claim = std::make_unique<FolderClaim>(point_dir(p), "point", FolderClaim::Mode::kExclusive, kPointClaim);
    } catch (const InputError&) {
      std::lock_guard<std::mutex> lock(mutex_);
      --to_run_;  // not this process's to run after all
      say(stderr, "point {} skipped: process {} is running it\n", p,
          FolderClaim::holder(point_dir(p), kPointClaim).value_or("?"));
      return;
    }
    if (point_done(p)) {  // finished by another process meanwhile
      std::lock_guard<std::mutex> lock(mutex_);
      --to_run_;
      return;
    }
    const fs::path log = out_ / "points" / (std::to_string(p) + ".log");
    const int rc = run_child(point_args(p), log, *stopper_);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopper_->signal()) return;  // stopped, not failed: it runs again on restart
    if (rc == 3 && point_done(p)) {
      // Finished, with results marked not valid (a loss that went NaN): a
      // result of the sweep, whose log says why.
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      say(stderr, "point {} done, with a warning {} ({}): {}", p, progress(), sweep_.values(p).dump(), text);
    } else if (rc != 0) {
      failed_.push_back(p);
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      say(stderr, "point {} failed {} ({}): {}", p, progress(), sweep_.values(p).dump(),
          text.empty() ? "no output\n" : text);
    } else {
      fs::remove(log);
      say(stderr, "point {} done {}: {}\n", p, progress(), sweep_.values(p).dump());
    }
  }

  // "(k of n this run, eta Ts)": the points this process finished (done or
  // failed) of those it set out to run, less those another process took
  // (skipped), and the time the rest will take at the pace so far. Called under mutex_, once per finished point; on
  // Slurm each task says it for its shard.
  std::string progress() {
    ++finished_;
    if (finished_ >= to_run_) return fmt::format("({} of {} this run)", finished_, to_run_);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double eta = elapsed / static_cast<double>(finished_) * static_cast<double>(to_run_ - finished_);
    return fmt::format("({} of {} this run, eta {:.0f}s)", finished_, to_run_, eta);
  }

  fs::path point_dir(size_t p) const { return out_ / "points" / std::to_string(p); }
  std::chrono::steady_clock::time_point started_;
  size_t to_run_ = 0, finished_ = 0;  // points this process runs, and those finished (under mutex_)
  static constexpr const char* kPointClaim = ".sweep-lock";

  // sweep.csv exists only while every point of the grid is done: a failed or
  // unfinished sweep leaves no folder that looks like a whole result.
  int gather() {
    size_t all_done = 0;
    for (size_t p = 0; p < sweep_.size(); ++p) all_done += point_done(p) ? 1 : 0;
    const fs::path csv = out_ / "sweep.csv";
    if (!failed_.empty()) {
      std::error_code ec;
      fs::remove(csv, ec);
      std::sort(failed_.begin(), failed_.end());
      say(stderr, "{} point(s) failed: {} (their logs are in {}/points/); no sweep.csv until every point is done\n",
          failed_.size(), fmt::join(failed_, ", "), out_.string());
      return 3;
    }
    if (all_done < sweep_.size()) {
      std::vector<std::string> running;
      for (size_t p = 0; p < sweep_.size(); ++p)
        if (!point_done(p))
          if (auto pid = FolderClaim::holder(point_dir(p), kPointClaim))
            running.push_back(fmt::format("{} ({})", p, *pid));
      if (!running.empty())
        say(stderr,
            "{} of {} points done; {} running in other processes: {} (the last of them to finish writes "
            "sweep.csv)\n",
            all_done, sweep_.size(), running.size(), fmt::join(running, ", "));
      else
        say(stderr, "{} of {} points done (other shards still to run); sweep.csv is written once all are\n", all_done,
            sweep_.size());
      return 0;
    }
    FolderSetupLock setup(out_);  // one gather at a time, never beside a shard's setup
    write_file_atomically(out_ / "provenance.json", gather_sweep_provenance(sweep_, out_.string()));
    if (sweep_.analysis.declared) write_file_atomically(out_ / "analysis.json", sweep_analysis_json(sweep_));
    write_file_atomically(csv, gather_sweep_csv(sweep_, out_.string()));
    mark(true);
    say(stdout, "{}\n", csv.string());
    return 0;
  }

  const SweepCommand& cmd_;
  Sweep sweep_;
  fs::path out_;
  std::unique_ptr<FolderClaim> claim_;  // no other sweep writes into out_ meanwhile
  Stopper* stopper_ = nullptr;          // while points run
  std::mutex mutex_;
  std::vector<size_t> failed_;
};

}  // namespace

int sweep_command(const SweepCommand& cmd) { return SweepRun(cmd).execute(); }

}  // namespace gossipsim
