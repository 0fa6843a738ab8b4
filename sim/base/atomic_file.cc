#include "sim/base/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace gossipsim {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, path);
}

}  // namespace gossipsim
