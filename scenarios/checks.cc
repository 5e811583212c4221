#include "scenarios/checks.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/block/blk_mq.h"
#include "scenarios/fio_parser.h"
#include "scenarios/input_file.h"
#include "models/fio/workload.h"
#include "models/nvme/profile.h"
#include "scenarios/builder.h"
#include "scenarios/field_walk.h"
#include "scenarios/fio_builder.h"
#include "scenarios/stack.h"
#include "scenarios/units.h"

namespace viosim {
namespace {

using internal::HasPath;

// A request of the virtio_blk guests is three descriptors: the header, the
// data and the status byte. Linux refuses a ring smaller than that
// (virtqueue_add: BUG_ON(total_sg > vq->vring.num)).
constexpr int kDescriptorsPerRequest = 3;

// ---------------------------------------------------------------------------
// Field paths

// Whether setting `assigned` sets the field `path` or a part of it.
bool Reaches(absl::string_view assigned, absl::string_view path) {
  if (!absl::StartsWith(assigned, path)) return false;
  const absl::string_view rest = assigned.substr(path.size());
  return rest.empty() || rest[0] == '.' || rest[0] == '[';
}

// ---------------------------------------------------------------------------
// Where a value came from

struct Origin {
  enum Kind { kFlag, kFile, kDefault };
  Kind kind = kDefault;
  std::string text;  // "--set 'a=b'", or "FILE:LINE:COLUMN" (just "FILE" where the place is not known)
};

// Finds, for a field of the resolved scenario, the assignment, the place in
// the file or the default that gave it its value.
class Origins {
 public:
  Origins(const ScenarioFile& file, absl::string_view variant, const std::vector<std::string>& overrides,
          absl::string_view last_flag)
      : file_(file), overrides_(overrides), last_flag_(last_flag) {
    for (int i = 0; i < file.scenario.variant_size(); ++i) {
      if (!SameVariant(variant, kBaseVariant) && file.scenario.variant(i).name() == variant) variant_index_ = i;
    }
    where_ = file.path;
    if (variant_index_ >= 0) suffix_ = absl::StrCat(" (variant '", variant, "')");
  }

  // "FILE" or "FILE (variant 'v')".
  std::string where() const { return where_ + suffix_; }

  // Where the variant is defined, for a problem with no field of its own
  // written anywhere: "FILE:LINE:COLUMN (variant 'v')" at its definition
  // (or at the matrix that made it), or the file's start for the base.
  std::string Definition() const {
    std::string at = file_.path;
    if (variant_index_ >= 0) at = FieldLocation(file_, absl::StrCat("variant[", variant_index_, "]"));
    if (at == file_.path && variant_index_ >= 0) at = FieldLocation(file_, "matrix");
    if (at == file_.path) at = absl::StrCat(file_.path, ":1:1");
    return at + suffix_;
  }

  // Run-level assignments are applied after the overlay and win over it;
  // file-level ones edit the variant's overlay, which wins over the base.
  Origin Of(absl::string_view path) const {
    if (const int i = LastAssignment(path, false); i >= 0) return Flag(i);
    if (variant_index_ >= 0) {
      const std::string in_overlay = absl::StrCat("variant[", variant_index_, "].overlay.", path);
      if (const int i = LastAssignment(in_overlay, true); i >= 0) return Flag(i);
      if (HasPath(file_.scenario.variant(variant_index_).overlay(), path)) {
        return {Origin::kFile, FieldLocation(file_, in_overlay)};
      }
    }
    if (HasPath(file_.scenario, path)) return {Origin::kFile, FieldLocation(file_, path)};
    return {Origin::kDefault, ""};
  }

  // How a message about a problem starts when `o` is where it lies.
  std::string Lead(const Origin& o) const {
    switch (o.kind) {
      case Origin::kFlag:
        return absl::StrCat(where(), ": ", o.text);
      case Origin::kFile:
        if (o.text != file_.path) return o.text + suffix_;
        break;
      case Origin::kDefault:
        break;
    }
    return where();
  }

  // The origin of a value named inside a message.
  static std::string Describe(const Origin& o) {
    switch (o.kind) {
      case Origin::kFlag:
        return "from " + o.text;
      case Origin::kFile:
        return "at " + o.text;
      case Origin::kDefault:
        break;
    }
    return "by default";
  }

 private:
  int LastAssignment(absl::string_view path, bool file_level) const {
    for (int i = static_cast<int>(overrides_.size()) - 1; i >= 0; --i) {
      if (IsFileLevelOverride(overrides_[i]) == file_level && Reaches(AssignmentPath(overrides_[i]), path)) return i;
    }
    return -1;
  }

  Origin Flag(int i) const {
    const bool last = i + 1 == static_cast<int>(overrides_.size());
    return {Origin::kFlag,
            absl::StrCat(last && !last_flag_.empty() ? last_flag_ : absl::string_view("--set"), " '",
                         overrides_[i], "'")};
  }

  const ScenarioFile& file_;
  const std::vector<std::string>& overrides_;
  absl::string_view last_flag_;
  int variant_index_ = -1;
  std::string where_;
  std::string suffix_;
};

// ---------------------------------------------------------------------------
// Problems

// A problem about some fields: its message leads with the place of the
// first of them a flag set, else of the first written in the file, else the
// file; the others are named with their places.
class Problem {
 public:
  Problem(const Origins& origins, const std::vector<std::string>& fields) : origins_(&origins) {
    for (const Origin::Kind kind : {Origin::kFlag, Origin::kFile}) {
      for (const std::string& f : fields) {
        const Origin o = origins.Of(f);
        if (o.kind == kind && lead_field_.empty()) {
          lead_field_ = f;
          lead_ = origins.Lead(o);
        }
      }
    }
    if (lead_field_.empty()) lead_ = origins.where();
  }

