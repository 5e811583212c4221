#include "bench/line_measure.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace linebench {
namespace {

using Clock = std::chrono::steady_clock;

// Entries of the owner logs of one contended run, all threads together
// (4 bytes each).
constexpr uint64_t kLogBudget = uint64_t{1} << 25;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One line to itself, so nothing else the program touches shares it.
struct alignas(64) Line {
  std::atomic<uint64_t> value{0};
};
struct alignas(64) Flag {
  std::atomic<bool> set{false};
};

// Pins the calling thread to `cpu`.
absl::Status PinSelf(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot pin a thread to CPU ", cpu, " (pthread_setaffinity_np: ", std::strerror(err),
                     "); --cpus chooses CPUs this process may use"));
  }
  return absl::OkStatus();
}

// Runs body(t) on one thread per CPU of `cpus`, each pinned, all released
// together once every thread is pinned, just after on_start(). If a thread
// cannot be pinned no body runs, and the error is returned once all threads
// have ended.
absl::Status RunPinned(const std::vector<int>& cpus, const std::function<void(int)>& body,
                       const std::function<void()>& on_start) {
  Flag start, abort;
  std::atomic<int> ready{0};
  std::vector<absl::Status> pinned(cpus.size());
  std::vector<std::thread> threads;
  threads.reserve(cpus.size());
  for (size_t t = 0; t < cpus.size(); ++t) {
    threads.emplace_back([&, t] {
      pinned[t] = PinSelf(cpus[t]);
      ready.fetch_add(1);
      while (!start.set.load(std::memory_order_acquire)) CpuRelax();
      if (pinned[t].ok() && !abort.set.load()) body(static_cast<int>(t));
    });
  }
  while (ready.load() < static_cast<int>(cpus.size())) std::this_thread::yield();
  absl::Status status;
  for (const absl::Status& s : pinned) status.Update(s);
  if (!status.ok()) abort.set.store(true);
  if (status.ok()) on_start();
  start.set.store(true, std::memory_order_release);
  for (std::thread& th : threads) th.join();
  return status;
}

}  // namespace

double Samples::Median() const {
  if (ns.empty()) return 0;
  std::vector<double> s = ns;
  std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
  const double hi = s[s.size() / 2];
  if (s.size() % 2 == 1) return hi;
  return (hi + *std::max_element(s.begin(), s.begin() + s.size() / 2)) / 2;
}

absl::StatusOr<Samples> PingPong(int a, int b, double seconds) {
  constexpr int kRoundTrips = 256;
  Samples out;
  out.events_per_sample = kRoundTrips;
  Line line;
  Flag done;
  // Thread 0 (on a) moves the value from 2i to 2i+1, thread 1 (on b) from
  // 2i+1 to 2i+2: each CAS succeeds only once the other's has, so a round
  // trip is two hand-offs of the line.
  const absl::Status status = RunPinned(
      {a, b},
      [&](int t) {
        if (t == 1) {
          for (uint64_t v = 1; !done.set.load(std::memory_order_relaxed);) {
            uint64_t expected = v;
            if (line.value.compare_exchange_strong(expected, v + 1)) v += 2;
          }
          return;
        }
        const int64_t t_end = NowNs() + static_cast<int64_t>(seconds * 1e9);
        uint64_t v = 0;
        for (int batch = 0;; ++batch) {
          const int64_t t0 = NowNs();
          for (int i = 0; i < kRoundTrips; ++i, v += 2) {
            for (uint64_t expected = v; !line.value.compare_exchange_strong(expected, v + 1);) expected = v;
          }
          const int64_t t1 = NowNs();
          if (batch > 0) out.ns.push_back(static_cast<double>(t1 - t0) / (2.0 * kRoundTrips));
          if (t1 >= t_end && out.ns.size() >= 3) break;
        }
        done.set.store(true);
      },
      [] {});
  if (!status.ok()) return status;
  return out;
}

const char* OpName(Op op) { return op == Op::kXadd ? "xadd" : "cas"; }

uint64_t ContendedRun::Successes() const {
  uint64_t n = 0;
  for (uint64_t s : successes) n += s;
  return n;
}

uint64_t ContendedRun::Failures() const {
  uint64_t n = 0;
  for (uint64_t f : failures) n += f;
  return n;
}

