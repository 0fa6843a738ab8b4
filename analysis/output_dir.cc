#include "analysis/output_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "base/console.h"
#include "base/error.h"

namespace gossipsim {

namespace fs = std::filesystem;

std::optional<nlohmann::json> read_result_marker(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  const fs::path marker = dir / kResultMarker;
  if (fs::is_regular_file(marker, ec)) {
    std::ifstream in(marker);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("kind") && j["kind"].is_string()) return j;
    return std::nullopt;
  }
  // Results written before markers existed.
  if (fs::is_regular_file(dir / "summary.json", ec) && fs::is_regular_file(dir / "scenario.json", ec))
    return nlohmann::json{{"kind", "run"}};
  if (fs::is_regular_file(dir / "sweep.csv", ec) && fs::is_directory(dir / "points", ec))
    return nlohmann::json{{"kind", "sweep"}, {"complete", true}};
  return std::nullopt;
}

void check_folder_path(const fs::path& p, const std::string& what) {
  if (p.empty()) throw InputError(what, "", "expected a folder path (got an empty one)");
  // The path itself and every folder above it must be folders where they exist.
  fs::path prefix;
  for (const auto& part : p) {
    prefix /= part;
    std::error_code ec;
    fs::file_status st = fs::status(prefix, ec);
    if (ec || !fs::exists(st)) continue;
    if (!fs::is_directory(st)) {
      if (prefix == p) throw InputError(what + " " + p.string(), "", "expected a folder, not an existing file");
      throw InputError(
          what + " " + p.string(), "",
          "expected a path below folders: " + prefix.string() + " is a file, so no folder can be made below it");
    }
  }
}

void check_output_file(const fs::path& p, const std::string& what, const std::string& own_header) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw InputError(what + " " + p.string(), "", "expected a file path, not a folder");
  if (p.has_parent_path()) check_folder_path(p.parent_path(), what);
  if (!fs::exists(p, ec)) return;
  std::ifstream in(p, std::ios::binary);
  std::string head(own_header.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (!in || head != own_header)
    throw InputError(
        what + " " + p.string(), "",
        "expected a new file or one this command wrote before (this one holds something else, and gossipsim "
        "never overwrites a file it did not write)");
}

std::optional<nlohmann::json> existing_result(const fs::path& p, const std::vector<std::string>& kinds,
                                              const std::string& what) {
  check_folder_path(p, what);
  std::error_code ec;
  if (!fs::exists(p, ec) || fs::is_empty(p, ec)) return std::nullopt;
  auto marker = read_result_marker(p);
  if (!marker)
    throw InputError(what + " " + p.string(), "",
                     "expected a new folder, an empty one or an earlier gossipsim result; this folder holds other "
                     "files, which gossipsim never overwrites (choose another " +
                         what + ")");
  const std::string kind = (*marker)["kind"].get<std::string>();
  if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw InputError(what + " " + p.string(), "",
                     fmt::format("expected a folder for a {} result; this one holds a gossipsim {} result (choose "
                                 "another {})",
                                 fmt::join(kinds, " or "), kind, what));
  return marker;
}

fs::path choose_output(const fs::path& wanted, const std::string& kind, bool force, const std::string& what) {
  if (!existing_result(wanted, {kind}, what) || force) return wanted;
  std::error_code ec;
  for (int i = 2;; ++i) {
    fs::path candidate = wanted.string() + "-" + std::to_string(i);
    check_folder_path(candidate, what);
    if (!fs::exists(candidate, ec)) {
      say(stderr, "gossipsim: {} holds an earlier result; writing {} instead (--force replaces it)\n", wanted.string(),
          candidate.string());
      return candidate;
    }
  }
}

OutputDir::OutputDir(fs::path final_path, std::string kind, nlohmann::json marker_extra)
    : final_(std::move(final_path)), kind_(std::move(kind)), marker_(std::move(marker_extra)) {
  staging_ = final_;
  staging_ += ".tmp-" + std::to_string(::getpid());
  fs::remove_all(staging_);
  make_folders(staging_);
}

