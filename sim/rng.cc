#include "sim/rng.h"

namespace sim {

uint64_t Fnv1a64(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

namespace {
thread_local uint64_t seeded = 0;
}  // namespace

uint64_t Rng::Seeded() { return seeded; }

Rng::Rng(uint64_t seed) {
  ++seeded;
  uint64_t state = seed;
  for (uint64_t& word : s_) word = SplitMix64(&state);
}

Rng Rng::ForStream(uint64_t seed, absl::string_view name) {
  uint64_t h = Fnv1a64(name);
  const uint64_t name_key = SplitMix64(&h);
  return Rng(seed ^ name_key);
}

}  // namespace sim
