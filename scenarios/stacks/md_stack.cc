#include "scenarios/stacks/md_stack.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace viosim::stacks {

absl::StatusOr<MdLineCosts> MdLines(const Params& scenario, int home_socket, double k) {
  absl::StatusOr<models::LineCosts> lines = LineCostsOf(scenario["platform"], scenario["run"], home_socket);
  if (!lines.ok()) return lines.status();
  MdLineCosts c{*lines, lines->handoff};
  for (models::Param<sim::Time>* e :
       {&c.wait_lock.same_core, &c.wait_lock.same_llc, &c.wait_lock.same_socket, &c.wait_lock.other_socket}) {
    e->value = sim::Time::Picos(static_cast<int64_t>(std::llround(static_cast<double>(e->value.ps()) * k)));
  }
  return c;
}

absl::StatusOr<MdStackInputs> ReadMdStack(const Params& scenario, absl::string_view name, models::MdCosts* c,
                                          absl::Span<const CostSlot> own, bool has_sleeper) {
  const Params r = scenario["stack"][std::string(name)];
  MdStackInputs in;
  std::vector<CostSlot> fields = {
      {"dio_submit", &c->dio_submit},
      {"dio_complete", &c->dio_complete},
      {"plug", &c->plug},
      {"make_request", &c->make_request},
      {"barrier_check", &c->barrier_check},
      {"read_balance", &c->read_balance},
      {"bio_clone", &c->bio_clone},
      {"plug_cb_alloc", &c->plug_cb_alloc},
      {"plug_cb_free", &c->plug_cb_free},
      {"end_request", &c->end_request},
      {"end_bio_io", &c->end_bio_io},
      {"wake_up_walk", &c->wake_up_walk},
  };
  if (has_sleeper) fields.push_back({"has_sleeper", &c->has_sleeper});
  fields.insert(fields.end(), own.begin(), own.end());
  for (const CostSlot& b : {CostSlot{"brd_submit_bio", &in.brd.submit_bio},
                            CostSlot{"brd_lookup_page", &in.brd.lookup_page},
                            CostSlot{"brd_copy_page", &in.brd.copy_page}}) {
    fields.push_back(b);
  }
  if (absl::Status st = RequiredCosts(r, fields); !st.ok()) return st;
  if (!r.Has("lock_word_transfers")) {
    return absl::InvalidArgumentError(absl::StrCat("field 'stack.", name, ".lock_word_transfers' is required"));
  }
  in.lock_word_transfers = r.Real("lock_word_transfers");
  absl::StatusOr<MdLineCosts> lines = MdLines(scenario, static_cast<int>(r.Int("home_socket")), in.lock_word_transfers);
  if (!lines.ok()) return lines.status();
  in.lines = *lines;
  return in;
}

double MdIos(const models::MdArray& md) { return static_cast<double>(md.stats().reads + md.stats().writes); }

MetricDecls<MdStack> WaitBarrierMetrics() {
  auto ios = [](MdStack& s) { return MdIos(s.md()); };
  auto wq = [](MdStack& s) -> const models::LockStat& { return s.md().wait_barrier().lock().stat(); };
  return {
      {"wait_barrier_lock_per_io", [wq](MdStack& s) { return static_cast<double>(wq(s).acquisitions); }, ios, 1},
      {"wait_barrier_contention_pct", [wq](MdStack& s) { return static_cast<double>(wq(s).contentions); },
       [wq](MdStack& s) { return static_cast<double>(wq(s).acquisitions); }, 100},
      {"wait_barrier_wait_us_per_io", [wq](MdStack& s) { return wq(s).wait.sum(); }, ios, 1e-6},
      {"xfer_per_io_wait_barrier_lock",
       [wq](MdStack& s) { return s.lock_word_transfers() * static_cast<double>(wq(s).contentions); }, ios, 1},
  };
}

MetricDecls<MdStack> CpuSplitMetrics() {
  auto cpu_s = [](MdStack& s) { return s.machine().ElapsedS() * s.machine().ncpus(); };
  auto sec = [](sim::Time t) { return t.ToSeconds(); };
  auto time_in = [](models::CpuTime t) { return [t](MdStack& s) { return s.machine().TimeInS(t); }; };
  return {
      {"md_cpu_pct", [sec](MdStack& s) { return sec(s.md().stats().md); }, cpu_s, 100},
      {"brd_cpu_pct", [sec](MdStack& s) { return sec(s.md().stats().brd); }, cpu_s, 100},
      {"dio_cpu_pct", [sec](MdStack& s) { return sec(s.md().stats().dio); }, cpu_s, 100},
      {"spin_cpu_pct", time_in(models::CpuTime::kSpin), cpu_s, 100},
      {"fio_user_cpu_pct", time_in(models::CpuTime::kUser), cpu_s, 100},
      {"other_sys_cpu_pct",
       [sec](MdStack& s) {
         const models::MdArray::Stats& st = s.md().stats();
         return s.machine().TimeInS(models::CpuTime::kSystem) - sec(st.md) - sec(st.dio) - sec(st.brd);
       },
       cpu_s, 100},
      {"idle_cpu_pct", time_in(models::CpuTime::kIdle), cpu_s, 100},
  };
}

}  // namespace viosim::stacks
