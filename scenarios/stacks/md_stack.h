// What the md stacks (stack.raid1, stack.raid10) share, as their models
// share md (models/md/md_array.h): the shared-line costs (the platform's
// cache lines, homed on the stack's home socket, and the wait queue lock
// word's hand-off scaled by lock_word_transfers), the md costs and brd's
// read by one list, the built stack's base (MdStack), and the metrics that
// mean the same in both: the conf->wait_barrier lock's rows and where the
// CPUs' time goes.
#ifndef VIOSIM_SCENARIOS_STACKS_MD_STACK_H_
#define VIOSIM_SCENARIOS_STACKS_MD_STACK_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/md/brd.h"
#include "models/md/md_array.h"
#include "models/sync/cache_line.h"
#include "models/sync/handoff_costs.h"
#include "scenarios/params.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/stack.h"
#include "sim/measurement.h"

namespace viosim::stacks {

struct MdLineCosts {
  models::LineCosts lines;             // the lines, and their hand-off table
  models::LockHandoffCosts wait_lock;  // the lock word's contended hand-off
};

// `k`: lock word transfers per contended hand-off. InvalidArgument naming
// the platform's field.
absl::StatusOr<MdLineCosts> MdLines(const Params& scenario, int home_socket, double k);

// What an md stack reads of stack.<name> besides its placements.
struct MdStackInputs {
  models::BrdCosts brd;
  MdLineCosts lines;
  double lock_word_transfers = 0;
};
// Reads stack.<name>'s md costs into `*c` (has_sleeper only when
// `has_sleeper`: a stack whose path never calls wq_has_sleeper does not
// read it), then the personality's `own` slots, brd's costs,
// lock_word_transfers and home_socket. InvalidArgument naming the field.
absl::StatusOr<MdStackInputs> ReadMdStack(const Params& scenario, absl::string_view name, models::MdCosts* c,
                                          absl::Span<const CostSlot> own, bool has_sleeper);

// A built md stack: the machine, the array and the lock word's transfers
// per contended hand-off, which the metrics both md stacks share read.
class MdStack : public BuiltStack {
 public:
  MdStack(Machine& m, double lock_word_transfers) : machine_(&m), lock_word_transfers_(lock_word_transfers) {}
  virtual const models::MdArray& md() const = 0;
  Machine& machine() const { return *machine_; }
  double lock_word_transfers() const { return lock_word_transfers_; }

 protected:
  Machine* machine_;

 private:
  double lock_word_transfers_;
};

// conf->wait_barrier's lock: acquisitions per I/O, contended share, wait
// per I/O, and the lock word's transfers per I/O (lock_word_transfers per
// contended hand-off).
MetricDecls<MdStack> WaitBarrierMetrics();
// Where the CPUs' time goes, in percent of the machine's CPU time: counted
// by the md path as it charges it (md, brd, direct I/O; MdArray::Stats),
// and from the CPUs' own accounting (spinning, fio's user time, the rest of
// system time: syscall entry and exit, aio's per-iocb and per-event work,
// context switches; idle).
MetricDecls<MdStack> CpuSplitMetrics();
// The I/Os md has taken since the last reset.
double MdIos(const models::MdArray& md);

}  // namespace viosim::stacks

#endif  // VIOSIM_SCENARIOS_STACKS_MD_STACK_H_
