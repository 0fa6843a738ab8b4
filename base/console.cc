#include "base/console.h"

#include <cerrno>

namespace gossipsim {

void write_console(std::FILE* stream, const std::string& text) {
  errno = 0;
  const bool written = std::fputs(text.c_str(), stream) >= 0 && (stream != stderr || std::fflush(stream) == 0);
  if (written) return;
  // A closed pipe (EPIPE), a terminal gone (EIO) or a full disk: the
  // messages are lost, the run is not.
  std::clearerr(stream);
  if (!std::freopen("/dev/null", "w", stream)) std::clearerr(stream);
}

}  // namespace gossipsim