OutputDir::~OutputDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void OutputDir::commit() {
  write_result_marker(staging_, kind_, marker_);
  fs::path aside;
  std::error_code ec;
  if (fs::exists(final_, ec)) {
    if (fs::is_empty(final_, ec)) {
      fs::remove(final_);
    } else {
      // Only an earlier result of this kind is ever replaced (choose_output
      // checked it; check again, the folder may have changed since).
      auto marker = read_result_marker(final_);
      if (!marker || (*marker)["kind"] != kind_)
        throw InputError(final_.string(), "",
                         "expected no other files in the result folder (it changed during the run; "
                         "the new result is kept in " +
                             staging_.string() + ")");
      aside = final_;
      aside += ".old-" + std::to_string(::getpid());
      rename_or_fail(final_, aside);
    }
  }
  if (final_.has_parent_path()) make_folders(final_.parent_path());
  rename_or_fail(staging_, final_);
  committed_ = true;
  if (!aside.empty()) fs::remove_all(aside, ec);
}

FolderClaim::FolderClaim(const fs::path& folder, const std::string& what, Mode mode, const std::string& suffix)
    : lock_(folder) {
  lock_ += suffix;
  if (lock_.has_parent_path()) make_folders(lock_.parent_path());
  const int operation = (mode == Mode::kShared ? LOCK_SH : LOCK_EX) | LOCK_NB;
  // The file at the path may be replaced between open and flock (its holder
  // removing it on release): the lock counts only once the path still
  // names the locked file. A conflict is tried again for up to 0.5 s: the
  // last holder of a shared lock takes it exclusively, for an instant, to
  // remove the file.
  for (int attempt = 0; attempt < 200; ++attempt) {
    fd_ = ::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw WriteError(lock_.string(), std::strerror(errno));
    if (::flock(fd_, operation) != 0) {
      char pid[32] = {0};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      if (attempt < 50) {
        ::usleep(10000);
        continue;
      }
      throw InputError(
          what + " " + folder.string(), "",
          fmt::format("expected a folder no other gossipsim is writing; process {} is writing it now (wait for "
                      "it to end, or choose another {})",
                      n > 0 ? std::string(pid, static_cast<size_t>(n)) : "?", what));
    }
    struct stat held, named;
    if (::fstat(fd_, &held) == 0 && ::stat(lock_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      // The pid of the latest claimant (one of them, for shared claims).
      const std::string pid = std::to_string(::getpid());
      if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0)
        throw WriteError(lock_.string(), std::strerror(errno));
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw WriteError(lock_.string(), "it keeps being replaced by another process");
}

FolderClaim::~FolderClaim() {
  if (fd_ < 0) return;
  // Removed only by the last holder: one that can hold it alone.
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) ::unlink(lock_.c_str());
  ::close(fd_);
}

std::optional<std::string> FolderClaim::holder(const fs::path& folder, const std::string& suffix) {
  fs::path lock = folder;
  lock += suffix;
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> who;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    char pid[32] = {0};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    who = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("?");
  }
  ::close(fd);
  return who;
}

FolderSetupLock::FolderSetupLock(const fs::path& folder) {
  fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw WriteError(folder.string(), std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) throw WriteError(folder.string(), std::strerror(errno));
}

FolderSetupLock::~FolderSetupLock() {
  if (fd_ >= 0) ::close(fd_);
}

void write_result_marker(const fs::path& dir, const std::string& kind, nlohmann::json extra) {
  nlohmann::json marker = std::move(extra);
  if (!marker.is_object()) marker = nlohmann::json::object();
  marker["kind"] = kind;
  marker["writer"] = "gossipsim";
  write_file_atomically(dir / kResultMarker, marker.dump(2) + "\n");
}

}  // namespace gossipsim
