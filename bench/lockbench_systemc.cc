// The lock benchmark in SystemC (Debian 12's libsystemc-dev, 2.3), for
// bench/compare_external.sh only; not part of the Bazel build. N threads
// (SC_THREAD processes) think Exp(10us), take one FIFO lock, hold it
// Exp(2us), release it, and repeat, until a given number of acquisitions.
// The lock is a queue of waiting threads, each woken by its own event when
// the lock is handed to it, so that it is FIFO like viosim's ticket lock
// (sc_mutex wakes every waiter and lets them race).
//
// Standard-library random numbers, not viosim's streams: the figures agree
// with viosim's in distribution (throughput and mean wait), not draw for
// draw.
//
//   lockbench_systemc N ACQUISITIONS
// prints one line: N acquisitions wall_seconds acquisitions_per_us wait_us.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <vector>

namespace {

struct LockBench {
  LockBench(int n, long target) : target(target) {
    for (int i = 0; i < n; ++i) {
      rngs.emplace_back(i + 1);
      wake.push_back(std::make_unique<sc_core::sc_event>());
      sc_core::sc_spawn([this, i] { Thread(i); });
    }
  }

  void Thread(int i) {
    std::mt19937_64& rng = rngs[i];
    std::exponential_distribution<double> think(1 / 10e6), hold(1 / 2e6);  // rates per ps
    for (;;) {
      sc_core::wait(sc_core::sc_time(think(rng), sc_core::SC_PS));
      const sc_core::sc_time asked = sc_core::sc_time_stamp();
      if (locked) {
        waiting.push_back(i);
        sc_core::wait(*wake[i]);  // the lock is ours when this fires
      } else {
        locked = true;
      }
      wait_ps += (sc_core::sc_time_stamp() - asked).to_seconds() * 1e12;
      if (++acquisitions == target) sc_core::sc_stop();
      sc_core::wait(sc_core::sc_time(hold(rng), sc_core::SC_PS));
      if (waiting.empty()) {
        locked = false;
      } else {
        const int next = waiting.front();
        waiting.pop_front();
        wake[next]->notify();
      }
    }
  }

  long target;
  std::vector<std::mt19937_64> rngs;
  std::vector<std::unique_ptr<sc_core::sc_event>> wake;
  std::deque<int> waiting;
  bool locked = false;
  long acquisitions = 0;
  double wait_ps = 0;
};

}  // namespace

int sc_main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N ACQUISITIONS\n", argv[0]);
    return 2;
  }
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // "stopped by user"
  LockBench bench(std::atoi(argv[1]), std::atol(argv[2]));
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double sim_us = sc_core::sc_time_stamp().to_seconds() * 1e6;
  std::printf("%s %ld %.3f %.4f %.3f\n", argv[1], bench.acquisitions, wall, bench.acquisitions / sim_us,
              bench.wait_ps * 1e-6 / bench.acquisitions);
  return 0;
}
