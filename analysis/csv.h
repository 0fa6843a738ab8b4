// One CSV writer's cell rule (RFC 4180): a cell holding a comma, a quote or
// a line break is quoted, its quotes doubled; any other cell is written as
// it is. Every CSV gossipsim writes goes through it.
#pragma once

#include <string>

namespace gossipsim {

inline std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace gossipsim
