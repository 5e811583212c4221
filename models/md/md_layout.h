// Where the fields of md's own structs that both personalities' fast paths
// touch sit, as Linux 6.1-6.4 lays them out on x86_64 with no debug options
// (see raid10_layout.h for the conventions): struct md_rdev, one per
// member, from kzalloc (~400 bytes: kmalloc-512). tests/md/raid10_layout_test
// rebuilds it from stand-in types of the same sizes and checks every offset
// with offsetof.
#ifndef VIOSIM_MODELS_MD_MD_LAYOUT_H_
#define VIOSIM_MODELS_MD_MD_LAYOUT_H_

#include "models/sync/struct_layout.h"

namespace models::md_layout {

inline constexpr FieldLayout kMdRdevFields[] = {
    {"same_set", 0, 16},
    {"sectors", 16, 8},
    {"mddev", 24, 8},
    {"last_events", 32, 4},
    {"meta_bdev", 40, 8},
    {"bdev", 48, 8},
    {"sb_page", 56, 8},
    {"bb_page", 64, 8},
    {"sb_loaded", 72, 4},
    {"sb_events", 80, 8},
    {"data_offset", 88, 8},
    {"new_data_offset", 96, 8},
    {"sb_start", 104, 8},
    {"sb_size", 112, 4},
    {"preferred_minor", 116, 4},
    {"kobj", 120, 64},
    {"flags", 184, 8},
    {"blocked_wait", 192, 24},
    {"desc_nr", 216, 4},
    {"raid_disk", 220, 4},
    {"new_raid_disk", 224, 4},
    {"saved_raid_disk", 228, 4},
    {"recovery_offset", 232, 8},
    {"nr_pending", 240, 4},
    {"read_errors", 244, 4},
    {"last_read_error", 248, 8},
    {"corrected_errors", 256, 4},
};
inline constexpr StructLayout kMdRdev{"struct md_rdev", "drivers/md/md.h, Linux 6.1-6.4", 512, kMdRdevFields};

}  // namespace models::md_layout

#endif  // VIOSIM_MODELS_MD_MD_LAYOUT_H_
