// What-ifs that cannot silently mislead, as a class: for every scenario in
// scenarios/, every variant and every scalar path of the schema (found by
// reflection), a --set of a changed value is either refused (exit 2's
// InvalidArgument) or the path is in the variant's read set; and a path a
// variant reads changes its output at two very different values, unless it
// is in the short allow-list below, which the test prints with its reasons.
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis/reads.h"
#include "analysis/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/params.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::vector<std::string> ScenarioPaths() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    if (e.path().extension() == ".textproto") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The scalar's field descriptor and current text in `s` (a resolved
// variant); null when a step is not a message.
const FieldDescriptor* FieldAt(const viosim::Scenario& s, const std::string& path, const Message** holder) {
  const Message* m = &s;
  std::vector<std::string> steps = absl::StrSplit(path, '.');
  for (size_t k = 0; k < steps.size(); ++k) {
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(steps[k]);
    if (f == nullptr || f->is_repeated()) return nullptr;
    if (k + 1 == steps.size()) {
      *holder = m;
      return f;
    }
    m = &m->GetReflection()->GetMessage(*m, f);
  }
  return nullptr;
}

// Two very different values of the scalar at `path`, as --set takes them.
std::vector<std::string> TwoValues(const viosim::Scenario& s, const std::string& path) {
  const Message* m = nullptr;
  const FieldDescriptor* f = FieldAt(s, path, &m);
  if (f == nullptr) return {};
  const google::protobuf::Reflection* r = m->GetReflection();
  const bool set = r->HasField(*m, f);
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return {"false", "true"};
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Its values after the first; a two-valued enum, both.
      std::vector<std::string> out;
      const int count = f->enum_type()->value_count();
      for (int i = count == 2 ? 0 : 1; i < count; ++i) out.push_back(f->enum_type()->value(i)->name());
      return out;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string now = r->GetString(*m, f);
      if (f->options().GetExtension(viosim::unit) == viosim::TIME) {
        absl::StatusOr<sim::Time> t = viosim::ParseDuration(now);
        if (!set || !t.ok() || t->ps() == 0) return {"1ns", "20us"};
        return {"*0.25", "*4"};
      }
      if (f->name() == "scheduler") return {"pinned", "fair"};
      if (f->name() == "preset") return {"epyc_rome", "none"};
      if (f->name() == "arbitration") return {"fifo", "unqueued"};
      return {now, absl::StrCat(now, "-changed")};
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return {"*0.25", "*4"};
    default: {
      int64_t now = 0;
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT32) now = r->GetInt32(*m, f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT64) now = r->GetInt64(*m, f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) now = static_cast<int64_t>(r->GetUInt64(*m, f));
      if (path == "platform.cpus") return {"*0.5", "*0.25"};  // more would only cost time
      if (now <= 0) return {"0", "1"};
      if (now == 1) return {"1", "4"};
      return {"*0.25", "*2"};
    }
  }
}

// What a run shows: its metrics and their intervals, its bound, or the
// error that refused it.
std::string Outcome(const viosim::ScenarioFile& file, const std::string& variant, std::vector<std::string> overrides) {
  RunRequest req;
  req.overrides = std::move(overrides);
  absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(file, {variant}, req);
  if (!r.ok()) return absl::StrCat("refused: ", r.status().message());
  std::string out = r->front().bound;
  for (const sim::MetricEstimate& m : r->front().metrics) {
    absl::StrAppend(&out, m.name, "=", absl::StrFormat("%.17g", m.value), "+-",
                    m.ci95 ? absl::StrFormat("%.17g", *m.ci95) : "-", ";");
  }
  return out;
}

