// What went wrong in LibTorch, in one line, for an InputError.
#pragma once

#include <algorithm>
#include <string>

namespace gossipsim {

// The first line of a LibTorch error (without its C++ backtrace), or the
// last line of an error raised in the TorchScript interpreter (its first
// lines are a traceback); at most 300 characters.
inline std::string torch_error_line(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  if (what.find("The following operation failed in the TorchScript interpreter") != std::string::npos) {
    const size_t end = what.find_last_not_of("\n ");
    const size_t newline = what.rfind('\n', end);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    line = what.substr(start, end - start + 1);
  }
  return line.substr(0, 300);
}

}  // namespace gossipsim
