// What a CPU spinning for a lock does to the machine beside spinning, when
// its platform makes the spin visible: a vCPU whose WFE traps into the
// hypervisor (models/kvm/kvm.h). The lock's user starts it when it has to
// wait and ends it by moving the generation on when it has the lock.
#ifndef VIOSIM_MODELS_CPU_SPIN_TRAPS_H_
#define VIOSIM_MODELS_CPU_SPIN_TRAPS_H_

#include <cstdint>

#include "sim/task.h"

namespace models {

class SpinTraps {
 public:
  virtual ~SpinTraps() = default;
  // Runs while `*generation` equals `mine`. REQUIRES: `generation` outlives
  // the run.
  virtual sim::Task WhileSpinning(const uint64_t* generation, uint64_t mine) = 0;
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_SPIN_TRAPS_H_
