// Errors for bad input. Loading a scenario, a topology or a dataset reports
// what went wrong as an InputError that names the file, the JSON path (or
// another location such as a line) and what was expected; callers at the
// command line print it and exit non-zero. Internal invariants use assert.
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

}  // namespace gossipsim
