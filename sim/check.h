// VIOSIM_CHECK(condition, message): an invariant of the models, whose
// failure is a bug in viosim, never the input's doing (input is refused
// with a Status before it reaches a model). On failure it prints the file,
// line, the condition and the message, and aborts.
#ifndef VIOSIM_SIM_CHECK_H_
#define VIOSIM_SIM_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define VIOSIM_CHECK(condition, message)                                                             \
  do {                                                                                               \
    if (!(condition)) [[unlikely]] {                                                                 \
      std::fprintf(stderr, "viosim: internal invariant failed at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                   #condition, message);                                                             \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (false)

#endif  // VIOSIM_SIM_CHECK_H_
