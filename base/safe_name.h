// Names that become one component of a file path (scenario names, method
// labels, sweep names): results are written under them, so a name must not
// reach outside its folder.
#pragma once

#include <string>

namespace gossipsim {

// Not empty, at most 128 bytes, no '/', '\' or control character, not "."
// or "..", and not starting with '-' (it would read as an option).
inline bool is_safe_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == ".." || name[0] == '-') return false;
  for (unsigned char c : name)
    if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f) return false;
  return true;
}

inline const char* kSafeNameRule =
    "a name usable as a folder name: 1 to 128 characters, no '/', '\\' or control characters, not '.' or '..', "
    "not starting with '-'";

}  // namespace gossipsim
