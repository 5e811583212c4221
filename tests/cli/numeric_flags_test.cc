// Every numeric flag of every subcommand refuses what is not a number it
// can take: NaN and infinities (which CLI11's range checks let through),
// negatives, values past 64 bits, fractions where a count or seed is asked.
// Each must exit 2 before anything runs, with nothing on stdout and an error
// naming the flag and the value. The flags are read from `--help`, so a new
// numeric flag is covered without touching this test.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/cli/run_viosim.h"

namespace {

// What each subcommand needs beside the flag under test, so that the flag is
// the only thing wrong.
struct Command {
  std::string name;
  std::string args;
};

const std::vector<Command>& Commands() {
  static const auto* c = new std::vector<Command>{
      {"run", "scenarios/lockbench.textproto"},
      {"list", "scenarios/lockbench.textproto"},
      {"sweep",
       "scenarios/virtio_blk_kick_lock.textproto --over run.seed=1,2 "
       "--refit platform.kvm.mmio_exit_user.value --cell before/iops --range 1us,80us"},
      {"calibrate",
       "scenarios/virtio_blk_kick_lock.textproto --fit platform.kvm.mmio_exit_user.value --cell before/iops "
       "--range 1us,80us"},
      {"reproduce", "scenarios/lockbench.textproto"},
      {"gate", "scenarios/lockbench.textproto"},
      {"explain", "scenarios/lockbench.textproto"},
      {"fio", "scenarios/fio/kick-lock.fio"},
  };
  return *c;
}

// The flags whose value `--help` types as a number: "--jobs N:INT in [..]",
// "--band-passes INT=2", "--tolerance PCT:FLOAT ...", "--seed N", "--bands K".
std::vector<std::string> NumericFlags(const std::string& help) {
  std::vector<std::string> flags;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(line, "-")) continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() < 2) continue;
    absl::string_view name = words[0];
    if (const size_t comma = name.rfind(','); comma != absl::string_view::npos) name = name.substr(comma + 1);
    const absl::string_view type = words[1];
    for (absl::string_view t : {"N", "K", "S", "PCT", "INT", "UINT", "FLOAT"}) {
      if (type == t || absl::StartsWith(type, absl::StrCat(t, ":")) || absl::StartsWith(type, absl::StrCat(t, "="))) {
        flags.emplace_back(name);
        break;
      }
    }
  }
  return flags;
}

TEST(NumericFlagsTest, EveryNumericFlagRefusesWhatItCannotTake) {
  // Not one of these is a value any numeric flag of viosim takes.
  const std::vector<std::string> hostile = {"nan", "-nan", "inf", "-inf", "1e999", "-1", "99999999999999999999999"};
  int checked = 0;
  for (const Command& c : Commands()) {
    const clitest::Result help = clitest::Viosim(c.name + " --help");
    ASSERT_EQ(help.code, 0) << c.name;
    const std::vector<std::string> flags = NumericFlags(help.out);
    for (const std::string& flag : flags) {
      // The band flags apply with --bands only; give it unless it is the flag.
      std::string base = c.args;
      if (c.name == "reproduce" && flag != "--bands") absl::StrAppend(&base, " --bands 2");
      for (const std::string& v : hostile) {
        const clitest::Result r = clitest::Viosim(absl::StrCat(c.name, " ", base, " ", flag, "=", v));
        EXPECT_EQ(r.code, 2) << "viosim " << c.name << " " << flag << "=" << v << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << "viosim " << c.name << " " << flag << "=" << v;
        EXPECT_TRUE(absl::StrContains(r.err, flag) && absl::StrContains(r.err, v))
            << "viosim " << c.name << " " << flag << "=" << v << ": the error should name both\n"
            << r.err;
        ++checked;
      }
    }
  }
  // run/list/gate/explain/fio --seed and --jobs, reproduce's bands, the
  // fit flags of sweep and calibrate, explain --step, fio --target-ci.
  EXPECT_GE(checked, 7 * 20);
}

// A count or a seed given as a fraction is refused too.
TEST(NumericFlagsTest, CountsAndSeedsRefuseFractions) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run scenarios/lockbench.textproto", "--seed"},
      {"run scenarios/lockbench.textproto", "--jobs"},
      {"reproduce scenarios/lockbench.textproto", "--bands"},
      {"reproduce scenarios/lockbench.textproto --bands 2", "--band-seed"},
      {"reproduce scenarios/lockbench.textproto --bands 2", "--band-passes"},
  };
  for (const auto& [base, flag] : cases) {
    const clitest::Result r = clitest::Viosim(absl::StrCat(base, " ", flag, "=2.5"));
    EXPECT_EQ(r.code, 2) << base << " " << flag << "=2.5\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, flag)) << r.err;
  }
}

}  // namespace
