// Seeded random streams.
//
// One master seed; every consumer asks for its own stream by a purpose name
// and an index (usually a node id). A stream's seed is a hash of
// (master, purpose, index), so streams are independent of one another and of
// the order in which they are created: adding a node or a new metric never
// shifts the draws of an existing stream.
#pragma once

#include <boost/random/mersenne_twister.hpp>
#include <cstdint>
#include <string_view>

namespace gossipsim {

using Rng = boost::random::mt19937_64;

uint64_t mix64(uint64_t x);                 // splitmix64 finaliser
uint64_t hash_purpose(std::string_view s);  // FNV-1a, stable across platforms

class Streams {
 public:
  explicit Streams(uint64_t master_seed) : master_(master_seed) {}
  uint64_t master_seed() const { return master_; }
  uint64_t seed_for(std::string_view purpose, uint64_t index = 0) const;
  Rng stream(std::string_view purpose, uint64_t index = 0) const { return Rng(seed_for(purpose, index)); }

 private:
  uint64_t master_;
};

// Uniform integer in [0, n) and uniform real in [0, 1), defined here so the
// draws do not depend on a standard library's distribution code.
uint64_t uniform_index(Rng& rng, uint64_t n);
double uniform01(Rng& rng);

}  // namespace gossipsim