absl::StatusOr<ContendedRun> Contend(Op op, const std::vector<int>& cpus, double seconds,
                                     uint64_t max_per_thread) {
  const size_t n = cpus.size();
  // Old values are logged as 32 bits: the run stays below 2^32 successes.
  // The logs are faulted in before the start (a page fault mid-run would be
  // timed as the line's), within a budget for all threads together.
  max_per_thread = std::min<uint64_t>({max_per_thread, (uint64_t{1} << 32) / n - 1, kLogBudget / n});
  const size_t bytes = max_per_thread * sizeof(uint32_t);
  std::vector<uint32_t*> logs(n, nullptr);
  auto unmap = [&] {
    for (uint32_t* l : logs) {
      if (l != nullptr) munmap(l, bytes);
    }
  };
  for (size_t t = 0; t < n; ++t) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
      unmap();
      return absl::ResourceExhaustedError(absl::StrCat("cannot map ", bytes, " bytes for a thread's log"));
    }
    logs[t] = static_cast<uint32_t*>(p);
  }

  std::vector<std::vector<std::pair<uint64_t, int64_t>>> stamps(n);
  for (auto& st : stamps) st.reserve(max_per_thread / kStampEvery + 1);

  ContendedRun run;
  run.op = op;
  run.cpus = cpus;
  run.successes.assign(n, 0);
  run.failures.assign(n, 0);
  Line line;
  Flag stop;
  std::atomic<int64_t> stop_ns{0};
  std::atomic<size_t> started{0};  // threads with a success
  auto request_stop = [&] {
    int64_t none = 0;
    stop_ns.compare_exchange_strong(none, NowNs());
    stop.set.store(true);
  };
  int64_t start_ns = 0;
  std::thread timer;
  const absl::Status status = RunPinned(
      cpus,
      [&](int t) {
        uint32_t* log = logs[t];
        uint64_t done = 0, failed = 0;
        // Until its first success a thread ignores the stop: every thread
        // is in every run, even one the host kept off its CPU for a while.
        if (op == Op::kXadd) {
          while (done == 0 || !stop.set.load(std::memory_order_relaxed)) {
            if (done == max_per_thread) {
              request_stop();
              break;
            }
            const uint64_t old = line.value.fetch_add(1, std::memory_order_relaxed);
            log[done] = static_cast<uint32_t>(old);
            if (done++ % kStampEvery == 0) stamps[t].emplace_back(old, NowNs());
            if (done == 1) started.fetch_add(1);
          }
        } else {
          uint64_t v = line.value.load(std::memory_order_relaxed);
          while (done == 0 || !stop.set.load(std::memory_order_relaxed)) {
            if (done == max_per_thread) {
              request_stop();
              break;
            }
            if (line.value.compare_exchange_strong(v, v + 1, std::memory_order_relaxed)) {
              log[done] = static_cast<uint32_t>(v);
              if (done++ % kStampEvery == 0) stamps[t].emplace_back(v, NowNs());
              if (done == 1) started.fetch_add(1);
              ++v;
            } else {
              ++failed;
            }
          }
        }
        run.successes[t] = done;
        run.failures[t] = failed;
      },
      [&] {
        start_ns = NowNs();
        // The stop comes from a thread of its own, unpinned, so that the
        // measuring threads never wait for the caller.
        timer = std::thread([&] {
          const int64_t end = start_ns + static_cast<int64_t>(seconds * 1e9);
          // The run lasts `seconds`, and until every thread has had a success.
          while (!stop.set.load() && (NowNs() < end || started.load() < n)) {
            std::this_thread::sleep_for(std::chrono::microseconds(500));
          }
          request_stop();
        });
      });
  if (timer.joinable()) timer.join();
  if (!status.ok()) {
    unmap();
    return status;
  }
  run.seconds = static_cast<double>(stop_ns.load() - start_ns) / 1e9;
  run.final_value = line.value.load();

  // The line's order: success with old value k is the k-th.
  constexpr uint32_t kNone = ~uint32_t{0};
  bool whole = run.Successes() == run.final_value;
  if (whole) run.owner.assign(run.final_value, kNone);
  for (size_t t = 0; t < n && whole; ++t) {
    for (uint64_t i = 0; i < run.successes[t]; ++i) {
      const uint32_t k = logs[t][i];
      if (k >= run.final_value || run.owner[k] != kNone) {
        whole = false;
        break;
      }
      run.owner[k] = static_cast<uint32_t>(t);
    }
  }
  if (!whole) run.owner.clear();
  unmap();
  for (const auto& st : stamps) run.stamps.insert(run.stamps.end(), st.begin(), st.end());
  std::sort(run.stamps.begin(), run.stamps.end());
  return run;
}

