// Numbers read from text (command-line options, CSV cells, sweep shards):
// one parser, so that every place reads "1e9", "0x2", "7 Mbit/s" and "1/2/3"
// alike. A number is the whole of the text, in decimal: an optional sign,
// digits with an optional fraction and exponent. Hexadecimal ("0x2"),
// "inf", "nan", blanks and anything after the number are not numbers
// (strtod and stoul took a prefix, or read "0x2" as 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gossipsim {

// A finite decimal number, e.g. "2", "-0.5", "1e-9", ".5".
std::optional<double> parse_decimal(std::string_view text);
// A whole number in decimal digits with an optional sign, e.g. "16", "-3";
// "1e9", "2.0" and "0x10" are not.
std::optional<int64_t> parse_integer(std::string_view text);
// The text without the blanks (spaces, tabs) around it.
std::string_view trim_blanks(std::string_view text);

}  // namespace gossipsim