TEST(WhatIfPathsTest, EverySchemaPathIsRefusedOrRead) {
  const std::vector<std::string> schema = viosim::SchemaScalarPaths(viosim::Scenario::descriptor());
  ASSERT_GT(schema.size(), 200u);
  int refused = 0, read = 0;
  for (const std::string& path : ScenarioPaths()) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    for (const std::string& v : viosim::VariantNames(*file)) {
      absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(*file, v, {});
      ASSERT_TRUE(base.ok()) << base.status();
      for (const std::string& p : schema) {
        std::vector<std::string> values = TwoValues(*base, p);
        if (values.empty()) values = {"1"};
        const std::string set = absl::StrCat(p, "=", values.back());
        const absl::Status checked = CheckPathsRead(*file, {v}, {set});
        if (!checked.ok()) {
          EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument) << path << " " << v << " " << set;
          ++refused;
          continue;
        }
        absl::StatusOr<viosim::ReadSet> reads = ReadsOf(*file, v, {set});
        ASSERT_TRUE(reads.ok()) << reads.status();
        EXPECT_TRUE(reads->Contains(p)) << path << " " << v << ": --set " << set << " accepted but not read";
        ++read;
      }
    }
  }
  std::cout << "schema paths x variants: " << read << " read, " << refused << " refused\n";
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

// Read paths ("SCENARIO: PATH") that change no output of any variant that
// reads them, at two very different values, and why.
const std::map<std::string, std::string>& AllowList() {
  static const auto* list = new std::map<std::string, std::string>{
      {"run.max_request_slots",
       "the memory budget: it refuses a run that would hold more request slots, and moves no modeled value below it"},
      {"scenarios/lockbench.textproto: platform.scheduler",
       "one thread per CPU, which never waits for a CPU: both schedulers run it the same"},
      {"scenarios/raid10_unplug.textproto: platform.host.try_to_wake_up.value",
       "no fio task sleeps (each keeps 64 I/Os in flight, so io_getevents finds events waiting): no wake-up"},
      {"scenarios/raid10_unplug.textproto: platform.host.try_to_wake_up_fast.value", "as try_to_wake_up"},
      {"scenarios/raid10_unplug.textproto: platform.host.wakeup_latency.value", "as try_to_wake_up"},
      {"scenarios/raid10_unplug.textproto: stack.raid10.md_thread_run.value",
       "raid10d runs only when a task sleeps holding its plug, and no fio task sleeps inside io_submit on brd: "
       "raid10d_flushes_per_write stays 0"},
      {"scenarios/raid1_unplug.textproto: platform.host.try_to_wake_up.value", "as raid10's"},
      {"scenarios/raid1_unplug.textproto: platform.host.try_to_wake_up_fast.value", "as raid10's"},
      {"scenarios/raid1_unplug.textproto: platform.host.wakeup_latency.value", "as raid10's"},
      {"scenarios/raid1_unplug.textproto: stack.raid1.lock_word_transfers",
       "the after variant (IF_SLEEPER) alone reads has_sleeper, so it is a group of its own: there nobody sleeps on "
       "conf->wait_barrier, its lock is never contended and its word never handed off (before moves with it)"},
      {"scenarios/raid1_unplug.textproto: stack.raid1.wake_up_walk.value",
       "as lock_word_transfers: with IF_SLEEPER and no sleeper no wake-up walks the queue (before moves with it)"},
      {"scenarios/vhost_work_queue.textproto: platform.topology.sockets",
       "the fair scheduler balances over it, but the vhost worker, the vCPU thread and the NIC's interrupt each "
       "keep a host CPU of their own: no task moves"},
      {"scenarios/vhost_work_queue.textproto: platform.topology.llcs_per_socket", "as sockets"},
      {"scenarios/vhost_work_queue.textproto: platform.topology.threads_per_core", "as sockets"},
      {"scenarios/vhost_work_queue.textproto: run.seed", "the vhost model draws no random numbers"},
      {"scenarios/vhost_work_queue.textproto: stack.vhost_net.guest_qdisc_skbs",
       "vhost empties the TX ring faster than the wire takes the frames, so the ring never stops the guest's "
       "queue and its qdisc never holds an skb, at 250 or 2000"},
      {"scenarios/virtio_blk_kick_lock.textproto: platform.scheduler",
       "one fio job per vCPU, host threads pinned: both schedulers run it the same"},
      {"scenarios/virtio_blk_poll.textproto: platform.host.try_to_wake_up_fast.value",
       "no wake-up finds its task running or queued"},
      {"scenarios/virtio_blk_poll.textproto: platform.host.wakeup_latency.value",
       "a completion wakes its task on the vCPU it sleeps on, never a remote idle one"},
      {"scenarios/virtio_blk_poll.textproto: platform.lock_handoff.value",
       "one virtqueue per vCPU, each locked by its own vCPU only: never handed between CPUs"},
      {"scenarios/virtio_blk_poll.textproto: platform.scheduler", "one fio job per vCPU: both schedulers run it the same"},
      {"scenarios/virtio_blk_poll.textproto: stack.virtio_blk_mq.ring_size",
       "four jobs at depth 1 never hold more than 64 descriptors, at 64 or 512 entries alike"},
  };
  return *list;
}

