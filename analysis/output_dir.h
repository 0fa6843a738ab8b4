// Result folders that never destroy a user's files.
//
// Every folder gossipsim writes carries a marker file, `.gossipsim`, a JSON
// object {"kind": "run" | "sweep" | "plots", ...}. Only a folder with a
// marker (or, for runs, one written before markers existed: summary.json and
// scenario.json side by side) counts as an earlier result; nothing else is
// ever replaced or removed.
//
// choose_output() applies the rules for a path given with --out:
//   - a path that is, or lies below, an existing file is refused;
//   - a missing path or an empty folder is used as it is;
//   - an earlier result of the same kind is replaced with `force`, or else
//     the result goes to the first free numbered sibling (DIR-2, DIR-3, ...);
//   - any other existing folder is refused.
// Refusals are InputErrors that name the path and say what was expected.
//
// OutputDir writes into a temporary sibling folder (<final>.tmp-<pid>) and
// renames it into place at commit(): a run that fails or is interrupted
// leaves no folder under the final name that looks complete. An earlier
// result under the final name is moved aside first and removed only once
// the new one is in place.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/files.h"

namespace gossipsim {

inline constexpr const char* kResultMarker = ".gossipsim";

// The marker of `dir`, if it holds a gossipsim result (legacy runs read as
// {"kind": "run"}); nullopt for anything else, a missing folder included.
std::optional<nlohmann::json> read_result_marker(const std::filesystem::path& dir);

// Refuses a path that is, or lies below, an existing file that is not a
// folder. `what` names the option in messages (e.g. "--out").
void check_folder_path(const std::filesystem::path& p, const std::string& what);

// Refuses, for a file to be written, a path that is an existing folder, lies
// below an existing file, or is an existing file that does not begin with
// `own_header` (what gossipsim writes there: an earlier result of the same
// command may be replaced, a user's file never).
void check_output_file(const std::filesystem::path& p, const std::string& what, const std::string& own_header);

// The one check every folder a command writes into goes through: nullopt
// for a missing or empty folder (free to use), the marker of an earlier
// gossipsim result of one of `kinds` (any kind when empty); anything else
// (a file, a path below a file, a folder of other files or of another kind
// of result) is refused.
std::optional<nlohmann::json> existing_result(const std::filesystem::path& p, const std::vector<std::string>& kinds,
                                              const std::string& what);

// Where a result of `kind` asked for at `wanted` goes (rules above). Says on
// stderr when it picks a numbered folder.
std::filesystem::path choose_output(const std::filesystem::path& wanted, const std::string& kind, bool force,
                                    const std::string& what = "--out");

class OutputDir {
 public:
  // `final_path` should come from choose_output(); the marker written at
  // commit() is {"kind": kind} plus `marker_extra`.
  OutputDir(std::filesystem::path final_path, std::string kind, nlohmann::json marker_extra = nlohmann::json::object());
  ~OutputDir();  // removes the temporary folder unless committed
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& final_path() const { return final_; }
  const std::filesystem::path& staging() const { return staging_; }
  std::filesystem::path file(const std::string& name) const { return staging_ / name; }
  // Adds to the marker written at commit() (e.g. {"complete": false}).
  void mark(const nlohmann::json& extra) { marker_.update(extra); }
  void commit();

 private:
  std::filesystem::path final_, staging_;
  std::string kind_;
  nlohmann::json marker_;
  bool committed_ = false;
};

// Claims a result folder for one process: an advisory lock (flock) on the
// file <folder><suffix> beside it (suffix ".lock" unless said), which the
// kernel releases when the process ends however it ends, so a killed run
// never leaves a folder stuck. A claim that conflicts with one a live
// process holds is refused in one line (an InputError naming the folder and
// that process) instead of both writing and one silently replacing the
// other.
//
// Exclusive claims (a run, a sweep started over with --force) exclude every
// other claim. Shared claims (the shards of one sweep writing into one
// folder, each point under a claim of its own) exclude only exclusive ones.
// The lock file is removed when the last claim on it is released; one left
// by a killed process is taken over. A conflict is retried for a moment
// before it is refused, since a claim being released holds the file
// exclusively for the instant it takes to remove it.
class FolderClaim {
 public:
  enum class Mode { kExclusive, kShared };
  FolderClaim(const std::filesystem::path& folder, const std::string& what, Mode mode = Mode::kExclusive,
              const std::string& suffix = ".lock");
  ~FolderClaim();
  FolderClaim(const FolderClaim&) = delete;
  FolderClaim& operator=(const FolderClaim&) = delete;

  // The claim a live process holds on `folder` (its pid as the lock file
  // says), or nullopt when nobody does. Takes no claim.
  static std::optional<std::string> holder(const std::filesystem::path& folder, const std::string& suffix = ".lock");

 private:
  std::filesystem::path lock_;
  int fd_ = -1;
};

// Holds a folder's own lock (flock on the folder itself, blocking) while a
// process sets it up, so that processes sharing a folder (a sweep's shards)
// check and write its marker one at a time. Leaves no file behind.
class FolderSetupLock {
 public:
  explicit FolderSetupLock(const std::filesystem::path& folder);
  ~FolderSetupLock();
  FolderSetupLock(const FolderSetupLock&) = delete;
  FolderSetupLock& operator=(const FolderSetupLock&) = delete;

 private:
  int fd_ = -1;
};

// Writes the marker of a result folder written in place (sweeps, plots).
void write_result_marker(const std::filesystem::path& dir, const std::string& kind,
                         nlohmann::json extra = nlohmann::json::object());

}  // namespace gossipsim
