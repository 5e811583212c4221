// Pseudo-random numbers for the simulator: xoshiro256** (Blackman & Vigna),
// 64-bit output, seeded through SplitMix64.
//
// Every stochastic component of a model owns its own Rng, obtained with
// Rng::ForStream(run_seed, "component name"). Streams are therefore
// independent of the order in which components are created or draw numbers,
// and adding a component does not perturb the draws of the others.
//
// Everything here is integer or exactly specified IEEE arithmetic, so a given
// (seed, name) yields the same sequence with every compiler and standard
// library. No std:: distribution is used anywhere in the engine: their
// algorithms are unspecified and differ between standard libraries.
//
// An Rng is a small value (32 bytes); it is not thread-safe.
#ifndef VIOSIM_SIM_RNG_H_
#define VIOSIM_SIM_RNG_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace sim {

// One step of SplitMix64 (Steele, Lea & Flood): advances *state by the golden
// gamma 0x9e3779b97f4a7c15 and returns the mixed value. A bijection of the
// new state, so successive outputs of one state are all distinct.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 64-bit FNV-1a hash of the bytes of `s` (offset basis 0xcbf29ce484222325,
// prime 0x100000001b3). Stable across platforms; not cryptographic.
uint64_t Fnv1a64(absl::string_view s);

class Rng {
 public:
  // The four state words are four successive SplitMix64 outputs starting
  // from state `seed`. They cannot all be zero, so every seed is valid.
  explicit Rng(uint64_t seed);

  // The stream of component `name` in the run seeded with `seed`:
  //
  //   uint64_t h = Fnv1a64(name);
  //   uint64_t name_key = SplitMix64(&h);   // one step from the hash
  //   return Rng(seed ^ name_key);
  //
  // The same (seed, name) always gives the same stream; different names
  // (or seeds) give unrelated streams, since SplitMix64 seeding decorrelates
  // even starting values that differ in a single bit.
  static Rng ForStream(uint64_t seed, absl::string_view name);

  // How many Rngs this thread has seeded so far (copies not counted): a run
  // that seeds none gives the same result at every seed.
  static uint64_t Seeded();

  // The next 64 uniformly distributed bits.
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform on [0, 1): the top 53 bits of Next() times 2^-53. Every value is
  // a multiple of 2^-53; 0 is possible, 1 is not.
  double Uniform01() {
    return static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }

  // Uniform on the open interval (0, 1): (top 52 bits + 0.5) * 2^-52, so the
  // result lies in [2^-53, 1 - 2^-53] and never rounds to 0 or 1. For
  // logarithms.
  double UniformOpen01() {
    return (static_cast<double>(Next() >> 12) + 0.5) * 0x1.0p-52;
  }

  // Uniform on {0, ..., n-1}, exactly unbiased (Lemire's multiply-and-reject
  // method; a division only happens on the rare possible-reject path).
  // Below(0) returns 0.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      // Reject the first (2^64 mod n) low values so that every result has
      // exactly floor(2^64 / n) preimages.
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // True with probability p (p <= 0: never; p >= 1: always).
  bool Bernoulli(double p) { return Uniform01() < p; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4];
};

}  // namespace sim

#endif  // VIOSIM_SIM_RNG_H_
