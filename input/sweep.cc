#include "input/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/files.h"
#include "base/json_reader.h"
#include "base/numbers.h"
#include "base/safe_name.h"
#include "input/scenario_reader.h"

namespace gossipsim {

namespace fs = std::filesystem;

size_t Sweep::size() const {
  size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

nlohmann::json Sweep::values(size_t index) const {
  nlohmann::json v = nlohmann::json::object();
  for (size_t k = axes.size(); k-- > 0;) {
    const auto& a = axes[k];
    v[a.path] = a.values[index % a.values.size()];
    index /= a.values.size();
  }
  return v;
}

std::vector<std::string> Sweep::overrides(size_t index) const {
  std::vector<std::string> out;
  for (auto it = fixed.begin(); it != fixed.end(); ++it) out.push_back(it.key() + "=" + it.value().dump());
  nlohmann::json v = values(index);
  for (const auto& a : axes) out.push_back(a.path + "=" + v[a.path].dump());
  return out;
}

namespace {

// Whether one JSON pointer is the other or lies below it ("/network" and
// "/network/model"; not "/net" and "/network").
bool overlapping(const std::string& a, const std::string& b) {
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  return longer.compare(0, shorter.size(), shorter) == 0 &&
         (longer.size() == shorter.size() || longer[shorter.size()] == '/');
}

// A key as one token of a JSON pointer (RFC 6901): "/seed" is "~1seed".
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace

Sweep load_sweep(const std::string& file) {
  nlohmann::json doc = JsonReader::parse_file(file);
  JsonReader r(doc, file);
  r.expect_object();
  Sweep s;
  s.file = file;
  s.name = r.string("name");
  r.require(is_safe_name(s.name), "name", kSafeNameRule);
  fs::path base = r.string("base");
  if (base.is_relative()) base = fs::path(file).parent_path() / base;
  if (!fs::exists(base)) r.fail("base", "the path of a scenario file (" + base.string() + " not found)");
  s.base = base.string();
  s.fixed = nlohmann::json::object();
  if (auto set = r.child("set")) {
    set->expect_object();
    for (auto it = set->value().begin(); it != set->value().end(); ++it) {
      if (it.key().empty() || it.key()[0] != '/') set->fail(it.key(), "a JSON pointer such as /stop/virtual_s");
      s.fixed[it.key()] = it.value();
      set->has(it.key());
    }
    set->done();
  }
  JsonReader axes = r.at("axes");
  for (size_t i = 0; i < axes.array_size(); ++i) {
    JsonReader a = axes.element(i);
    SweepAxis axis;
    axis.path = a.string("path");
    if (axis.path.empty() || axis.path[0] != '/') a.fail("path", "a JSON pointer such as /seed");
    // Two overrides of one value (or of a value and a block holding it):
    // the later would silently win, and a repeated axis runs every point twice.
    for (size_t j = 0; j < s.axes.size(); ++j)
      if (overlapping(axis.path, s.axes[j].path))
        a.fail("path",
               fmt::format("a path no other axis sets (/axes/{} sets {}; merge the two axes)", j, s.axes[j].path));
    for (auto it = s.fixed.begin(); it != s.fixed.end(); ++it)
      if (overlapping(axis.path, it.key()))
        a.fail("path", fmt::format("a path that /set does not fix (it sets {}; keep it in one of the two)", it.key()));
    JsonReader values = a.at("values");
    for (size_t k = 0; k < values.array_size(); ++k) {
      const nlohmann::json& v = values.element(k).value();
      for (size_t before = 0; before < k; ++before)
        if (axis.values[before] == v)
          values.element(k).fail(
              fmt::format("a value not listed already (it is /axes/{}/values/{}: the points would "
                          "run twice)",
                          i, before));
      axis.values.push_back(v);
    }
    if (axis.values.empty()) a.fail("values", "a non-empty array");
    a.done();
    s.axes.push_back(std::move(axis));
  }
  if (s.axes.empty()) r.fail("axes", "at least one axis");
  double points = 1;
  for (const auto& a : s.axes) points *= static_cast<double>(a.values.size());
  if (points > kMaxSweepPoints)
    r.fail("axes", fmt::format("a grid of at most {} points (these axes make {:.0f})", kMaxSweepPoints, points));
  r.string("description", "");
  if (auto a = r.child("analysis")) {
    a->expect_object();
    s.analysis.declared = true;
    s.analysis.reference = a->string("reference", "");
    s.analysis.family = a->string("family", "");
    if (a->has("target")) {
      s.analysis.target = a->number("target");
      a->require(*s.analysis.target > 0 && *s.analysis.target <= 1, "target", "an accuracy in (0, 1]");
    }
    if (auto primary = a->child("primary")) {
      for (size_t i = 0; i < primary->array_size(); ++i) {
        const JsonReader cell = primary->element(i);
        cell.expect_object();
        if (cell.value().empty()) cell.fail("a cell named by at least one axis, e.g. {\"/topology/nodes\": 64}");
        for (auto it = cell.value().begin(); it != cell.value().end(); ++it) {
          const auto axis =
              std::find_if(s.axes.begin(), s.axes.end(), [&](const SweepAxis& x) { return x.path == it.key(); });
          if (axis == s.axes.end())
            throw InputError(file, cell.path() + "/" + pointer_token(it.key()),
                             "expected the path of one of the sweep's axes");
          if (axis->path == "/seed")
            throw InputError(file, cell.path() + "/" + pointer_token(it.key()),
                             "expected an axis other than /seed (a cell holds every seed)");
          if (std::find(axis->values.begin(), axis->values.end(), it.value()) == axis->values.end())
            throw InputError(file, cell.path() + "/" + pointer_token(it.key()), "expected one of the axis's values");
          cell.has(it.key());
        }
        cell.done();
      }
      s.analysis.primary = primary->value();
    }
    a->done();
  }
  r.done();
  return s;
}

std::vector<size_t> shard_points(size_t total, size_t shard, size_t shards) {
  std::vector<size_t> out;
  for (size_t i = shard; i < total; i += shards) out.push_back(i);
  return out;
}

void check_sweep_values(const Sweep& sweep, const std::vector<std::string>& sets) {
  // Point 0's overrides with axis `changed` at value `k` (-1: none changed),
  // in the order a point's run applies them: the sweep's "set", the command
  // line's --set, the axes.
  auto overrides = [&](int changed, size_t k) {
    std::vector<std::string> out;
    for (auto it = sweep.fixed.begin(); it != sweep.fixed.end(); ++it)
      out.push_back(it.key() + "=" + it.value().dump());
    out.insert(out.end(), sets.begin(), sets.end());
    for (size_t i = 0; i < sweep.axes.size(); ++i)
      out.push_back(sweep.axes[i].path + "=" + sweep.axes[i].values[static_cast<int>(i) == changed ? k : 0].dump());
    return out;
  };
  const std::string& base = sweep.base;
  // Where the sweep wrote what the base refused at `e`'s path: an axis's
  // path (a key the base does not have) or value, a key of /set, a --set.
  auto blame_point_zero = [&](const InputError& e) -> InputError {
    const std::string said = fmt::format("{} says: {}: {}", base, e.path().empty() ? "/" : e.path(), e.expected());
    for (size_t j = 0; j < sweep.axes.size(); ++j) {
      const std::string& path = sweep.axes[j].path;
      if (!overlapping(e.path(), path)) continue;
      if (e.path().size() < path.size() && e.expected().rfind("unknown key", 0) == 0)
        return InputError(sweep.file, fmt::format("/axes/{}/path", j),
                          fmt::format("expected a JSON pointer to a value of the base scenario; {}", said));
      if (e.path().size() < path.size())
        return InputError(
            sweep.file, fmt::format("/axes/{}/values/0", j),
            fmt::format("expected a value of {} that fits the rest of the sweep's first point; {} (sweep the "
                        "two together, as one axis of the block that holds both, or change this value)",
                        path, said));
      return InputError(
          sweep.file, fmt::format("/axes/{}/values/0", j),
          fmt::format("expected a value the base scenario takes at {}; {} (change this value)", path, said));
    }
    for (auto it = sweep.fixed.begin(); it != sweep.fixed.end(); ++it)
      if (overlapping(e.path(), it.key()))
        return InputError(sweep.file, "/set/" + pointer_token(it.key()),
                          fmt::format("expected a value the base scenario takes at {}; {}", it.key(), said));
    for (const std::string& set : sets)
      if (overlapping(e.path(), set.substr(0, set.find('='))))
        return InputError("--set " + set, "", fmt::format("expected a value the base scenario takes; {}", said));
    return InputError(sweep.file, "",
                      fmt::format("expected a base scenario that the sweep's first point can run; {}", said));
  };
  Scenario first;
  try {
    first = load_scenario(base, overrides(-1, 0));
  } catch (const InputError& e) {
    throw blame_point_zero(e);
  }
  // The declared analysis names what the points run: found out now, not
  // when the tables are drawn hours later.
  if (!sweep.analysis.reference.empty()) {
    std::string labels;
    bool found = false;
    for (const MethodOptions& m : first.methods) {
      labels += (labels.empty() ? "" : ", ") + m.label;
      found = found || m.label == sweep.analysis.reference;
    }
    if (!found)
      throw InputError(sweep.file, "/analysis/reference",
                       fmt::format("expected the label of one of the methods the points run ({})", labels));
  }
  if (sweep.analysis.target) {
    std::string targets;
    for (double t : first.eval.targets) targets += (targets.empty() ? "" : ", ") + fmt::format("{:g}", t);
    if (std::find(first.eval.targets.begin(), first.eval.targets.end(), *sweep.analysis.target) ==
        first.eval.targets.end())
      throw InputError(
          sweep.file, "/analysis/target",
          fmt::format("expected one of the points' /eval/targets ({})", targets.empty() ? "none" : targets));
  }
  for (size_t i = 0; i < sweep.axes.size(); ++i)
    for (size_t k = 1; k < sweep.axes[i].values.size(); ++k) {
      try {
        load_scenario(base, overrides(static_cast<int>(i), k));
      } catch (const InputError& e) {
        const std::string& path = sweep.axes[i].path;
        const std::string where = fmt::format("/axes/{}/values/{}", i, k);
        const std::string said =
            fmt::format("with it, {} says: {}: {}", base, e.path().empty() ? "/" : e.path(), e.expected());
        if (overlapping(e.path(), path))
          throw InputError(
              sweep.file, where,
              fmt::format("expected a value the base scenario takes at {}; {} (change this value)", path, said));
        std::string pinned;
        for (auto it = sweep.fixed.begin(); it != sweep.fixed.end(); ++it)
          if (overlapping(e.path(), it.key())) pinned = "/set/" + pointer_token(it.key()) + " sets it";
        for (const std::string& set : sets)
          if (overlapping(e.path(), set.substr(0, set.find('=')))) pinned = "--set " + set + " sets it";
        throw InputError(
            sweep.file, where,
            fmt::format("expected a value of {} that fits the rest of the sweep; {} ({}: sweep the two together, "
                        "as one axis of the block that holds both, or change this value)",
                        path, said, pinned.empty() ? "the base pins " + e.path() : pinned));
      }
    }
}

std::pair<size_t, size_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash != std::string::npos) {
    const auto i = parse_integer(std::string_view(text).substr(0, slash));
    const auto n = parse_integer(std::string_view(text).substr(slash + 1));
    if (i && n && *n >= 1 && *i >= 0 && *i < *n && *n <= static_cast<int64_t>(kMaxSweepPoints))
      return {static_cast<size_t>(*i), static_cast<size_t>(*n)};
  }
  throw InputError("--shard " + text, "",
                   fmt::format("expected i/n, two whole numbers with 0 <= i < n <= {}, e.g. 0/4", kMaxSweepPoints));
}

std::pair<size_t, std::vector<size_t>> slurm_tasks(size_t total, const std::vector<bool>& done, size_t tasks) {
  const size_t shards = std::max<size_t>(1, std::min(tasks ? tasks : total, kSlurmMaxTasks));
  std::vector<size_t> open;
  for (size_t t = 0; t < shards; ++t)
    for (size_t p : shard_points(total, t, shards))
      if (p >= done.size() || !done[p]) {
        open.push_back(t);
        break;
      }
  return {shards, open};
}

std::string slurm_array_spec(const std::vector<size_t>& indices) {
  std::string spec;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!spec.empty()) spec += ',';
    spec += j == i ? std::to_string(indices[i]) : fmt::format("{}-{}", indices[i], indices[j]);
    i = j + 1;
  }
  return spec;
}