  // A problem that leads with `lead` (a place in an fio job file) and names
  // every field with its place.
  Problem(const Origins& origins, std::string lead) : origins_(&origins), lead_(std::move(lead)) {}

  const std::string& lead() const { return lead_; }

  // "field 'a.b' (VALUE)" for the field the message leads with, else
  // "field 'a.b' (VALUE, at FILE:LINE:COLUMN)" and the like.
  std::string Field(absl::string_view path, absl::string_view value) const {
    if (path == lead_field_) return absl::StrCat("field '", path, "' (", value, ")");
    return absl::StrCat("field '", path, "' (", value, ", ", Origins::Describe(origins_->Of(path)), ")");
  }
  std::string Field(absl::string_view path, int64_t value) const { return Field(path, absl::StrCat(value)); }

 private:
  const Origins* origins_;
  std::string lead_field_;
  std::string lead_;
};

class Checker {
 public:
  explicit Checker(const Origins& origins) : origins_(origins) {}

  const Origins& origins() const { return origins_; }
  Problem About(const std::vector<std::string>& fields) const { return Problem(origins_, fields); }
  Problem AboutJob(const fio::JobFile& jobs, const fio::JobOptions& job) const {
    return Problem(origins_, absl::StrCat(jobs.path, ":", job.line, ": job '", job.name, "' on ", origins_.where()));
  }

  void Add(const Problem& p, absl::string_view what) {
    std::string line = absl::StrCat(p.lead(), ": ", what);
    if (std::find(lines_.begin(), lines_.end(), line) == lines_.end()) lines_.push_back(std::move(line));
  }

  bool ok() const { return lines_.empty(); }
  absl::Status ToStatus() const {
    return lines_.empty() ? absl::OkStatus() : absl::InvalidArgumentError(absl::StrJoin(lines_, "\n"));
  }

