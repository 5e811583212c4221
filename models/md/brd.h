// The RAM-backed block device (drivers/block/brd.c, Linux 6.4): a bio-based
// driver whose submit_bio copies each page to or from its page store and
// ends the bio before returning, in the submitter's context. No queue, no
// interrupt, no sleeping.
#ifndef VIOSIM_MODELS_MD_BRD_H_
#define VIOSIM_MODELS_MD_BRD_H_

#include <cstdint>
#include <string>
#include <utility>

#include "models/cpu/cpu.h"
#include "models/cpu/param.h"
#include "sim/task.h"
#include "sim/time.h"

namespace models {

struct BrdCosts {
  // brd_submit_bio()'s own work per bio: the segment iteration and the
  // bio_endio() call (not what the bio's end_io does).
  Param<sim::Time> submit_bio;
  // brd_lookup_page(): the page store's lookup of one 4 KiB page.
  Param<sim::Time> lookup_page;
  // copy_to_brd() / copy_from_brd(): one 4 KiB page copied (kmap, memcpy).
  Param<sim::Time> copy_page;
};

class Brd {
 public:
  Brd(std::string name, const BrdCosts& costs) : name_(std::move(name)), costs_(costs) {}
  Brd(const Brd&) = delete;
  Brd& operator=(const Brd&) = delete;

  const std::string& name() const { return name_; }
  const BrdCosts& costs() const { return costs_; }

  // brd_submit_bio() of a `bytes`-long bio by the task running on `cpu`:
  // brd_do_bvec for each page (lookup, copy), then bio_endio. Returns when
  // the data is copied; the caller runs the bio's end_io next, as bio_endio
  // does inside brd_submit_bio. One charge of CPU time (an awaiter, no
  // coroutine frame).
  Cpu::WorkAwaiter SubmitBio(Cpu& cpu, uint32_t bytes);
  // What SubmitBio charges for a `bytes`-long bio.
  sim::Time Cost(uint32_t bytes) const;

  // Bios and pages since the last ResetStats.
  uint64_t bios() const { return bios_; }
  uint64_t pages() const { return pages_; }
  void ResetStats() { bios_ = pages_ = 0; }

 private:
  std::string name_;
  BrdCosts costs_;
  uint64_t bios_ = 0;
  uint64_t pages_ = 0;
};

}  // namespace models

#endif  // VIOSIM_MODELS_MD_BRD_H_
