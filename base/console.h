// What the commands say to the user on the terminal (progress, warnings,
// the path of a result). A message is never worth a run: where the reader
// has gone away (`gossipsim run ... | head -1` closes the pipe) the stream
// is turned off and the run goes on to write its results. main() ignores
// SIGPIPE so that such a write fails with EPIPE instead of killing the
// process; say() then sends the rest of that stream to /dev/null.
// Thread safe as stdio is: each message is one fputs.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace gossipsim {

// Writes `text` to `stream` (stdout or stderr), then flushes stderr; a
// stream whose reader has gone is sent to /dev/null from then on.
void write_console(std::FILE* stream, const std::string& text);

template <class... Args>
void say(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) {
  write_console(stream, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace gossipsim
