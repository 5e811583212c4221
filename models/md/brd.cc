#include "models/md/brd.h"

namespace models {

namespace {
constexpr uint32_t kPageSize = 4096;
}

sim::Time Brd::Cost(uint32_t bytes) const {
  const int64_t pages = (static_cast<int64_t>(bytes) + kPageSize - 1) / kPageSize;
  return costs_.submit_bio.value + (costs_.lookup_page.value + costs_.copy_page.value) * pages;
}

// brd_submit_bio(): bio_for_each_segment -> brd_do_bvec (copy_to_brd_setup
// and copy_to_brd for a write, copy_from_brd for a read, each looking the
// page up first), then bio_endio(bio).
Cpu::WorkAwaiter Brd::SubmitBio(Cpu& cpu, uint32_t bytes) {
  ++bios_;
  pages_ += (bytes + kPageSize - 1) / kPageSize;
  return cpu.Run(Cost(bytes));
}

}  // namespace models
