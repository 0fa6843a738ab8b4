// Writing a file so that it is either whole or absent: the text goes to a
// temporary sibling (<path>.tmp-<pid>) that is renamed into place.
#pragma once

#include <filesystem>
#include <string>

namespace gossipsim {

void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace gossipsim