// Whether the path moves the variant's output: the outcomes at its two
// values differ, or the value is refused (a path that can refuse a run
// matters). `shorter` shortens the runs, unless the path is the run
// control itself.
bool Moves(const viosim::ScenarioFile& file, const std::string& variant, const std::string& path,
           const std::vector<std::string>& values, bool shorter) {
  std::vector<std::string> base;
  if (shorter) {
    for (const char* r : {"run.warmup=2ms", "run.duration=4ms", "run.batches=4"}) {
      if (!absl::StartsWith(r, path + "=")) base.push_back(r);
    }
  }
  std::set<std::string> outcomes;
  for (const std::string& value : values) {
    std::vector<std::string> o = base;
    o.push_back(absl::StrCat(path, "=", value));
    outcomes.insert(Outcome(file, variant, o));
  }
  return outcomes.size() > 1 || absl::StartsWith(*outcomes.begin(), "refused: ");
}

TEST(WhatIfPathsTest, EveryReadPathMovesTheOutput) {
  std::set<std::string> allowed_hits;
  std::vector<std::string> unmoved;
  for (const std::string& path : ScenarioPaths()) {
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    // A stack without a workload is for `viosim fio --stack`, which reads
    // it with the job it is given (viosim::FioReads).
    if (!file->scenario.has_workload()) continue;
    // The variants grouped by what they read: a path must move some variant
    // of its group, in short runs or else in the scenario's own.
    std::map<std::set<std::string>, std::vector<std::string>> groups;
    for (const std::string& v : viosim::VariantNames(*file)) {
      absl::StatusOr<viosim::ReadSet> reads = ReadsOf(*file, v, {});
      ASSERT_TRUE(reads.ok()) << reads.status();
      groups[std::set<std::string>(reads->paths().begin(), reads->paths().end())].push_back(v);
    }
    for (const auto& [reads, variants] : groups) {
      absl::StatusOr<viosim::Scenario> base = viosim::ResolveVariant(*file, variants.front(), {});
      ASSERT_TRUE(base.ok()) << base.status();
      for (const std::string& p : reads) {
        const std::vector<std::string> values = TwoValues(*base, p);
        ASSERT_GE(values.size(), 2u) << p;
        // Short runs first; an allowed path is not run at length (it is
        // expected not to move); any other gets the scenario's own runs.
        const std::string key = absl::StrCat(path, ": ", p);
        const bool allowed = AllowList().count(key) > 0 || AllowList().count(p) > 0;
        bool moved = false;
        for (bool shorter : {true, false}) {
          if (!shorter && allowed) break;
          for (size_t i = 0; i < variants.size() && !moved; ++i) moved = Moves(*file, variants[i], p, values, shorter);
        }
        if (moved) continue;
        if (allowed) {
          allowed_hits.insert(AllowList().count(key) > 0 ? key : p);
        } else {
          unmoved.push_back(absl::StrCat(key, " at ", values[0], " and ", values[1]));
        }
      }
    }
  }
  std::cout << "read paths that move no output, allowed:\n";
  for (const auto& [p, why] : AllowList()) {
    std::cout << "  " << p << (allowed_hits.count(p) ? "" : " (moved this time)") << ": " << why << "\n";
  }
  for (const std::string& u : unmoved) std::cout << "UNMOVED " << u << "\n";
  EXPECT_THAT(unmoved, ::testing::IsEmpty()) << "read by a variant, yet its output is the same at two very "
                                                "different values: the reader records a read that is not used";
}

}  // namespace
}  // namespace analysis
