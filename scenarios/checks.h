// The rules that tie fields of a resolved scenario to each other, and an
// fio job file to the stack it runs on.
//
// The loader checks every field on its own (units, bounds). What it cannot
// see is a combination the models cannot run: a virtqueue too small for the
// requests it is asked to hold, an interrupt routed to a vCPU the guest does
// not have, two fio jobs on the one vCPU the blk-poll model gives a single
// I/O, a run longer than simulated time can count, a workload in which no
// simulated time passes. Those are refused here, once a variant is resolved
// and before anything runs, each with the place its value came from:
//
//   FILE:LINE:COLUMN (variant 'v'): field 'a' (1) ... field 'b' (2, at FILE:LINE:COLUMN) ...
//   FILE (variant 'v'): --set 'a=1': field 'a' (1) ... field 'b' (2, by default) ...
//   JOB.fio:LINE: job 'x' on FILE (variant 'v'): ... field 'b' (2, from --set 'b=2') ...
//
// The models keep their own aborts as internal invariants; these rules are
// what keeps input away from them. Every failure is InvalidArgument (or the
// job file's own NotFound), all problems of a scenario reported together.
#ifndef VIOSIM_SCENARIOS_CHECKS_H_
#define VIOSIM_SCENARIOS_CHECKS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "models/fio/job.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"
#include "sim/time.h"

namespace viosim {

// The longest span of simulated time viosim accepts: any single duration,
// a run's warm-up plus its measured window, an fio job's ramp plus runtime.
// Simulated time is counted in 64-bit picoseconds (about 106 days), and
// several such spans added up must still fit.
inline constexpr sim::Time kMaxSimulatedTime = sim::Time::Seconds(1000000);

// The default of run.max_request_slots, the memory budget: the most request
// slots a run may preallocate: fio's I/O units (numjobs x iodepth over every
// job), blk-mq tags (CPUs x queue_depth x queue types), the blk-poll stack's
// ring entries (vCPUs x ring_size). About 2 GB; --set run.max_request_slots=N
// raises it.
inline constexpr int64_t kMaxRequestSlots = int64_t{1} << 24;

// What an fio job (one of numjobs) holds beside its I/O units, in the
// budget's slots (128 bytes each at the default: 2^24 slots, 2 GB): its
// process and its statistics as fio keeps them (among them a latency
// histogram of 1,856 buckets per statistic and direction).
// Measured: peak RSS of `viosim fio` with 4,096, 8,192 and 16,384 jobs of
// iodepth 1 for 1 ms on baremetal_optane (2.19, 4.36 and 8.70 GB), 530 KB
// per job.
inline constexpr int64_t kSlotsPerFioJob = 4240;

// The most batches an fio group may be measured in (ramp plus runtime over
// the batch length): kMaxSimulatedTime in fio's default 50ms batches.
inline constexpr int64_t kMaxFioBatches = 20000000;

// Checks `resolved`, the scenario ResolveVariant made from `file`, variant
// `variant` and `overrides` (`last_flag` names the flag that gave the last
// override in messages). A scenario with an fio workload has its job file
// read (relative to the scenario file) and checked against the stack.
absl::Status CheckResolvedScenario(const ScenarioFile& file, absl::string_view variant,
                                   const std::vector<std::string>& overrides, absl::string_view last_flag,
                                   const Scenario& resolved);

// Checks that the fio `jobs` can run on `stack`, the base scenario of
// `file` resolved with `overrides` (`viosim fio --stack FILE --set ...`);
// `target_ci_pct`, when set, is the steady-state target RunFio is given
// (FioRunOptions::target_ci_pct).
absl::Status CheckJobsOnStack(const ScenarioFile& file, const std::vector<std::string>& overrides,
                              const Scenario& stack, const fio::JobFile& jobs,
                              std::optional<double> target_ci_pct);

// The rule that a published cell names a metric its variant reports, which
// the loader applies to every cell of a file whose variant exists. Returns
// what is wrong with p.metric() (`p` a published cell of `s`), or "" if the
// variant (the base if p.variant() is empty) reports it. `metrics_of` holds
// the metrics of the variants looked at so far, by name, so that each
// variant's are found once.
std::string CheckPublishedMetric(const Scenario& s, const Published& p,
                                 std::map<std::string, std::vector<std::string>>* metrics_of);

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_CHECKS_H_
