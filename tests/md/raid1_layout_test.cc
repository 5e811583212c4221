// struct r1conf and struct raid1_info as Linux 6.4 lays them out on x86_64
// without debug options, mirrored here with stand-in types of the kernel
// types' sizes and alignments: every offset the model's table
// (models/md/raid1_layout.h) gives is the compiler's.
#include <cstddef>
#include <cstdint>

#include "gtest/gtest.h"
#include "models/md/raid1_layout.h"

namespace models {
namespace {

// Stand-ins: each has the size and alignment of the kernel type on x86_64.
struct ListHead {  // struct list_head
  void* next;
  void* prev;
};
struct BioList {  // struct bio_list
  void* head;
  void* tail;
};
using SpinlockT = uint32_t;  // spinlock_t: arch_spinlock_t, no lockdep
using AtomicT = int32_t;     // atomic_t
struct WaitQueueHeadT {      // wait_queue_head_t
  SpinlockT lock;
  ListHead head;
};
static_assert(sizeof(WaitQueueHeadT) == 24);

// drivers/md/raid1.h, struct r1conf, through the fields the fast path
// touches and their line neighbours.
struct R1conf {
  void* mddev;
  void* mirrors;
  int raid_disks;
  SpinlockT device_lock;
  ListHead retry_list;
  ListHead bio_end_io_list;
  BioList pending_bio_list;
  WaitQueueHeadT wait_barrier;
  SpinlockT resync_lock;
  AtomicT nr_sync_pending;
  AtomicT* nr_pending;
  AtomicT* nr_waiting;
  AtomicT* nr_queued;
  AtomicT* barrier;
  int array_frozen;
  int fullsync;
  int recovery_disabled;
};

// struct raid1_info.
struct Raid1Info {
  void* rdev;
  uint64_t head_position;  // sector_t
  uint64_t next_seq_sect;
  uint64_t seq_start;
};

#define PIN(layout, type, member, name)                                              \
  static_assert(offsetof(type, member) == static_cast<size_t>(raid1_layout::layout.OffsetOf(name)), \
                name " is not where the struct puts it")

PIN(kR1conf, R1conf, mddev, "mddev");
PIN(kR1conf, R1conf, mirrors, "mirrors");
PIN(kR1conf, R1conf, raid_disks, "raid_disks");
PIN(kR1conf, R1conf, device_lock, "device_lock");
PIN(kR1conf, R1conf, retry_list, "retry_list");
PIN(kR1conf, R1conf, bio_end_io_list, "bio_end_io_list");
PIN(kR1conf, R1conf, pending_bio_list, "pending_bio_list");
PIN(kR1conf, R1conf, wait_barrier.lock, "wait_barrier.lock");
PIN(kR1conf, R1conf, wait_barrier.head, "wait_barrier.head");
PIN(kR1conf, R1conf, resync_lock, "resync_lock");
PIN(kR1conf, R1conf, nr_sync_pending, "nr_sync_pending");
PIN(kR1conf, R1conf, nr_pending, "nr_pending");
PIN(kR1conf, R1conf, nr_waiting, "nr_waiting");
PIN(kR1conf, R1conf, nr_queued, "nr_queued");
PIN(kR1conf, R1conf, barrier, "barrier");
PIN(kR1conf, R1conf, array_frozen, "array_frozen");
PIN(kR1conf, R1conf, fullsync, "fullsync");
PIN(kR1conf, R1conf, recovery_disabled, "recovery_disabled");
PIN(kRaid1Info, Raid1Info, rdev, "rdev");
PIN(kRaid1Info, Raid1Info, head_position, "head_position");
PIN(kRaid1Info, Raid1Info, next_seq_sect, "next_seq_sect");
PIN(kRaid1Info, Raid1Info, seq_start, "seq_start");
static_assert(sizeof(Raid1Info) == raid1_layout::kRaid1InfoSize);

// The same at run time, and each field's size.
TEST(Raid1LayoutTest, EveryTableEntryHasItsStructsSize) {
  const R1conf c{};
  const StructLayout& conf = raid1_layout::kR1conf;
  auto size_of = [&conf](std::string_view name) {
    const FieldLayout* f = conf.Find(name);
    return f == nullptr ? -1 : static_cast<int>(f->size);
  };
  EXPECT_EQ(size_of("wait_barrier.lock"), static_cast<int>(sizeof(c.wait_barrier.lock)));
  EXPECT_EQ(size_of("wait_barrier.head"), static_cast<int>(sizeof(c.wait_barrier.head)));
  EXPECT_EQ(size_of("nr_pending"), static_cast<int>(sizeof(c.nr_pending)));
  EXPECT_EQ(size_of("array_frozen"), static_cast<int>(sizeof(c.array_frozen)));
  EXPECT_EQ(size_of("pending_bio_list"), static_cast<int>(sizeof(c.pending_bio_list)));
  // Every entry starts after the previous one ends.
  for (size_t i = 1; i < conf.fields.size(); ++i) {
    EXPECT_GE(conf.fields[i].offset, conf.fields[i - 1].offset + conf.fields[i - 1].size) << conf.fields[i].name;
  }
  // The fast path's lines: the wait queue's lock and list with the
  // bucket-array pointers; array_frozen with the barrier pointer.
  EXPECT_EQ(conf.LineOfField("wait_barrier.lock"), conf.LineOfField("nr_pending"));
  EXPECT_EQ(conf.LineOfField("barrier"), conf.LineOfField("array_frozen"));
  EXPECT_NE(conf.LineOfField("nr_pending"), conf.LineOfField("array_frozen"));
}

}  // namespace
}  // namespace models
