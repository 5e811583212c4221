// fio 3.33's report formats for a simulated run: the normal text output,
// JSON and JSON+ (--output-format=json / json+) and terse version 3.
//
// The output matches fio 3.33 byte for byte wherever fio's output is
// deterministic, with these documented exceptions:
//
// - The version: where fio prints "fio-3.33" (the version line, JSON's
//   "fio version", terse's second field) viosim prints kViosimVersion.
// - Wall-clock times: the job blocks' date (ctime), JSON's "time",
//   "timestamp" and "timestamp_ms" are fixed placeholders, the Unix epoch
//   (kPlaceholderTime, 0, 0), so that outputs are reproducible.
// - JSON "eta" is always 0 (fio sometimes prints 2147483647 there).
// - pids are the modeled ones in ThreadStat::pid.
// - fio's "<job>: Laying out IO file (...)" line is never printed: viosim
//   creates no files.
// - "Disk stats" (text) and "disk_util" (JSON) list FioReport::disk_util,
//   the modeled devices; both are left out when it is empty, as fio does
//   when it has no disk statistics.
// - latency target/window/percentile (latency_target= options) are not
//   modeled and print fio's defaults: 0, 0, 100.00%.
// - JSON gets one extra top-level object after fio's keys, "viosim", with
//   FioReport's requested_s, simulated_s, confidence_pct (null when none
//   was computed or it is not informative), confidence_informative, window_iops,
//   stopped_at_steady_state and stack.
#ifndef VIOSIM_ANALYSIS_FIO_OUTPUT_H_
#define VIOSIM_ANALYSIS_FIO_OUTPUT_H_

#include <cstdint>
#include <string>

#include "models/fio/stats.h"

namespace fio {

// What viosim prints where fio prints its version string.
inline constexpr char kViosimVersion[] = "viosim-0.1.0";
// The date printed where fio prints the current time: the Unix epoch in
// ctime() format, without the newline.
inline constexpr char kPlaceholderTime[] = "Thu Jan  1 00:00:00 1970";

// Units appended by Num2Str (fio's enum n2s_unit).
enum class N2sUnit { kNone, kPerSec, kByte, kBit, kBytePerSec, kBitPerSec };

// fio's num2str (lib/num2str.c): `num` (in units of `base`) scaled by 1000
// or, with `pow2`, 1024 until at most `maxlen` digits remain, with as many
// decimals as fit in `maxlen` (the '.' counts) and fio's rounding quirks;
// then the SI (k, M, G, ...) or IEC (Ki, Mi, Gi, ...) prefix and the unit.
// E.g. (101399, 4, 1, false, kNone) -> "101k"; (415331946, 4, 1, true,
// kBytePerSec) -> "396MiB/s"; (16384, 4, 1, true, kByte) -> "16.0KiB".
std::string Num2Str(uint64_t num, int maxlen, int base, bool pow2, N2sUnit unit);

// fio's --output-format=normal: job header lines, version, "Starting N
// processes", one block per reported entity, the group status lines and,
// when the report lists devices, "Disk stats".
std::string FormatNormal(const FioReport& report);

// fio's --output-format=json, or json+ with `plus` (adds the clat
// histogram "bins"), in fio's printer's layout, plus the "viosim" object.
std::string FormatJson(const FioReport& report, bool plus);

// fio's --output-format=terse (terse_version=3): one ';'-separated line per
// reported entity.
std::string FormatTerse(const FioReport& report);

}  // namespace fio

#endif  // VIOSIM_ANALYSIS_FIO_OUTPUT_H_
