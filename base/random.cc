#include "base/random.h"

#include <boost/random/uniform_int_distribution.hpp>

namespace gossipsim {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_purpose(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t Streams::seed_for(std::string_view purpose, uint64_t index) const {
  return mix64(mix64(master_ ^ hash_purpose(purpose)) + mix64(index + 0x632be59bd9b4e019ULL));
}

uint64_t uniform_index(Rng& rng, uint64_t n) {
  return boost::random::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
}

double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace gossipsim
