#include "analysis/output_dir.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace gossipsim {

namespace fs = std::filesystem;

OutputDir::OutputDir(fs::path final_path) : final_(std::move(final_path)) {
  staging_ = final_;
  staging_ += ".tmp-" + std::to_string(::getpid());
  fs::remove_all(staging_);
  fs::create_directories(staging_);
}

OutputDir::~OutputDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void OutputDir::commit() {
  if (fs::exists(final_)) fs::remove_all(final_);
  if (final_.has_parent_path()) fs::create_directories(final_.parent_path());
  fs::rename(staging_, final_);
  committed_ = true;
}

void write_file_atomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

}  // namespace gossipsim