Samples Windows(const ContendedRun& run) {
  // Windows between stamps at least `span` successes apart.
  const uint64_t span = std::max<uint64_t>(4096, 128 * run.cpus.size());
  Samples windows;
  for (size_t i = 0, j = 0; i < run.stamps.size(); i = j) {
    for (j = i + 1; j < run.stamps.size() && run.stamps[j].first - run.stamps[i].first < span; ++j) {
    }
    if (j == run.stamps.size()) break;
    const double dt = static_cast<double>(run.stamps[j].second - run.stamps[i].second);
    windows.ns.push_back(dt / static_cast<double>(run.stamps[j].first - run.stamps[i].first));
  }
  windows.events_per_sample = static_cast<int>(span);
  return windows;
}

absl::StatusOr<Samples> LocalHit(int cpu, double seconds) {
  absl::StatusOr<ContendedRun> run = Contend(Op::kXadd, {cpu}, seconds);
  if (!run.ok()) return run.status();
  Samples windows = Windows(*run);
  if (windows.ns.empty()) windows.ns.push_back(run->seconds * 1e9 / static_cast<double>(run->Successes()));
  return windows;
}

Analysis Analyze(const ContendedRun& run, const Topology& topo, const Costs& costs) {
  Analysis a;
  a.transactions = run.owner.size();
  a.run_service_ns = run.seconds * 1e9 / static_cast<double>(a.transactions);
  const size_t n = run.cpus.size();
  const Samples windows = Windows(run);
  a.windows = static_cast<int>(windows.ns.size());
  a.service_ns = a.windows >= 5 ? windows.Median() : a.run_service_ns;
  std::vector<uint64_t> last(n, 0);
  std::vector<bool> seen(n, false);
  double cost_sum = 0;
  bool costed = true;
  for (uint64_t k = 0; k < a.transactions; ++k) {
    const uint32_t t = run.owner[k];
    if (seen[t] && k - last[t] - 1 > a.max_passed_over) {
      a.max_passed_over = k - last[t] - 1;
      a.max_passed_over_thread = static_cast<int>(t);
    }
    seen[t] = true;
    last[t] = k;
    if (k == 0) continue;
    const uint32_t prev = run.owner[k - 1];
    const Distance d = prev == t ? Distance::kSameCpu : topo.Between(run.cpus[prev], run.cpus[t]);
    ++a.pairs[static_cast<int>(d)];
    if (costs[static_cast<int>(d)].has_value()) {
      cost_sum += *costs[static_cast<int>(d)];
    } else {
      costed = false;
    }
  }
  const uint64_t pairs = a.transactions > 0 ? a.transactions - 1 : 0;
  if (pairs > 0) {
    for (int d = 0; d < kDistances; ++d) a.share[d] = static_cast<double>(a.pairs[d]) / static_cast<double>(pairs);
    if (costed) {
      a.mean_handoff_ns = cost_sum / static_cast<double>(pairs);
      a.ratio = a.service_ns / *a.mean_handoff_ns;
    }
    if (a.pairs[static_cast<int>(Distance::kSameSocketLlcUnknown)] == 0) {
      a.near_share = a.share[static_cast<int>(Distance::kSameCpu)] + a.share[static_cast<int>(Distance::kSameCore)] +
                     a.share[static_cast<int>(Distance::kSameLlc)];
    }
  }
  a.min_per_thread = *std::min_element(run.successes.begin(), run.successes.end());
  a.max_per_thread = *std::max_element(run.successes.begin(), run.successes.end());
  return a;
}

std::vector<int> ThreadCounts(int max) {
  std::vector<int> counts;
  for (int c = 1; c < max; c *= 2) counts.push_back(c);
  counts.push_back(max);
  return counts;
}

}  // namespace linebench
