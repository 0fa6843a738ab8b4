// Writing files so that a failure is one clear error and never a file that
// looks whole. Every write of the tool goes through here: a full disk, a
// read-only folder or a parent that cannot be made is a WriteError naming
// the path and the system's reason (base/error.h), which the command
// reports in one line with exit 2.
//
// TextFile buffers and checks every write and the close; its destructor
// never throws (an error after which the file is abandoned is already
// reported), so an exception while writing unwinds cleanly. Not thread
// safe: one TextFile per thread.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace gossipsim {

class TextFile {
 public:
  explicit TextFile(std::filesystem::path path);  // creates or truncates it
  ~TextFile();
  TextFile(const TextFile&) = delete;
  TextFile& operator=(const TextFile&) = delete;

  template <class... Args>
  void print(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), f, std::forward<Args>(args)...);
    if (buffer_.size() >= kFlushAt) flush();
  }
  void write(std::string_view text);
  // Writes what is buffered and closes the file; a WriteError if any write
  // failed. Required: a file not closed is removed by the destructor.
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  void flush();
  [[noreturn]] void fail(int error);

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  fmt::memory_buffer buffer_;
};

// A file either whole or absent: the text goes to a temporary sibling
// (<path>.tmp-<pid>) that is renamed into place.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);
// A folder and its parents; a WriteError if one cannot be made.
void make_folders(const std::filesystem::path& dir);
// Renames, or a WriteError naming `to`.
void rename_or_fail(const std::filesystem::path& from, const std::filesystem::path& to);
// What a file holds, in short: its size and the FNV-1a 64 hash of its bytes
// ("<bytes>:<16 hex digits>"); empty when it cannot be read.
std::string file_digest(const std::filesystem::path& path);
// Copies a folder (recursively, replacing files), or a WriteError.
void copy_folder(const std::filesystem::path& from, const std::filesystem::path& to);
// The text a POSIX shell reads back as `text` ('...', with ' as '\\'').
std::string shell_quote(const std::string& text);

}  // namespace gossipsim
