// What the md model tests share: a sink that counts completions and brd
// costs of round figures.
#ifndef VIOSIM_TESTS_MD_MD_TEST_UTIL_H_
#define VIOSIM_TESTS_MD_MD_TEST_UTIL_H_

#include "models/block/block_stack.h"
#include "models/cpu/cpu.h"
#include "models/md/brd.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

class CountingSink : public CompletionSink {
 public:
  sim::Task Complete(BlockRequest& rq, Cpu& cpu) override {
    (void)cpu;
    rq.done = true;
    ++completed;
    co_return;
  }
  int completed = 0;
};

inline BrdCosts TestBrds() {
  BrdCosts b;
  b.submit_bio.value = sim::Time::Nanos(100);
  b.lookup_page.value = sim::Time::Nanos(100);
  b.copy_page.value = sim::Time::Nanos(500);
  return b;
}

}  // namespace models

#endif  // VIOSIM_TESTS_MD_MD_TEST_UTIL_H_
