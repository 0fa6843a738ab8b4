#include "base/numbers.h"

#include <charconv>
#include <cmath>

namespace gossipsim {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

std::string_view trim_blanks(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::optional<double> parse_decimal(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  // from_chars also reads "inf" and "nan"; a decimal starts with a digit,
  // a sign or a point followed by a digit.
  const size_t lead = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() <= lead) return std::nullopt;
  const char c = text[lead];
  if (!is_digit(c) && !(c == '.' && text.size() > lead + 1 && is_digit(text[lead + 1]))) return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_integer(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || !(is_digit(text[0]) || (text[0] == '-' && text.size() > 1 && is_digit(text[1]))))
    return std::nullopt;
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

}  // namespace gossipsim
