// `gossipsim sweep`: every point of a grid run as a `gossipsim run` of its
// own, several at once, into OUT/points/<i>; points already done are
// skipped, so a sweep stopped and started again goes on where it was.
// sweep.csv is gathered only once every point of the grid is done.
#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "analysis/output_dir.h"
#include "cli/commands.h"
#include "sim/base/error.h"
#include "sim/sweep.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

class SweepRun {
 public:
  explicit SweepRun(const SweepCommand& cmd)
      : cmd_(cmd), sweep_(load_sweep(cmd.sweep)),
        out_(cmd.out.empty() ? fs::path("results") / sweep_.name : fs::path(cmd.out)) {}

  int execute() {
    auto [shard, shards] = parse_shard(cmd_.shard);
    prepare_folder();
    mark(false);
    std::vector<size_t> todo;
    size_t done = 0;
    for (size_t p : shard_points(sweep_.size(), shard, shards)) {
      if (point_done(p)) ++done;
      else todo.push_back(p);
    }
    fmt::print(stderr, "sweep {}: {} points, shard {}/{}: {} done already, {} to run\n", sweep_.name, sweep_.size(),
               shard, shards, done, todo.size());
    run_points(todo);
    return gather();
  }

 private:
  // The folder of a sweep: new, empty, or the same sweep's (resumed; --force
  // starts it over). Anything else is refused.
  void prepare_folder() {
    claim_ = std::make_unique<FolderClaim>(out_, "--out");
    if (auto marker = existing_result(out_, {"sweep"}, "--out")) {
      const std::string name = marker->value("name", sweep_.name);
      if (name != sweep_.name && !cmd_.force)
        throw InputError("--out " + out_.string(), "",
                         "a folder of sweep " + sweep_.name + "; it holds sweep " + name +
                             " (choose another --out, or --force to start over)");
      if (cmd_.force) fs::remove_all(out_);
    }
    make_folders(out_ / "points");
  }

  // A point is done when its run finished: an interrupted one (marked
  // incomplete) runs again.
  bool point_done(size_t p) const {
    auto marker = read_result_marker(out_ / "points" / std::to_string(p));
    return marker && marker->value("complete", true);
  }
  void mark(bool complete) const {
    write_result_marker(out_, "sweep", {{"name", sweep_.name}, {"points", sweep_.size()}, {"complete", complete}});
  }

  std::string point_command(size_t p) const {
    static const std::string self = fs::read_symlink("/proc/self/exe").string();
    const fs::path dir = out_ / "points" / std::to_string(p);
    std::string command = shell_quote(self) + " run " + shell_quote(sweep_.base) +
                          " --quiet --force --workers 1 --kernels " + shell_quote(cmd_.kernels) + " --out " +
                          shell_quote(dir.string());
    for (const auto& o : sweep_.overrides(p)) command += " --set " + shell_quote(o);
    return command;
  }

  void run_points(const std::vector<size_t>& todo) {
    const int jobs = cmd_.jobs > 0 ? cmd_.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    boost::asio::thread_pool pool(jobs);
    for (size_t p : todo) boost::asio::post(pool, [this, p] { run_point(p); });
    pool.join();
  }

  void run_point(size_t p) {
    const fs::path log = out_ / "points" / (std::to_string(p) + ".log");
    const int rc = std::system((point_command(p) + " > " + shell_quote(log.string()) + " 2>&1").c_str());
    std::lock_guard<std::mutex> lock(mutex_);
    if (rc != 0) {
      failed_.push_back(p);
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      fmt::print(stderr, "point {} failed ({}): {}", p, sweep_.values(p).dump(), text.empty() ? "no output\n" : text);
    } else {
      fs::remove(log);
      fmt::print(stderr, "point {} done: {}\n", p, sweep_.values(p).dump());
    }
  }

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
      fmt::print(stderr, "{} point(s) failed: {} (their logs are in {}/points/); no sweep.csv until every point is done\n",
                 failed_.size(), fmt::join(failed_, ", "), out_.string());
      return 3;
    }
    if (all_done < sweep_.size()) {
      fmt::print(stderr, "{} of {} points done (other shards still to run); sweep.csv is written once all are\n",
                 all_done, sweep_.size());
      return 0;
    }
    write_file_atomically(csv, gather_sweep_csv(sweep_, out_.string()));
    mark(true);
    fmt::print("{}\n", csv.string());
    return 0;
  }

  const SweepCommand& cmd_;
  Sweep sweep_;
  fs::path out_;
  std::unique_ptr<FolderClaim> claim_;  // no other sweep writes into out_ meanwhile
  std::mutex mutex_;
  std::vector<size_t> failed_;
};

}  // namespace

int sweep_command(const SweepCommand& cmd) { return SweepRun(cmd).execute(); }

}  // namespace gossipsim
