// Where the fields of raid1's fast path sit: struct r1conf and struct
// raid1_info of Linux 6.4's drivers/md/raid1.h on x86_64 without debug
// options (spinlock_t 4 bytes, wait_queue_head_t 24: lock, 4 bytes of
// padding, list_head; struct bio_list two pointers). r1conf comes from
// kzalloc (kmalloc-1k); conf->mirrors is 128 bytes (kmalloc-128: mirrors
// 0-1 on one line, 2-3, the replacements' half, on the next).
// tests/md/raid1_layout_test.cc pins each offset to a mirror of the
// struct. docs/raid1.md gives the sources.
#ifndef VIOSIM_MODELS_MD_RAID1_LAYOUT_H_
#define VIOSIM_MODELS_MD_RAID1_LAYOUT_H_

#include "models/md/md_layout.h"
#include "models/sync/struct_layout.h"

namespace models::raid1_layout {

inline constexpr FieldLayout kR1confFields[] = {
    {"mddev", 0, 8},
    {"mirrors", 8, 8},
    {"raid_disks", 16, 4},
    {"device_lock", 20, 4},
    {"retry_list", 24, 16},
    {"bio_end_io_list", 40, 16},
    {"pending_bio_list", 56, 16},
    {"wait_barrier.lock", 72, 4},
    {"wait_barrier.head", 80, 16},
    {"resync_lock", 96, 4},
    {"nr_sync_pending", 100, 4},
    {"nr_pending", 104, 8},
    {"nr_waiting", 112, 8},
    {"nr_queued", 120, 8},
    {"barrier", 128, 8},
    {"array_frozen", 136, 4},
    {"fullsync", 140, 4},
    {"recovery_disabled", 144, 4},
};
inline constexpr StructLayout kR1conf{"struct r1conf", "drivers/md/raid1.h, Linux 6.4", 1024, kR1confFields};

inline constexpr FieldLayout kRaid1InfoFields[] = {
    {"rdev", 0, 8},
    {"head_position", 8, 8},
    {"next_seq_sect", 16, 8},
    {"seq_start", 24, 8},
};
inline constexpr StructLayout kRaid1Info{"struct raid1_info", "drivers/md/raid1.h, Linux 6.4", 128, kRaid1InfoFields};
inline constexpr int kRaid1InfoSize = 32;

// conf->mirrors: kzalloc(raid_disks * 2 * sizeof(struct raid1_info)) with
// two disks, the second half for replacements: 128 bytes from kmalloc-128.
inline constexpr FieldLayout kMirrorsFields[] = {
    {"mirrors[0].rdev", 0, 8},
    {"mirrors[0].head_position", 8, 8},
    {"mirrors[0].next_seq_sect", 16, 8},
    {"mirrors[0].seq_start", 24, 8},
    {"mirrors[1].rdev", 32, 8},
    {"mirrors[1].head_position", 40, 8},
    {"mirrors[1].next_seq_sect", 48, 8},
    {"mirrors[1].seq_start", 56, 8},
    {"mirrors[2].rdev", 64, 8},
    {"mirrors[2].head_position", 72, 8},
    {"mirrors[2].next_seq_sect", 80, 8},
    {"mirrors[2].seq_start", 88, 8},
    {"mirrors[3].rdev", 96, 8},
    {"mirrors[3].head_position", 104, 8},
    {"mirrors[3].next_seq_sect", 112, 8},
    {"mirrors[3].seq_start", 120, 8},
};
inline constexpr StructLayout kMirrors{"struct raid1_info[4]", "drivers/md/raid1.h, Linux 6.4", 128, kMirrorsFields};

// Each member's struct md_rdev (md's, shared with raid10).
using md_layout::kMdRdev;

// What the model's line objects stand for.
static_assert(kR1conf.LineOfField("wait_barrier.lock") == 1 && kR1conf.LineOfField("wait_barrier.head") == 1 &&
              kR1conf.LineOfField("nr_pending") == 1 && kR1conf.LineOfField("resync_lock") == 1);
static_assert(kR1conf.LineOfField("barrier") == 2 && kR1conf.LineOfField("array_frozen") == 2);
static_assert(2 * kRaid1InfoSize == static_cast<int>(kCacheLineBytes));  // mirrors[0..1] on one line, [2..3] on the next
// Each entry of the array is a struct raid1_info.
static_assert(kMirrors.OffsetOf("mirrors[3].seq_start") == 3 * kRaid1InfoSize + kRaid1Info.OffsetOf("seq_start") &&
              kMirrors.OffsetOf("mirrors[2].head_position") ==
                  2 * kRaid1InfoSize + kRaid1Info.OffsetOf("head_position"));
static_assert(kMirrors.LineOfField("mirrors[1].seq_start") == 0 && kMirrors.LineOfField("mirrors[2].rdev") == 1);

}  // namespace models::raid1_layout

#endif  // VIOSIM_MODELS_MD_RAID1_LAYOUT_H_
