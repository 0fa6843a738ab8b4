// The names an enum is written with in JSON and in results: one table per
// enum, read by JsonReader::choice and written back by name_of, so that a
// value and its spelling are settled in one place.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gossipsim {

template <class E>
using EnumNames = std::vector<std::pair<std::string, E>>;

template <class E>
const std::string& name_of(E value, const EnumNames<E>& names) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return names.front().first;  // unreachable for a complete table
}

template <class E>
std::vector<std::string> names_of(const EnumNames<E>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(n.first);
  return out;
}

}  // namespace gossipsim
