// Errors for bad input. Loading a scenario, a topology or a dataset reports
// what went wrong as an InputError that names the file, the JSON path (or
// another location such as a line) and what was expected; callers at the
// command line print it and exit non-zero. Internal invariants are checked
// with GOSSIPSIM_CHECK, in every build.
#pragma once

#include <stdexcept>
#include <string>

namespace gossipsim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string path, std::string expected)
      : std::runtime_error(format(file, path, expected)),
        file_(std::move(file)),
        path_(std::move(path)),
        expected_(std::move(expected)) {}

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const std::string& expected() const { return expected_; }

 private:
  static std::string format(const std::string& file, const std::string& path, const std::string& expected) {
    std::string where = file.empty() ? std::string("<input>") : file;
    if (!path.empty()) where += ": " + path;
    return where + ": " + expected;
  }
  std::string file_, path_, expected_;
};

// A file or folder that could not be written: a full disk, a read-only
// folder, a parent that cannot be made. Like bad input, the command reports
// it in one line ("cannot write PATH: reason") and exits 2, having left no
// file that looks whole.
class WriteError : public std::runtime_error {
 public:
  WriteError(std::string path, std::string reason)
      : std::runtime_error("cannot write " + path + ": " + reason),
        path_(std::move(path)),
        reason_(std::move(reason)) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

// A broken internal invariant: a bug in gossipsim, never bad input.
// GOSSIPSIM_CHECK(condition, "what went wrong") throws it where the
// condition is false, in release builds too (each check is one comparison
// on a path taken at most once per event), so that the command reports it
// in one line naming the source line and leaves its output marked
// incomplete, as any other failure does, rather than running on with a
// state the results would silently inherit.
class InternalError : public std::logic_error {
 public:
  InternalError(const char* file, int line, const std::string& what)
      : std::logic_error("internal error at " + std::string(file) + ":" + std::to_string(line) + ": " + what +
                         " (a bug in gossipsim: please report it with the scenario)") {}
};

}  // namespace gossipsim

#define GOSSIPSIM_CHECK(condition, what) \
  ((condition) ? void(0) : throw ::gossipsim::InternalError(__FILE__, __LINE__, what))
