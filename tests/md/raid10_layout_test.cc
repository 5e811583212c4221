// The field offsets of models/md/raid10_layout.h against the structs
// themselves: each struct rebuilt in field order from stand-in types of the
// kernel types' x86_64 sizes and alignments (no debug options), and every
// field's offset and size checked with offsetof/sizeof.
#include "models/md/raid10_layout.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "models/sync/struct_layout.h"

namespace models {
namespace {

// Stand-ins of the kernel's types, by size and alignment.
using ptr = void*;                                           // any pointer
struct spinlock_t { uint32_t raw; };                         // 4 (arch_spinlock_t)
struct seqcount_spinlock_t { uint32_t sequence; };           // 4 without LOCKDEP / PREEMPT_RT
struct seqlock_t { seqcount_spinlock_t seqcount; spinlock_t lock; };  // 8
struct list_head { ptr next, prev; };                        // 16
struct wait_queue_head_t { spinlock_t lock; list_head head; };  // 24
struct bio_list { ptr head, tail; };                         // 16
using atomic_t = int32_t;
using sector_t = uint64_t;
struct geom {
  int raid_disks, near_copies, far_copies, far_offset;
  sector_t stride;
  int far_set_size, chunk_shift;
  sector_t chunk_mask;
};
struct mempool_t {  // spinlock, min_nr, curr_nr, elements, pool_data, alloc, free, wait
  spinlock_t lock;
  int min_nr, curr_nr;
  ptr elements, pool_data, alloc, free;
  wait_queue_head_t wait;
};
struct kref { atomic_t refcount; };
struct kobject {  // name, entry, parent, kset, ktype, sd, kref, state bits
  ptr name;
  list_head entry;
  ptr parent, kset, ktype, sd;
  kref ref;
  uint32_t state_bits;
};

struct r10conf {
  ptr mddev, mirrors, mirrors_new, mirrors_old;
  spinlock_t device_lock;
  geom prev, geo;
  int copies;
  sector_t dev_sectors, reshape_progress, reshape_safe;
  unsigned long reshape_checkpoint;
  sector_t offset_diff;
  list_head retry_list, bio_end_io_list;
  bio_list pending_bio_list;
  seqlock_t resync_lock;
  atomic_t nr_pending;
  int nr_waiting, nr_queued, barrier, array_freeze_pending;
  sector_t next_resync;
  int fullsync, have_replacement;
  wait_queue_head_t wait_barrier;
  mempool_t r10bio_pool;
};

struct raid10_info {
  ptr rdev, replacement;
  sector_t head_position;
  int recovery_disabled;
};

struct md_rdev {
  list_head same_set;
  sector_t sectors;
  ptr mddev;
  int last_events;
  ptr meta_bdev, bdev, sb_page, bb_page;
  int sb_loaded;
  uint64_t sb_events;
  sector_t data_offset, new_data_offset, sb_start;
  int sb_size, preferred_minor;
  kobject kobj;
  unsigned long flags;
  wait_queue_head_t blocked_wait;
  int desc_nr, raid_disk, new_raid_disk, saved_raid_disk;
  sector_t recovery_offset;
  atomic_t nr_pending, read_errors;
  int64_t last_read_error;
  atomic_t corrected_errors;
};

static_assert(sizeof(seqlock_t) == 8 && sizeof(wait_queue_head_t) == 24 && sizeof(geom) == 40);
static_assert(sizeof(mempool_t) == 72 && sizeof(kobject) == 64 && sizeof(raid10_info) == 32);

struct Actual {
  const char* name;
  size_t offset, size;
};
#define FIELD(s, f) Actual{#f, offsetof(s, f), sizeof(s::f)}
#define SUBFIELD(s, f, sub, name) Actual{name, offsetof(s, f) + offsetof(decltype(s::f), sub), sizeof(s::f.sub)}

void ExpectMatches(const StructLayout& layout, std::initializer_list<Actual> actual) {
  SCOPED_TRACE(std::string(layout.name));
  EXPECT_EQ(layout.fields.size(), actual.size()) << "every field the table has is checked";
  for (const Actual& a : actual) {
    const FieldLayout* f = layout.Find(a.name);
    ASSERT_NE(f, nullptr) << a.name;
    EXPECT_EQ(f->offset, a.offset) << a.name;
    EXPECT_EQ(f->size, a.size) << a.name;
  }
}

TEST(Raid10LayoutTest, R10confFieldsAreWhereTheStructPutsThem) {
  ExpectMatches(raid10_layout::kR10conf,
                {FIELD(r10conf, mddev), FIELD(r10conf, mirrors), FIELD(r10conf, mirrors_new),
                 FIELD(r10conf, mirrors_old), FIELD(r10conf, device_lock), FIELD(r10conf, prev), FIELD(r10conf, geo),
                 FIELD(r10conf, copies), FIELD(r10conf, dev_sectors), FIELD(r10conf, reshape_progress),
                 FIELD(r10conf, reshape_safe), FIELD(r10conf, reshape_checkpoint), FIELD(r10conf, offset_diff),
                 FIELD(r10conf, retry_list), FIELD(r10conf, bio_end_io_list), FIELD(r10conf, pending_bio_list),
                 SUBFIELD(r10conf, resync_lock, seqcount, "resync_lock.seqcount"),
                 SUBFIELD(r10conf, resync_lock, lock, "resync_lock.lock"), FIELD(r10conf, nr_pending),
                 FIELD(r10conf, nr_waiting), FIELD(r10conf, nr_queued), FIELD(r10conf, barrier),
                 FIELD(r10conf, array_freeze_pending), FIELD(r10conf, next_resync), FIELD(r10conf, fullsync),
                 FIELD(r10conf, have_replacement), SUBFIELD(r10conf, wait_barrier, lock, "wait_barrier.lock"),
                 SUBFIELD(r10conf, wait_barrier, head, "wait_barrier.head"), FIELD(r10conf, r10bio_pool)});
}

TEST(Raid10LayoutTest, BothMirrorEntriesAreOneLine) {
  raid10_info m[2];
  const auto base = reinterpret_cast<uintptr_t>(&m[0]);
  auto at = [base](const void* p) { return reinterpret_cast<uintptr_t>(p) - base; };
  ExpectMatches(raid10_layout::kMirrors,
                {{"mirrors[0].rdev", at(&m[0].rdev), 8}, {"mirrors[0].replacement", at(&m[0].replacement), 8},
                 {"mirrors[0].head_position", at(&m[0].head_position), 8},
                 {"mirrors[0].recovery_disabled", at(&m[0].recovery_disabled), 4},
                 {"mirrors[1].rdev", at(&m[1].rdev), 8}, {"mirrors[1].replacement", at(&m[1].replacement), 8},
                 {"mirrors[1].head_position", at(&m[1].head_position), 8},
                 {"mirrors[1].recovery_disabled", at(&m[1].recovery_disabled), 4}});
  EXPECT_EQ(sizeof(m), kCacheLineBytes);
}

TEST(Raid10LayoutTest, MdRdevFieldsAreWhereTheStructPutsThem) {
  ExpectMatches(raid10_layout::kMdRdev,
                {FIELD(md_rdev, same_set), FIELD(md_rdev, sectors), FIELD(md_rdev, mddev), FIELD(md_rdev, last_events),
                 FIELD(md_rdev, meta_bdev), FIELD(md_rdev, bdev), FIELD(md_rdev, sb_page), FIELD(md_rdev, bb_page),
                 FIELD(md_rdev, sb_loaded), FIELD(md_rdev, sb_events), FIELD(md_rdev, data_offset),
                 FIELD(md_rdev, new_data_offset), FIELD(md_rdev, sb_start), FIELD(md_rdev, sb_size),
                 FIELD(md_rdev, preferred_minor), FIELD(md_rdev, kobj), FIELD(md_rdev, flags),
                 FIELD(md_rdev, blocked_wait), FIELD(md_rdev, desc_nr), FIELD(md_rdev, raid_disk),
                 FIELD(md_rdev, new_raid_disk), FIELD(md_rdev, saved_raid_disk), FIELD(md_rdev, recovery_offset),
                 FIELD(md_rdev, nr_pending), FIELD(md_rdev, read_errors), FIELD(md_rdev, last_read_error),
                 FIELD(md_rdev, corrected_errors)});
}

// The lines the fast path's fields land on: what the model's names say.
TEST(Raid10LayoutTest, TheHotFieldsShareTheLinesTheModelNames) {
  const StructLayout& c = raid10_layout::kR10conf;
  for (const char* f : {"resync_lock.seqcount", "resync_lock.lock", "nr_pending", "nr_waiting", "barrier",
                        "array_freeze_pending", "next_resync"}) {
    EXPECT_EQ(StructLayout::LineOf(*c.Find(f)), 3u) << f;
  }
  for (const char* f : {"wait_barrier.lock", "wait_barrier.head", "fullsync"}) {
    EXPECT_EQ(StructLayout::LineOf(*c.Find(f)), 4u) << f;
  }
  EXPECT_EQ(StructLayout::LineOf(*raid10_layout::kMdRdev.Find("nr_pending")), 3u);
  EXPECT_NE(StructLayout::LineOf(*raid10_layout::kMdRdev.Find("flags")), 3u);  // read-only, a line of its own
  for (const StructLayout* l : {&raid10_layout::kR10conf, &raid10_layout::kMirrors, &raid10_layout::kMdRdev}) {
    EXPECT_GE(l->align, kCacheLineBytes);
    for (const FieldLayout& f : l->fields) {
      if (f.size <= 8) {
        EXPECT_TRUE(StructLayout::OnOneLine(f)) << l->name << " " << f.name;
      }
    }
  }
}

}  // namespace
}  // namespace models
