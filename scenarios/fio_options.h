// fio 3.33's job options, as viosim sorts them.
//
// Every option fio 3.33 knows falls into one of three classes:
//  - modeled: the parser fills a field of fio::JobOptions from it;
//  - no effect: accepted and echoed back in the reports, but it changes
//    nothing viosim simulates (a path, the I/O log, a buffer fill pattern);
//  - not modeled: fio would act on it and viosim cannot, so a job file that
//    uses it is rejected ("option 'x' is understood by fio but not modeled by
//    viosim") rather than silently simulated as something else.
// A name in none of the three is one fio itself rejects ("unknown option").
//
// The names come from fio 3.33's options.c option table, the engine option
// tables in engines/*.c and the tiobench profile; docs/fio-compat.md gives
// the reason for each class.
#ifndef VIOSIM_SCENARIOS_FIO_OPTIONS_H_
#define VIOSIM_SCENARIOS_FIO_OPTIONS_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace fio {

enum class Support { kModeled, kNoEffect, kNotModeled };

// How fio reads the option's value (parse.c, FIO_OPT_*). The parser checks
// the value of every accepted option with these rules, so that a value fio
// would refuse is refused here too.
enum class ValueKind {
  kText,        // FIO_OPT_STR_STORE: any text; a value is required
  kTextOrBare,  // FIO_OPT_STR with a callback and no value list (write_bw_log)
  kChoice,      // FIO_OPT_STR with a value list (`choices`)
  kBool,        // FIO_OPT_BOOL: 0 or 1; a value is required
  kFlag,        // FIO_OPT_STR_SET: bare (= 1) or an integer
  kInt,         // FIO_OPT_INT/ULL/STR_VAL: integer with size suffixes
  kTime,        // FIO_OPT_STR_VAL_TIME
  kRange,       // FIO_OPT_RANGE (bsrange)
  kUnchecked,   // not-modeled options: the value is never looked at
};

struct OptionInfo {
  const char* name;   // fio's canonical name, the one the reports show
  const char* alias;  // the other accepted name, or ""
  Support support;
  ValueKind kind;
  // For an engine option (parsed against the section's ioengine): the
  // engines that own it, separated by spaces. "" for a general option.
  const char* engines;
  // For kChoice: the accepted values, separated by '|'.
  const char* choices;
};

// The option called `name` (its canonical name or its alias; case matters,
// as in fio), or nullptr if fio 3.33 has no such option.
const OptionInfo* FindOption(absl::string_view name);

// Every option, modeled and no-effect ones first, for listings and tests.
const std::vector<const OptionInfo*>& AllOptions();

// Whether `engine` (an ioengine= name, without any ":suffix") is one of the
// engines an engine option belongs to.
bool EngineOwns(const OptionInfo& option, absl::string_view engine);

enum class EngineSupport { kModeled, kNotModeled, kUnknown };

// What viosim does with ioengine=`engine`: the five modeled engines, the
// other engines fio 3.33 ships (null, net, falloc, ...), or a name fio does
// not know.
EngineSupport FindEngine(absl::string_view engine);

// The modeled engines, for messages: "libaio, io_uring, pvsync2, psync, sync".
extern const char kModeledEngineList[];

}  // namespace fio

#endif  // VIOSIM_SCENARIOS_FIO_OPTIONS_H_
