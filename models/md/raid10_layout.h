// Where the fields raid10's fast path touches sit, as Linux 6.4 lays out
// its structs on x86_64 with no debug options (no LOCKDEP, no
// DEBUG_SPINLOCK, not PREEMPT_RT; kobject without DEBUG_KOBJECT_RELEASE):
// spinlock_t 4 bytes, seqlock_t 8 (the seqcount's 4 and the lock's 4: the
// seqcount carries its lock pointer only with LOCKDEP or PREEMPT_RT),
// wait_queue_head_t 24 (lock 4, padding 4, list_head 16), atomic_t 4,
// sector_t 8, struct geom 40, struct kobject 64, mempool_t 72.
//
// Sources: drivers/md/raid10.h and drivers/md/md.h of the 6.1-6.4 tree
// (struct r10conf with `seqlock_t resync_lock`, no pending_count, mempool_t
// r10bio_pool inline; struct md_rdev), and raid10.c's setup_conf(): r10conf
// from kzalloc (700-860 bytes: kmalloc-1k, 1024-aligned), conf->mirrors
// from kcalloc(2, 32 bytes) (kmalloc-64: both entries on one line), each
// md_rdev from kzalloc (~400 bytes: kmalloc-512). tests/md/raid10_layout_test
// rebuilds each struct from stand-in types of the same sizes and checks
// every offset here with offsetof.
#ifndef VIOSIM_MODELS_MD_RAID10_LAYOUT_H_
#define VIOSIM_MODELS_MD_RAID10_LAYOUT_H_

#include "models/md/md_layout.h"
#include "models/sync/struct_layout.h"

namespace models::raid10_layout {

// Each member's struct md_rdev (md's, shared with raid1).
using md_layout::kMdRdev;

inline constexpr FieldLayout kR10confFields[] = {
    {"mddev", 0, 8},
    {"mirrors", 8, 8},
    {"mirrors_new", 16, 8},
    {"mirrors_old", 24, 8},
    {"device_lock", 32, 4},
    {"prev", 40, 40},
    {"geo", 80, 40},
    {"copies", 120, 4},
    {"dev_sectors", 128, 8},
    {"reshape_progress", 136, 8},
    {"reshape_safe", 144, 8},
    {"reshape_checkpoint", 152, 8},
    {"offset_diff", 160, 8},
    {"retry_list", 168, 16},
    {"bio_end_io_list", 184, 16},
    {"pending_bio_list", 200, 16},
    {"resync_lock.seqcount", 216, 4},
    {"resync_lock.lock", 220, 4},
    {"nr_pending", 224, 4},
    {"nr_waiting", 228, 4},
    {"nr_queued", 232, 4},
    {"barrier", 236, 4},
    {"array_freeze_pending", 240, 4},
    {"next_resync", 248, 8},
    {"fullsync", 256, 4},
    {"have_replacement", 260, 4},
    {"wait_barrier.lock", 264, 4},
    {"wait_barrier.head", 272, 16},
    {"r10bio_pool", 288, 72},
};
inline constexpr StructLayout kR10conf{"struct r10conf", "drivers/md/raid10.h, Linux 6.1-6.4", 1024,
                                       kR10confFields};

// conf->mirrors: kcalloc(raid_disks, sizeof(struct raid10_info)) with two
// disks, so both 32-byte entries share the one line kmalloc-64 gives.
inline constexpr FieldLayout kMirrorsFields[] = {
    {"mirrors[0].rdev", 0, 8},
    {"mirrors[0].replacement", 8, 8},
    {"mirrors[0].head_position", 16, 8},
    {"mirrors[0].recovery_disabled", 24, 4},
    {"mirrors[1].rdev", 32, 8},
    {"mirrors[1].replacement", 40, 8},
    {"mirrors[1].head_position", 48, 8},
    {"mirrors[1].recovery_disabled", 56, 4},
};
inline constexpr StructLayout kMirrors{"struct raid10_info[2]", "drivers/md/raid10.h, Linux 6.1-6.4", 64,
                                       kMirrorsFields};


}  // namespace models::raid10_layout

#endif  // VIOSIM_MODELS_MD_RAID10_LAYOUT_H_