 private:
  const Origins& origins_;
  std::vector<std::string> lines_;
};

// A TIME field the loader has checked: its value, zero if unreadable.
sim::Time TimeIn(const std::string& text) {
  absl::StatusOr<sim::Time> t = TimeOf(text);
  return t.ok() ? *t : sim::Time::Zero();
}

std::string Shown(sim::Time t) { return FormatDurationForInput(t); }

// A span of fio's microseconds, which may be longer than a sim::Time holds.
std::string ShownMicros(int64_t us) {
  return us <= kMaxSimulatedTime.ps() / 1000000 ? Shown(sim::Time::Micros(us)) : absl::StrCat(us / 1000000, "s");
}

// ---------------------------------------------------------------------------
// The run and the lock benchmark

void CheckRun(const Scenario& s, Checker& c) {
  const sim::Time warmup = TimeIn(s.run().warmup()), duration = TimeIn(s.run().duration());
  if (warmup + duration > kMaxSimulatedTime) {
    const Problem p = c.About({"run.duration", "run.warmup"});
    c.Add(p, absl::StrCat(p.Field("run.duration", s.run().duration()), " and ",
                          p.Field("run.warmup", s.run().warmup()), " add up to more than ",
                          Shown(kMaxSimulatedTime), ", the most simulated time viosim runs"));
  }
  // The window is cut into batches at whole picoseconds (sim/measurement.h):
  // each batch needs one at least, or it measures nothing.
  const int batches = s.run().batches();
  if (duration < sim::Time::Picos(batches)) {
    const Problem p = c.About({"run.duration", "run.batches"});
    c.Add(p, absl::StrCat(p.Field("run.duration", s.run().duration()), " cannot be cut into ",
                          p.Field("run.batches", batches), " batches of one picosecond or more; it must be at least ",
                          Shown(sim::Time::Picos(batches))));
  }
}

void CheckLockBench(const Scenario& s, Checker& c) {
  const Workload::LockBench& w = s.workload().lockbench();
  const std::string threads = "workload.lockbench.threads", cpus = "platform.cpus";
  if (s.platform().has_cpus() && s.platform().cpus() < w.threads()) {
    const Problem p = c.About({threads, cpus});
    c.Add(p, absl::StrCat(p.Field(threads, w.threads()), " needs one CPU per thread, but ",
                          p.Field(cpus, s.platform().cpus()), " has fewer"));
  }
  const std::string think_field = "workload.lockbench.think", hold_field = "workload.lockbench.hold";
  if (!w.has_think() || !w.has_hold()) return;  // the builder says which is required
  absl::StatusOr<sim::Distribution> think = ToDistribution(w.think(), think_field);
  absl::StatusOr<sim::Distribution> hold = ToDistribution(w.hold(), hold_field);
  for (const auto& [d, field] : {std::pair{&think, think_field}, std::pair{&hold, hold_field}}) {
    if (!d->ok()) c.Add(c.About({field}), d->status().message());
  }
  if (!think.ok() || !hold.ok()) return;
  if (think->Mean() + hold->Mean() == sim::Time::Zero()) {
    const Problem p = c.About({think_field, hold_field});
    c.Add(p, absl::StrCat(p.Field(think_field, "mean 0s"), " and ", p.Field(hold_field, "mean 0s"),
                          " take no time: every thread would take the lock again and again at the same instant "
                          "and simulated time would never advance"));
  }
}

// iperf runs on the vhost_net stack only; each NIC receive queue's
// interrupt goes to a host CPU of its own, and its rings are split
// virtqueues.
// A profile name must be one the builder knows.
void CheckProfile(absl::string_view field, absl::string_view name, absl::string_view known, Checker& c) {
  if (name == known) return;
  const Problem p = c.About({std::string(field)});
  c.Add(p, absl::StrCat(p.Field(field, name), " is not a known profile (profiles: ", known, ")"));
}

void CheckIperf(const Scenario& s, Checker& c) {
  CheckProfile("platform.host_profile", s.platform().host_profile(), "xeon", c);
  if (!s.stack().has_vhost_net()) {
    const Problem p = c.About({"workload.iperf"});
    c.Add(p, "workload.iperf needs a network stack: set stack.vhost_net");
    return;
  }
  const Stack::VhostNet& v = s.stack().vhost_net();
  const std::string queues = "stack.vhost_net.nic_rx_queues", cpus = "stack.vhost_net.host_cpus";
  if (v.nic_rx_queues() > v.host_cpus()) {
    const Problem p = c.About({queues, cpus});
    c.Add(p, absl::StrCat(p.Field(queues, v.nic_rx_queues()), " binds one queue's interrupt to each host CPU, but ",
                          p.Field(cpus, v.host_cpus()), " has fewer"));
  }
  const std::string ring = "stack.vhost_net.ring_size";
  if ((v.ring_size() & (v.ring_size() - 1)) != 0) {
    const Problem p = c.About({ring});
    c.Add(p, absl::StrCat(p.Field(ring, v.ring_size()),
                          " is not a power of two, which the size of a split virtqueue must be"));
  }
  const std::string mtu = "stack.vhost_net.mtu", hdr = "stack.vhost_net.tcpip_header";
  if (v.mtu() <= v.tcpip_header()) {
    const Problem p = c.About({mtu, hdr});
    c.Add(p, absl::StrCat(p.Field(mtu, v.mtu()), " leaves no payload after ", p.Field(hdr, v.tcpip_header())));
  }
}

// ---------------------------------------------------------------------------
// Stacks

// The stack RunFio runs jobs on.
enum class StackKind { kNone, kVirtioBlk, kVirtioBlkMq, kNvme };

StackKind KindOf(const Scenario& s) {
  if (s.stack().has_virtio_blk()) return StackKind::kVirtioBlk;
  if (s.stack().has_virtio_blk_mq()) return StackKind::kVirtioBlkMq;
  if (s.stack().has_nvme()) return StackKind::kNvme;
  return StackKind::kNone;
}

int CpusOf(const Scenario& s) { return s.platform().has_cpus() ? s.platform().cpus() : kDefaultFioCpus; }

// A virtqueue of `ring` entries (field `field`) must be a power of two with
// room for one request's descriptors.
void CheckRing(const std::string& field, int ring, Checker& c) {
  const Problem p = c.About({field});
  if ((ring & (ring - 1)) != 0) {
    c.Add(p, absl::StrCat(p.Field(field, ring),
                          " is not a power of two, which the size of a split virtqueue must be"));
  } else if (ring < kDescriptorsPerRequest) {
    c.Add(p, absl::StrCat(p.Field(field, ring), " has fewer entries than the ", kDescriptorsPerRequest,
                          " descriptors of one request (header, data, status); it must be at least ",
                          kDescriptorsPerRequest + 1));
  }
}

// A device latency's exponential part (field `spread`) comes out of its
// mean, so it can be at most the latency (field `latency`).
void CheckSpread(const std::string& spread, sim::Time spread_value, const std::string& latency,
                 sim::Time latency_value, Checker& c) {
  if (spread_value <= latency_value) return;
  const Problem p = c.About({spread, latency});
  c.Add(p, absl::StrCat(p.Field(spread, Shown(spread_value)), " exceeds ", p.Field(latency, Shown(latency_value)),
                        ": the exponential part is taken out of the latency's mean, so it can be at most the "
                        "latency"));
}

constexpr char kBudgetField[] = "run.max_request_slots";

// Request slots a stack preallocates, `count` of them, must stay within
// the budget, run.max_request_slots.
void CheckSlots(const Scenario& s, std::vector<std::pair<std::string, int64_t>> factors, int64_t count,
                absl::string_view what, Checker& c) {
  const int64_t budget = s.run().max_request_slots();
  if (count <= budget) return;
  std::vector<std::string> fields, named;
  for (const auto& f : factors) fields.push_back(f.first);
  fields.push_back(kBudgetField);
  const Problem p = c.About(fields);
  for (const auto& [field, value] : factors) named.push_back(p.Field(field, value));
  c.Add(p, absl::StrCat(absl::StrJoin(named, " x "), " make ", count, " ", what, ", more than ",
                        p.Field(kBudgetField, budget), " lets viosim hold in memory (raise it with --set ",
                        kBudgetField, "=N where the machine has the memory)"));
}

// The vGIC distributor lock is held inside the exit halves and the
// KVM_IRQ_LINE ioctls that take it (models/kvm/kvm.h): its hold fits in
// each of them.
void CheckVgicHold(const Scenario& s, Checker& c) {
  const KvmCosts& k = s.platform().kvm();
  const std::string hold = "platform.kvm.vgic_dist_hold.value";
  if (!k.has_vgic_dist_hold()) return;
  const sim::Time h = TimeIn(k.vgic_dist_hold().value());
  if (h == sim::Time::Zero()) return;
  struct Within {
    std::vector<std::string> fields;
    sim::Time time;  // the time the hold must fit in
    const char* what;
  };
  std::vector<Within> within;
  auto cost = [](const Cost& x) { return TimeIn(x.value()); };
  within.push_back({{"platform.kvm.mmio_exit_user.value", "platform.kvm.exit_unexplained.value"},
                    (cost(k.mmio_exit_user()) + cost(k.exit_unexplained())) / 2,
                    "half of a userspace exit's round trip (mmio_exit_user + exit_unexplained)"});
  within.push_back({{"platform.kvm.irq_kick_exit.value"}, cost(k.irq_kick_exit()) / 2, "half of irq_kick_exit"});
  if (k.has_wfe_trap() && cost(k.wfe_trap()) > sim::Time::Zero()) {
    within.push_back({{"platform.kvm.wfe_trap.value"}, cost(k.wfe_trap()) / 2, "half of wfe_trap"});
  }
  if (k.ioeventfd() && k.has_mmio_exit_kernel()) {
    within.push_back({{"platform.kvm.mmio_exit_kernel.value"}, cost(k.mmio_exit_kernel()) / 2,
                      "half of mmio_exit_kernel"});
  }
  within.push_back({{"stack.virtio_blk.qemu_irq_line.value"}, cost(s.stack().virtio_blk().qemu_irq_line()),
                    "qemu_irq_line"});
  for (const Within& w : within) {
    if (h <= w.time) continue;
    std::vector<std::string> fields = w.fields;
    fields.insert(fields.begin(), hold);
    const Problem p = c.About(fields);
    c.Add(p, absl::StrCat(p.Field(hold, Shown(h)), " exceeds ", w.what, ", ", Shown(w.time),
                          ": the lock is held inside that time"));
    return;
  }
}

void CheckVirtioBlk(const Scenario& s, Checker& c) {
  const Stack::VirtioBlk& v = s.stack().virtio_blk();
  const std::string ring = "stack.virtio_blk.ring_size", depth = "stack.virtio_blk.queue_depth",
                    irq = "stack.virtio_blk.irq_cpu", cpus = "platform.cpus";
  CheckRing(ring, v.ring_size(), c);
  if (v.queue_depth() > v.ring_size()) {
    const Problem p = c.About({depth, ring});
    c.Add(p, absl::StrCat(p.Field(depth, v.queue_depth()), " exceeds what ", p.Field(ring, v.ring_size()),
                          " can hold: every request in flight takes one descriptor of the ring (an indirect "
                          "table), so at most ",
                          v.ring_size(), " requests fit"));
  }
  const int ncpus = CpusOf(s);
  if (v.irq_cpu() >= ncpus) {
    const Problem p = c.About({irq, cpus});
    c.Add(p, absl::StrCat(p.Field(irq, v.irq_cpu()), " names a vCPU the guest does not have: ",
                          p.Field(cpus, ncpus), " gives vCPUs 0 to ", ncpus - 1));
  }
  if (v.has_disk_latency() && v.has_disk_latency_exp_mean()) {
    CheckSpread("stack.virtio_blk.disk_latency_exp_mean.value", TimeIn(v.disk_latency_exp_mean().value()),
                "stack.virtio_blk.disk_latency.value", TimeIn(v.disk_latency().value()), c);
  }
  CheckVgicHold(s, c);
  // Every request pays these; when all are zero (the others being skipped
  // or zero too) requests complete at the instant they are issued.
  const std::pair<const Cost*, std::string> paid[] = {
      {&s.platform().fio().per_io(), "platform.fio.per_io.value"},
      {&v.submit(), "stack.virtio_blk.submit.value"},
      {&v.map_sg(), "stack.virtio_blk.map_sg.value"},
      {&v.add_sgs(), "stack.virtio_blk.add_sgs.value"},
      {&v.complete(), "stack.virtio_blk.complete.value"},
      {&v.qemu_pop_submit(), "stack.virtio_blk.qemu_pop_submit.value"},
      {&v.qemu_complete(), "stack.virtio_blk.qemu_complete.value"},
      {&v.disk_latency(), "stack.virtio_blk.disk_latency.value"},
  };
  std::vector<std::string> fields;
  for (const auto& [cost, field] : paid) {
    // Unset: fio's own cost has a positive default; a missing stack cost is
    // refused by the builder.
    if (!cost->has_value() || TimeIn(cost->value()) > sim::Time::Zero()) return;
    fields.push_back(field);
  }
  const Problem p = c.About(fields);
  std::vector<std::string> named;
  for (const std::string& f : fields) named.push_back(p.Field(f, "0"));
  c.Add(p, absl::StrCat("every cost a request pays is zero (", absl::StrJoin(named, ", "),
                        "): requests would complete at the instant they are issued and simulated time would "
                        "never advance; make one of them positive"));
}

void CheckVirtioBlkMq(const Scenario& s, Checker& c) {
  const Stack::VirtioBlkMq& v = s.stack().virtio_blk_mq();
  const std::string ring = "stack.virtio_blk_mq.ring_size";
  CheckRing(ring, v.ring_size(), c);
  if (v.has_latency_exp_mean() && v.has_read_latency() && v.has_write_latency()) {
    const bool read_is_less = TimeIn(v.read_latency().value()) <= TimeIn(v.write_latency().value());
    const Cost& latency = read_is_less ? v.read_latency() : v.write_latency();
    CheckSpread("stack.virtio_blk_mq.latency_exp_mean.value", TimeIn(v.latency_exp_mean().value()),
                read_is_less ? "stack.virtio_blk_mq.read_latency.value" : "stack.virtio_blk_mq.write_latency.value",
                TimeIn(latency.value()), c);
  }
  const int ncpus = CpusOf(s);
  CheckSlots(s, {{"platform.cpus", ncpus}, {ring, v.ring_size()}}, int64_t{ncpus} * v.ring_size(),
             "virtqueue entries (one ring per vCPU)", c);
}

void CheckNvme(const Scenario& s, Checker& c) {
  const Stack::Nvme& n = s.stack().nvme();
  if (n.profile() == "optane_p4800x") {  // CheckStack refuses other names
    const models::NvmeProfile profile = models::OptaneP4800X();
    const sim::Time read = n.has_read_latency() ? TimeIn(n.read_latency().value()) : profile.read_latency.value;
    const sim::Time write = n.has_write_latency() ? TimeIn(n.write_latency().value()) : profile.write_latency.value;
    const sim::Time spread =
        n.has_latency_exp_mean() ? TimeIn(n.latency_exp_mean().value()) : profile.latency_exp_mean.value;
    CheckSpread("stack.nvme.latency_exp_mean.value", spread,
                read <= write ? "stack.nvme.read_latency.value" : "stack.nvme.write_latency.value",
                std::min(read, write), c);
  }
  const int ncpus = CpusOf(s);
  const int depth = n.has_queue_depth() ? n.queue_depth() : models::BlkMqParams{}.queue_depth;
  const int types = n.poll_queues() ? 2 : 1;
  CheckSlots(s, {{"platform.cpus", ncpus}, {"stack.nvme.queue_depth", depth}}, int64_t{ncpus} * depth * types,
             absl::StrCat("blk-mq tags (", types, types == 1 ? " queue" : " queues", " per CPU)"), c);
}

// platform.cache_lines: a service ratio only has a meaning for lines that
// queue.
void CheckCacheLines(const Scenario& s, Checker& c) {
  const CacheLines& l = s.platform().cache_lines();
  if (!l.has_service_ratio() || l.arbitration() != "unqueued") return;
  const std::string ratio = "platform.cache_lines.service_ratio", policy = "platform.cache_lines.arbitration";
  const Problem p = c.About({ratio, policy});
  c.Add(p, absl::StrCat(p.Field(ratio, absl::StrCat(l.service_ratio())),
                        " only means something for lines that queue, and ", p.Field(policy, "\"unqueued\""),
                        " makes every transaction pay its own hand-off at once"));
}

void CheckStack(const Scenario& s, Checker& c) {
  CheckProfile("platform.host_profile", s.platform().host_profile(), "xeon", c);
  if (s.stack().has_nvme()) CheckProfile("stack.nvme.profile", s.stack().nvme().profile(), "optane_p4800x", c);
  CheckCacheLines(s, c);
  switch (KindOf(s)) {
    case StackKind::kVirtioBlk:
      return CheckVirtioBlk(s, c);
    case StackKind::kVirtioBlkMq:
      return CheckVirtioBlkMq(s, c);
    case StackKind::kNvme:
      return CheckNvme(s, c);
    case StackKind::kNone:
      return;  // the builder says the stack has no block device
  }
}

// ---------------------------------------------------------------------------
// fio

// The length of fio's measurement batches on this scenario, as RunFio sets
// it: a time cap shorter than min_batches default batches shortens them.
sim::Time FioBatch(const Scenario& s) {
  const fio::WorkloadControl control;
  const sim::Time cap = TimeIn(s.workload().fio().max_group_time());
  return cap < control.batch * control.min_batches ? cap / control.min_batches : control.batch;
}

void CheckFioControl(const Scenario& s, Checker& c) {
  const std::string field = "workload.fio.max_group_time";
  if (FioBatch(s) > sim::Time::Zero()) return;
  const int batches = fio::WorkloadControl{}.min_batches;
  const Problem p = c.About({field});
  c.Add(p, absl::StrCat(p.Field(field, s.workload().fio().max_group_time()), " is too short to measure in ",
                        batches, " batches; it must be at least ", Shown(sim::Time::Picos(batches))));
}

// The vCPU each clone of each job runs on, as the fio workload places them:
// clone number n (counted over the whole file) on the n-th allowed CPU,
// round robin; groups start at stonewall or new_group.
struct Placement {
  const fio::JobOptions* job;
  int clone;
  int group;
  int cpu;
};

std::vector<Placement> Place(const fio::JobFile& jobs, int ncpus) {
  std::vector<Placement> out;
  int group = 0, number = 0;
  for (size_t s = 0; s < jobs.jobs.size(); ++s) {
    const fio::JobOptions& o = jobs.jobs[s];
    if (s > 0 && (o.stonewall || o.new_group)) ++group;
    std::vector<int> allowed;
    if (!o.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(o.cpus_allowed, ncpus);
      if (list.ok()) allowed = *list;
    }
    if (allowed.empty()) {
      for (int cpu = 0; cpu < ncpus; ++cpu) allowed.push_back(cpu);
    }
    for (int k = 0; k < o.numjobs; ++k, ++number) {
      out.push_back({&o, k, group, allowed[static_cast<size_t>(number) % allowed.size()]});
    }
  }
  return out;
}

// The blk-poll stack models one I/O in flight per vCPU (its vq per vCPU
// takes one synchronous request at a time): no job may keep more, and no
// two jobs of a group may share a vCPU.
void CheckOneIoPerVcpu(const Scenario& s, const fio::JobFile& jobs, Checker& c) {
  const std::string model = "the blk-poll stack (stack.virtio_blk_mq) models one I/O in flight per vCPU";
  for (const fio::JobOptions& j : jobs.jobs) {
    if (fio::IsSync(j.ioengine) || j.iodepth <= 1) continue;
    c.Add(c.AboutJob(jobs, j), absl::StrCat("ioengine=", j.ioengine_name, " with iodepth=", j.iodepth, " keeps up to ",
                                            j.iodepth, " I/Os in flight on its vCPU, but ", model,
                                            ": use a synchronous engine (psync, pvsync2) or iodepth=1"));
  }
  const int ncpus = CpusOf(s);
  std::map<std::pair<int, int>, const Placement*> first;  // (group, vCPU) -> the clone there
  std::vector<const fio::JobOptions*> reported;            // one message per job section
  const std::vector<Placement> placed = Place(jobs, ncpus);
  for (const Placement& at : placed) {
    const auto [it, inserted] = first.emplace(std::pair{at.group, at.cpu}, &at);
    if (inserted || std::find(reported.begin(), reported.end(), at.job) != reported.end()) continue;
    reported.push_back(at.job);
    const Problem p = c.AboutJob(jobs, *at.job);
    const Placement& other = *it->second;
    c.Add(p, absl::StrCat("clone ", at.clone, " shares vCPU ", at.cpu, " with job '", other.job->name, "' (clone ",
                          other.clone, ") in the same group, but ", model, ": ", p.Field("platform.cpus", ncpus),
                          at.job->cpus_allowed.empty() ? "" : absl::StrCat(" with cpus_allowed=", at.job->cpus_allowed),
                          " gives the group fewer vCPUs than jobs (numjobs counts each clone)"));
  }
}

// `target_ci_pct` overrides workload.fio.target_ci_pct when set, as
// FioRunOptions does; 0 runs every job its full length.
// wait_for=NAME: a job starts once every other job called NAME (its own
// clones included) has finished, and groups run one after the other. A job
// that waits, directly or through others, for itself, or for a job of a
// later group, would never start.
void CheckWaits(const fio::JobFile& jobs, Checker& c) {
  const size_t n = jobs.jobs.size();
  std::vector<int> group(n, 0);
  for (size_t i = 1; i < n; ++i) group[i] = group[i - 1] + (jobs.jobs[i].stonewall || jobs.jobs[i].new_group ? 1 : 0);
  // The sections section i waits for.
  auto waits = [&](size_t i) {
    std::vector<size_t> out;
    const fio::JobOptions& j = jobs.jobs[i];
    for (size_t k = 0; k < n && !j.wait_for.empty(); ++k) {
      if (jobs.jobs[k].name == j.wait_for && (k != i || j.numjobs > 1)) out.push_back(k);
    }
    return out;
  };
  for (size_t i = 0; i < n; ++i) {
    const fio::JobOptions& j = jobs.jobs[i];
    for (size_t k : waits(i)) {
      if (group[k] <= group[i]) continue;
      c.Add(c.AboutJob(jobs, j), absl::StrCat("wait_for=", j.wait_for, " names job '", jobs.jobs[k].name, "' (line ",
                                              jobs.jobs[k].line, ") of a later group, which starts only after this "
                                              "one ends, so this job would never start"));
    }
    // Whether section i reaches itself.
    std::vector<bool> seen(n, false);
    std::vector<size_t> todo = waits(i);
    bool cycle = false;
    while (!todo.empty() && !cycle) {
      const size_t k = todo.back();
      todo.pop_back();
      cycle = k == i;
      if (seen[k]) continue;
      seen[k] = true;
      for (size_t next : waits(k)) todo.push_back(next);
    }
    if (cycle) {
      c.Add(c.AboutJob(jobs, j),
            absl::StrCat("wait_for=", j.wait_for, " leads back to this job",
                         j.wait_for == j.name ? absl::StrCat(" (its own ", j.numjobs, " clones)") : "",
                         ": the jobs would wait for each other and never start"));
    }
  }
}

// A per-page cost (field `field`) is paid for every 4 KiB page of a request
// after the first: for a job's largest block it must stay within the
// horizon, or the request would never end.
void CheckPerPage(const fio::JobFile& jobs, const std::string& field, const Cost& cost, Checker& c) {
  const sim::Time each = cost.has_value() ? TimeIn(cost.value()) : sim::Time::Zero();
  if (each == sim::Time::Zero()) return;
  for (const fio::JobOptions& j : jobs.jobs) {
    const uint64_t bs = std::max(j.bs_max[fio::kRead], j.bs_max[fio::kWrite]);
    const int64_t pages = static_cast<int64_t>((bs + 4095) / 4096) - 1;
    if (pages <= 0 || each.ps() <= kMaxSimulatedTime.ps() / pages) continue;
    const Problem p = c.AboutJob(jobs, j);
    c.Add(p, absl::StrCat("a block of ", bs, " bytes has ", pages, " pages after its first, each costing ",
                          p.Field(field, cost.value()), ": one request would take more than ",
                          Shown(kMaxSimulatedTime), ", the most simulated time viosim runs"));
  }
}

// An engine, or its polled mode, that the stack's kernel does not have:
// fio would fail to set it up (io_uring_setup returns ENOSYS; preadv2 with
// RWF_HIPRI is refused with EOPNOTSUPP or EINVAL).
void CheckEnginesOnKernel(const Scenario& s, const fio::JobFile& jobs, Checker& c) {
  absl::StatusOr<const StackPart*> part = StackPartOf(s);
  if (!part.ok() || (*part)->linux_version == 0) return;
  const int have = (*part)->linux_version;
  auto shown = [](int v) { return absl::StrCat(v / 100, ".", v % 100); };
  for (const fio::JobOptions& j : jobs.jobs) {
    int needs = 0;
    std::string what;
    if (j.ioengine == fio::Engine::kIoUring) {
      needs = 501;
      what = j.hipri ? "io_uring with hipri (IORING_SETUP_IOPOLL)" : "io_uring";
    } else if (j.ioengine == fio::Engine::kPvsync2) {
      needs = 406;
      what = j.hipri ? "pvsync2 with hipri (preadv2's RWF_HIPRI)" : "pvsync2 (preadv2/pwritev2)";
    }
    if (needs == 0 || have >= needs) continue;
    const Problem p = c.AboutJob(jobs, j);
    c.Add(p, absl::StrCat("ioengine=", j.ioengine_name, ": ", what, " came with Linux ", shown(needs),
                          "; the stack '", (*part)->name, "' models Linux ", shown(have),
                          ", where fio cannot set it up (use libaio, psync or sync)"));
  }
}

void CheckJobs(const Scenario& s, const fio::JobFile& jobs, std::optional<double> target_ci_pct, Checker& c) {
  const int ncpus = CpusOf(s);
  const bool full = target_ci_pct.value_or(s.workload().fio().target_ci_pct()) == 0;
  const sim::Time batch = FioBatch(s);
  const int64_t max_us = kMaxSimulatedTime.ps() / 1000000;
  int64_t slots = 0;
  bool slots_reported = false;
  for (const fio::JobOptions& j : jobs.jobs) {
    if (!j.cpus_allowed.empty()) {
      absl::StatusOr<std::vector<int>> list = fio::ParseCpuList(j.cpus_allowed, ncpus);
      if (!list.ok()) {
        const Problem p(c.origins(), absl::StrCat(j.cpus_allowed_at, ": ", list.status().message()));
        c.Add(p, absl::StrCat("job '", j.name, "' on ", c.origins().where(), ", ", p.Field("platform.cpus", ncpus)));
      }
    }
    const Problem p = c.AboutJob(jobs, j);
    const std::string span = absl::StrCat("ramp_time (", ShownMicros(j.ramp_time_us), ") plus runtime (",
                                          ShownMicros(j.runtime_us), ")");
    // The ramp is stepped batch by batch; so is the runtime when the job
    // runs its full length (otherwise max_group_time caps it).
    const int64_t stepped_us = j.ramp_time_us + (full ? j.runtime_us : 0);
    if (j.ramp_time_us + j.runtime_us > max_us) {
      c.Add(p, absl::StrCat(span, " exceed ", Shown(kMaxSimulatedTime), ", the most simulated time viosim runs"));
    } else if (batch > sim::Time::Zero() && sim::Time::Micros(stepped_us) / batch > kMaxFioBatches) {
      c.Add(p, absl::StrCat(full ? span : absl::StrCat("ramp_time (", ShownMicros(j.ramp_time_us), ")"),
                            " spans more than ", kMaxFioBatches, " measurement batches of ", Shown(batch), " (",
                            p.Field("workload.fio.max_group_time", s.workload().fio().max_group_time()),
                            " over 20 when shorter than 1s); lengthen max_group_time or shorten the job"));
    }
    slots += int64_t{j.numjobs} * ((fio::IsSync(j.ioengine) ? 1 : j.iodepth) + kSlotsPerFioJob);
    if (slots > s.run().max_request_slots() && !slots_reported) {
      slots_reported = true;
      c.Add(p, absl::StrCat("numjobs=", j.numjobs, " with iodepth=", j.iodepth,
                            " brings the jobs (", kSlotsPerFioJob, " slots each) and their I/O units to ", slots,
                            " slots, more than ", c.About({kBudgetField}).Field(kBudgetField, s.run().max_request_slots()),
                            " lets viosim hold in memory (raise it with --set ", kBudgetField,
                            "=N where the machine has the memory)"));
    }
  }
  CheckWaits(jobs, c);
  CheckEnginesOnKernel(s, jobs, c);
  if (KindOf(s) == StackKind::kNvme) {
    CheckPerPage(jobs, "platform.host.nvme_map_data_per_page.value", s.platform().host().nvme_map_data_per_page(), c);
  }
  if (KindOf(s) == StackKind::kVirtioBlkMq) {
    CheckPerPage(jobs, "stack.virtio_blk_mq.per_page.value", s.stack().virtio_blk_mq().per_page(), c);
    CheckOneIoPerVcpu(s, jobs, c);
  }
}

// The stack and the jobs together: what RunFio builds.
absl::Status CheckStackAndJobs(const Scenario& s, const fio::JobFile& jobs, std::optional<double> target_ci_pct,
                               Checker& c) {
  CheckStack(s, c);
  CheckFioControl(s, c);
  if (!c.ok()) return c.ToStatus();
  CheckJobs(s, jobs, target_ci_pct, c);
  return c.ToStatus();
}

// The job file of a scenario's fio workload, as the builder reads it.
absl::StatusOr<fio::JobFile> ScenarioJobs(const ScenarioFile& file, const Scenario& s, Checker& c) {
  const Workload::Fio& w = s.workload().fio();
  const std::filesystem::path parent = std::filesystem::path(file.path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const std::string path = w.job_file()[0] == '/' ? w.job_file() : absl::StrCat(dir, "/", w.job_file());
  absl::StatusOr<std::string> text = ReadInputFile(path, "fio job file");
  if (!text.ok()) {
    // The file itself cannot be read: the place to fix is the field naming it.
    const std::string field = "workload.fio.job_file";
    const Problem p = c.About({field});
    c.Add(p, absl::StrCat(p.Field(field, w.job_file()), ": ", text.status().message()));
    return c.ToStatus();
  }
  absl::StatusOr<fio::JobFile> jobs = fio::ParseJobText(path, *text, std::filesystem::path(path).parent_path().string(),
                                                        JobOptionOverrides(Params(s, nullptr)["workload"]["fio"]));
  if (!jobs.ok() || w.section().empty()) return jobs;
  std::vector<fio::JobOptions> keep;
  for (const fio::JobOptions& j : jobs->jobs) {
    if (j.name == w.section()) keep.push_back(j);
  }
  if (keep.empty()) {
    const std::string field = "workload.fio.section";
    const Problem p = c.About({field});
    c.Add(p, absl::StrCat(p.Field(field, w.section()), ": no job section of that name in ", path));
    return c.ToStatus();
  }
  jobs->jobs = std::move(keep);
  return jobs;
}

// ---------------------------------------------------------------------------
// Published cells

// The scenario variant `name` runs before --set: the base with its
// variants and published cells left out, the overlay merged over it ("" and
// kBaseVariant: none). What MetricNames needs to know, without the checks
// ResolveVariant makes.
Scenario Overlaid(const Scenario& s, absl::string_view name) {
  Scenario out = s;
  out.clear_variant();
  out.clear_published();
  for (const Variant& v : s.variant()) {
    if (!name.empty() && name != kBaseVariant && v.name() == name) {
      out.MergeFrom(v.overlay());
      break;
    }
  }
  return out;
}

}  // namespace

absl::Status CheckResolvedScenario(const ScenarioFile& file, absl::string_view variant,
                                   const std::vector<std::string>& overrides, absl::string_view last_flag,
                                   const Scenario& resolved) {
  const Origins origins(file, variant, overrides, last_flag);
  Checker c(origins);
  // The workload the registry says the scenario runs; its field rules are
  // the loader's (each names where a value came from), chosen here.
  const Workload::KindCase workload = WorkloadOf(resolved);
  if (workload != Workload::KIND_NOT_SET) CheckRun(resolved, c);
  switch (workload) {
    case Workload::kLockbench:
      CheckLockBench(resolved, c);
      return c.ToStatus();
    case Workload::kIperf:
      CheckIperf(resolved, c);
      return c.ToStatus();
    case Workload::kFio: {
      if (!c.ok() || resolved.workload().fio().job_file().empty()) return c.ToStatus();  // the builder requires it
      absl::StatusOr<fio::JobFile> jobs = ScenarioJobs(file, resolved, c);
      if (!jobs.ok()) return jobs.status();
      return CheckStackAndJobs(resolved, *jobs, std::nullopt, c);
    }
    case Workload::KIND_NOT_SET:
      // A stack for `viosim fio --stack`, whose jobs are checked against it
      // there (CheckJobsOnStack); the names of its profiles are checked here.
      // Without a stack either, there is nothing to run.
      if (!resolved.has_stack()) {
        const Problem p(origins, origins.Definition());
        c.Add(p, "field 'workload': the scenario has neither a workload nor a stack: nothing to run, and no "
                 "stack for `viosim fio --stack`");
        return c.ToStatus();
      }
      CheckProfile("platform.host_profile", resolved.platform().host_profile(), "xeon", c);
      if (resolved.stack().has_nvme()) {
        CheckProfile("stack.nvme.profile", resolved.stack().nvme().profile(), "optane_p4800x", c);
      }
      break;
  }
  return c.ToStatus();
}

absl::Status CheckJobsOnStack(const ScenarioFile& file, const std::vector<std::string>& overrides,
                              const Scenario& stack, const fio::JobFile& jobs, std::optional<double> target_ci_pct) {
  const Origins origins(file, kBaseVariant, overrides, "--set");
  Checker c(origins);
  return CheckStackAndJobs(stack, jobs, target_ci_pct, c);
}

std::string CheckPublishedMetric(const Scenario& s, const Published& p,
                                 std::map<std::string, std::vector<std::string>>* metrics_of) {
  const std::string shown = p.variant().empty() ? std::string(kBaseVariant) : p.variant();
  auto [it, inserted] = metrics_of->try_emplace(shown);
  if (inserted) it->second = MetricNames(Overlaid(s, p.variant()));
  const std::vector<std::string>& known = it->second;
  if (std::find(known.begin(), known.end(), p.metric()) == known.end()) {
    return absl::StrCat("'", p.metric(), "' is not a metric of variant '", shown, "' (",
                        known.empty() ? std::string("it has no workload, so no metrics")
                                      : absl::StrCat("metrics: ", absl::StrJoin(known, ", ")),
                        ")");
  }
  return "";
}

}  // namespace viosim
