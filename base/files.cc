#include "base/files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace gossipsim {

namespace fs = std::filesystem;

TextFile::TextFile(fs::path path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail(errno);
}

TextFile::~TextFile() {
  if (!file_) return;
  std::fclose(file_);  // abandoned after an error: whatever was written goes
  std::error_code ec;
  fs::remove(path_, ec);
}

void TextFile::write(std::string_view text) {
  buffer_.append(text.data(), text.data() + text.size());
  if (buffer_.size() >= kFlushAt) flush();
}

void TextFile::flush() {
  if (buffer_.size() == 0) return;
  errno = 0;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) fail(errno ? errno : EIO);
  buffer_.clear();
}

void TextFile::close() {
  flush();
  errno = 0;
  const bool flushed = std::fflush(file_) == 0;
  const int error = errno;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0 || !flushed) {
    const int e = flushed ? errno : error;
    std::error_code ec;
    fs::remove(path_, ec);
    throw WriteError(path_.string(), std::strerror(e ? e : EIO));
  }
}

void TextFile::fail(int error) { throw WriteError(path_.string(), std::strerror(error ? error : EIO)); }

void write_file_atomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    TextFile out(tmp);
    out.write(text);
    out.close();
  }
  rename_or_fail(tmp, path);
}

void make_folders(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw WriteError(dir.string(), ec.message());
}

void rename_or_fail(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) {
    std::error_code ignored;
    if (fs::is_regular_file(from, ignored)) fs::remove(from, ignored);
    throw WriteError(to.string(), ec.message());
  }
}

std::string file_digest(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  uint64_t h = 0xcbf29ce484222325ull, size = 0;
  std::vector<unsigned char> buffer(1 << 20);
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0;) {
    size += n;
    for (size_t i = 0; i < n; ++i) h = (h ^ buffer[i]) * 0x100000001b3ull;
  }
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok ? fmt::format("{}:{:016x}", size, h) : "";
}

void copy_folder(const fs::path& from, const fs::path& to) {
  make_folders(to.parent_path());
  std::error_code ec;
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec) throw WriteError(to.string(), ec.message());
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace gossipsim
