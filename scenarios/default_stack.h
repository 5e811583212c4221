// scenarios/baremetal_optane.textproto, built into the binary: the stack
// `viosim fio` runs on when no --stack is given and the file is not found
// from the working directory.
#ifndef VIOSIM_SCENARIOS_DEFAULT_STACK_H_
#define VIOSIM_SCENARIOS_DEFAULT_STACK_H_

namespace viosim {

inline constexpr char kDefaultStackPath[] = "scenarios/baremetal_optane.textproto";
extern const char kDefaultStackText[];

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_DEFAULT_STACK_H_
