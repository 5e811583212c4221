#include "models/sync/lock_stat.h"

namespace models {

void LockStat::Reset() { *this = LockStat(); }

}  // namespace models