std::string slurm_batch_script(const SlurmArray& job) {
  std::string s = "#!/bin/bash\n";
  s += fmt::format("#SBATCH --job-name={}\n", job.job_name);
  s += fmt::format("#SBATCH --array={}\n", slurm_array_spec(job.tasks));
  s += fmt::format("#SBATCH --cpus-per-task={}\n", job.cpus_per_task);
  s += fmt::format("#SBATCH --output={}\n", job.output);
  s += fmt::format("#SBATCH --chdir={}\n", job.chdir);
  for (const auto& a : job.sbatch_args) s += "#SBATCH " + a + "\n";
  s += "# Written by gossipsim sweep: task t of the array runs shard t/" + std::to_string(job.shards) +
       " of the sweep, skips\n"
       "# its points already done, and the last task to finish writes sweep.csv. A task\n"
       "# stopped by a signal (scancel, a time limit, a lost node) cancels the whole array,\n"
       "# whose points not done run when the sweep is submitted again.\n";
  s += "trap 'stopped=1' INT TERM\n";
  for (size_t i = 0; i < job.command.size(); ++i) {
    const std::string& a = job.command[i];
    const size_t at = a.find("{task}");
    if (i) s += ' ';
    if (at == std::string::npos) {
      s += shell_quote(a);
      continue;
    }
    if (at > 0) s += shell_quote(a.substr(0, at));
    s += "\"${SLURM_ARRAY_TASK_ID}\"";
    if (at + 6 < a.size()) s += shell_quote(a.substr(at + 6));
  }
  s += "\ncode=$?\n";
  s += "if [ \"$code\" -ge 128 ] || [ -n \"${stopped:-}\" ]; then scancel \"$SLURM_ARRAY_JOB_ID\"; fi\n";
  return s + "exit \"$code\"\n";
}

void check_sbatch_arg(const std::string& arg) {
  const std::string where = "--slurm-arg " + arg;
  if (arg.size() < 2 || arg[0] != '-' || arg.find_first_of("\n\r") != std::string::npos)
    throw InputError(where, "", "expected an option of sbatch on one line, e.g. --slurm-arg=--time=02:00:00");
  const std::string name = arg.substr(0, arg.find('='));
  for (const char* ours :
       {"-a", "--array", "-o", "--output", "-e", "--error", "-D", "--chdir", "-W", "--wait", "--parsable"})
    if (name == ours || (name.size() > 2 && name[1] != '-' && name.substr(0, 2) == ours))
      throw InputError(where, "",
                       "expected an option the array does not set itself (gossipsim sweep --slurm decides " +
                           std::string(ours) + ")");
}

}  // namespace gossipsim
