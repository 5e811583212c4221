// The fio job parser against fio 3.33's rules: sections, comments,
// includes, value syntax (with its traps), aliases, option classes and the
// command-line form. Expected values come from fio 3.33's source
// (options.c, parse.c, init.c) and from what fio 3.33 itself accepts and
// prints for the same input (docs/fio-compat.md).
#include "scenarios/fio_parser.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/fio/job.h"
#include "scenarios/fio_options.h"

namespace fio {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr int64_t kSec = 1000000;  // microseconds

JobFile Parse(const std::string& text) {
  absl::StatusOr<JobFile> r = ParseJobText("job.fio", text, "");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : JobFile{};
}

// The one job of `text`.
JobOptions Job(const std::string& text) {
  JobFile f = Parse(text);
  EXPECT_EQ(f.jobs.size(), 1u) << text;
  return f.jobs.empty() ? JobOptions{} : f.jobs[0];
}

// The error message for `text`, which must be rejected.
std::string Error(const std::string& text) {
  absl::StatusOr<JobFile> r = ParseJobText("job.fio", text, "");
  EXPECT_FALSE(r.ok()) << "accepted:\n" << text;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

// The first line of the error message.
std::string FirstError(const std::string& text) {
  std::string e = Error(text);
  return e.substr(0, e.find('\n'));
}

std::vector<std::string> Names(const std::vector<WrittenOption>& opts) {
  std::vector<std::string> out;
  for (const WrittenOption& o : opts) out.push_back(o.name);
  return out;
}

uint64_t Bs(const std::string& value, int dir) {
  return Job("[j]\nbs=" + value + "\n").bs_min[dir];
}

int64_t RuntimeUs(const std::string& value) {
  return Job("[j]\nruntime=" + value + "\n").runtime_us;
}

// --- sections --------------------------------------------------------------

TEST(SectionsTest, GlobalAppliesOnlyToTheJobsAfterIt) {
  JobFile f = Parse("[early]\n[global]\nbs=8k\niodepth=4\n[late]\n");
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(f.jobs[0].name, "early");
  EXPECT_EQ(f.jobs[0].bs_min[kRead], 4096u);
  EXPECT_EQ(f.jobs[0].iodepth, 1);
  EXPECT_EQ(f.jobs[1].name, "late");
  EXPECT_EQ(f.jobs[1].bs_min[kRead], 8192u);
  EXPECT_EQ(f.jobs[1].iodepth, 4);
}

TEST(SectionsTest, AJobCopiesTheGlobalStateWhenItsSectionStarts) {
  JobFile f = Parse(
      "[global]\niodepth=2\n[a]\niodepth=7\n[b]\n[global2]\niodepth=9\nrw=write\n[c]\n");
  ASSERT_EQ(f.jobs.size(), 3u);
  EXPECT_EQ(f.jobs[0].iodepth, 7);  // its own setting
  EXPECT_EQ(f.jobs[1].iodepth, 2);  // a's setting does not leak into b
  EXPECT_EQ(f.jobs[2].iodepth, 9);  // the second global section adds to the first
  EXPECT_EQ(f.jobs[2].rw, Pattern::kWrite);
  EXPECT_EQ(f.jobs[1].rw, Pattern::kRead);
}

TEST(SectionsTest, AnySectionNameStartingWithGlobalIsGlobal) {
  JobFile f = Parse("[globalfoo]\niodepth=8\n[j]\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_EQ(f.jobs[0].iodepth, 8);
  EXPECT_THAT(Names(f.global_options), ElementsAre("iodepth"));
  // "Global" is not "global": that one is a job.
  EXPECT_EQ(Parse("[Global]\n").jobs.size(), 1u);
}

TEST(SectionsTest, AnEmptySectionIsAJobWithDefaults) {
  JobOptions j = Job("[empty]\n");
  EXPECT_EQ(j.name, "empty");
  EXPECT_EQ(j.line, 1);
  EXPECT_EQ(j.rw, Pattern::kRead);
  EXPECT_EQ(j.ioengine, Engine::kPsync);
  EXPECT_EQ(j.ioengine_name, "psync");
  EXPECT_EQ(j.iodepth, 1);
  EXPECT_EQ(j.bs_max[kWrite], 4096u);
  EXPECT_EQ(j.rwmixread, 50);
  EXPECT_TRUE(j.randrepeat);
  EXPECT_THAT(j.options, IsEmpty());
}

TEST(SectionsTest, OptionOutsideASectionIsAnError) {
  EXPECT_EQ(FirstError("; header comment\nrw=read\n[j]\n"),
            "job.fio:2: option 'rw' outside of [] job section");
}

TEST(SectionsTest, NoJobSectionsIsAnError) {
  EXPECT_EQ(Error("[global]\nbs=8k\n"), "job.fio: no jobs defined");
  EXPECT_EQ(Error("; nothing\n\n"), "job.fio: no jobs defined");
}

TEST(SectionsTest, NameInGlobalDoesNotRenameJobsButNameInAJobDoes) {
  JobFile f = Parse("[global]\nname=from_global\n[section_a]\n[b]\nname=renamed\n");
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(f.jobs[0].name, "section_a");
  EXPECT_EQ(f.jobs[1].name, "renamed");
  EXPECT_THAT(Names(f.global_options), ElementsAre("name"));
}

// --- lines -----------------------------------------------------------------

TEST(LinesTest, CommentsStartAnywhereInALine) {
  JobOptions j = Job(
      "; a comment\n# another\n[j] ; after the header\nbs=8k ; inline\n"
      "iodepth=4# no space\ndescription=before;after\n  # indented comment\n");
  EXPECT_EQ(j.bs_min[kRead], 8192u);
  EXPECT_EQ(j.iodepth, 4);
  EXPECT_EQ(j.description, "before");
  ASSERT_EQ(j.options.size(), 3u);
  EXPECT_EQ(j.options[0].value, "8k");
  EXPECT_EQ(j.options[1].value, "4");
}

TEST(LinesTest, WhitespaceAroundKeyAndEqualsIsIgnored) {
  JobOptions j = Job("[j]\n   bs   =   8k   \n\tiodepth\t=\t3\n");
  EXPECT_EQ(j.bs_min[kRead], 8192u);
  EXPECT_EQ(j.iodepth, 3);
  EXPECT_EQ(j.options[0].name, "bs");
  EXPECT_EQ(j.options[0].value, "8k");
}

TEST(LinesTest, CrlfLineEndsAreFine) {
  JobFile f = Parse("[global]\r\nbs=16k\r\n\r\n[j]\r\nrw=randwrite\r\ntime_based\r\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_EQ(f.jobs[0].name, "j");
  EXPECT_EQ(f.jobs[0].bs_min[kWrite], 16384u);
  EXPECT_EQ(f.jobs[0].rw, Pattern::kRandWrite);
  EXPECT_EQ(f.jobs[0].options[1].name, "time_based");
  EXPECT_TRUE(f.jobs[0].options[1].bare);
}

TEST(LinesTest, TheLastOfARepeatedOptionWins) {
  JobOptions j = Job("[j]\niodepth=4\nbs=8k\niodepth=32\n");
  EXPECT_EQ(j.iodepth, 32);
  // Both are listed, as fio's option dump lists both.
  EXPECT_THAT(Names(j.options), ElementsAre("iodepth", "bs", "iodepth"));
}

// --- include ----------------------------------------------------------------

TEST(IncludeTest, ReadsFilesRelativeToTheIncludingFileAndNests) {
  absl::StatusOr<JobFile> f = ParseJobFile("tests/fio/testdata/include_main.fio");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->jobs.size(), 1u);
  const JobOptions& j = f->jobs[0];
  EXPECT_EQ(j.ioengine, Engine::kLibaio);  // from include_common.fio, in [global]
  EXPECT_EQ(j.iodepth, 16);
  EXPECT_EQ(j.bs_min[kRead], 8192u);  // include_job.fio
  EXPECT_EQ(j.numjobs, 3);            // include_deeper.fio, two levels down
  EXPECT_EQ(j.rw, Pattern::kRandRead);
  EXPECT_THAT(Names(j.options), ElementsAre("bs", "numjobs", "rw"));
}

TEST(IncludeTest, LooksInTheWorkingDirectoryFirst) {
  absl::StatusOr<JobFile> f =
      ParseJobText("text.fio", "[j]\ninclude tests/fio/testdata/include_job.fio\n", "");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->jobs[0].bs_min[kRead], 8192u);
  EXPECT_EQ(f->jobs[0].numjobs, 3);
}

TEST(IncludeTest, ASectionInAnIncludedFileIsAnError) {
  absl::StatusOr<JobFile> f = ParseJobFile("tests/fio/testdata/include_bad_section.fio");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              StartsWith("tests/fio/testdata/include_has_section.fio:2: a section header in "
                         "an included file"));
}

TEST(IncludeTest, AMissingFileIsAnErrorAtTheIncludeLine) {
  absl::StatusOr<JobFile> f = ParseJobFile("tests/fio/testdata/include_missing.fio");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              StartsWith("tests/fio/testdata/include_missing.fio:2: include "
                         "'include_nowhere.fio': cannot read included file 'include_nowhere.fio': "
                         "No such file or directory (also tried 'tests/fio/testdata/include_nowhere.fio')"));
}

// Depth alone does not bound the work of includes: a file may include the
// next one several times. Every shape stops at its first bound with one
// error: a loop at the depth, a wide tree at the count, big files at the
// bytes; a file included a hundred times is fine.
TEST(IncludeTest, RepeatedIncludesAreBoundedInDepthCountAndBytes) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(absl::StrCat(dir, "/", name)) << text;
    return absl::StrCat(dir, "/", name);
  };
  struct Case {
    std::string main;  // the job file
    std::string says;  // empty: parsed
  };
  std::vector<Case> cases;
  cases.push_back({write("loop.fio", "[j]\ninclude loop_inc.fio\n"), "includes nested more than 16 deep"});
  write("loop_inc.fio", "rw=read\ninclude loop_inc.fio\ninclude loop_inc.fio\ninclude loop_inc.fio\n");
  // tree0 includes tree1 three times, ..., tree14 includes tree15, which sets
  // bs: 3^15 leaves.
  for (int i = 0; i < 15; ++i) {
    const std::string next = absl::StrCat("include tree", i + 1, ".fio\n");
    write(absl::StrCat("tree", i, ".fio"), absl::StrCat(next, next, next));
  }
  write("tree15.fio", "bs=8k\n");
  cases.push_back({write("tree.fio", "[j]\ninclude tree0.fio\n"), "more than 4096 includes in all"});
  write("big_inc.fio", absl::StrCat("# ", std::string(1 << 20, 'x'), "\nbs=8k\n"));
  std::string big = "[j]\n";
  for (int i = 0; i < 17; ++i) absl::StrAppend(&big, "include big_inc.fio\n");
  cases.push_back({write("big.fio", big), "bytes in all"});
  write("small_inc.fio", "bs=8k\n");
  std::string small = "[j]\n";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&small, "include small_inc.fio\n");
  cases.push_back({write("small.fio", small), ""});
  for (const Case& c : cases) {
    absl::StatusOr<JobFile> f = ParseJobFile(c.main);
    if (c.says.empty()) {
      ASSERT_TRUE(f.ok()) << f.status();
      EXPECT_EQ(f->jobs[0].bs_min[kRead], 8192u);
      continue;
    }
    ASSERT_FALSE(f.ok()) << c.main;
    EXPECT_THAT(std::string(f.status().message()), HasSubstr(c.says)) << c.main;
    // One error: reading stopped at the bound.
    EXPECT_EQ(std::string(f.status().message()).find(c.says), std::string(f.status().message()).rfind(c.says))
        << f.status();
  }
}

TEST(IncludeTest, OutsideASectionIsAnError) {
  EXPECT_EQ(FirstError("include x.fio\n[j]\n"), "job.fio:1: include outside of [] job section");
}

TEST(ParseJobFileTest, AnUnreadableFileIsNotFoundNamingThePath) {
  absl::StatusOr<JobFile> f = ParseJobFile("tests/fio/testdata/no_such_file.fio");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("tests/fio/testdata/no_such_file.fio"));
}

// --- sizes ------------------------------------------------------------------

TEST(SizeSyntaxTest, KAndKbArePowersOf1024AndKibOf1000) {
  EXPECT_EQ(Bs("1k", kRead), 1024u);
  EXPECT_EQ(Bs("1K", kRead), 1024u);
  EXPECT_EQ(Bs("1kb", kRead), 1024u);
  EXPECT_EQ(Bs("1KB", kRead), 1024u);
  EXPECT_EQ(Bs("1KiB", kRead), 1000u);
  EXPECT_EQ(Bs("1kib", kRead), 1000u);
  EXPECT_EQ(Bs("1m", kRead), 1048576u);
  EXPECT_EQ(Bs("1MiB", kRead), 1000000u);
  EXPECT_EQ(Job("[j]\nsize=1g\n").size, uint64_t{1} << 30);
  EXPECT_EQ(Job("[j]\nsize=2GiB\n").size, 2000000000u);
  EXPECT_EQ(Job("[j]\nsize=1t\n").size, uint64_t{1} << 40);
}

TEST(SizeSyntaxTest, NoFractionsHexAndTheBSuffix) {
  EXPECT_EQ(Bs("16.0k", kRead), 16u);  // strtoll stops at '.'
  EXPECT_EQ(Bs("0x1000", kRead), 4096u);
  EXPECT_EQ(Bs("4096b", kRead), 4096u);
  EXPECT_EQ(Bs("512B", kRead), 512u);
}

TEST(SizeSyntaxTest, APercentageOfTheFileIsNotModeled) {
  EXPECT_EQ(FirstError("[j]\nsize=50%\n"),
            "job.fio:2: option 'size': a percentage ('50%') is understood by fio but not "
            "modeled by viosim");
  EXPECT_THAT(FirstError("[j]\nsize=10z\n"), HasSubstr("a number of zones ('10z')"));
}

TEST(SizeSyntaxTest, EnvironmentVariablesAreExpandedAndUnsetOnesFail) {
  setenv("VIOSIM_FIO_TEST_BS", "8k", 1);
  JobOptions j = Job("[j]\nbs=${VIOSIM_FIO_TEST_BS}\n");
  EXPECT_EQ(j.bs_min[kRead], 8192u);
  EXPECT_EQ(j.options[0].value, "${VIOSIM_FIO_TEST_BS}");  // recorded as written
  unsetenv("VIOSIM_FIO_TEST_UNSET");
  EXPECT_EQ(FirstError("[j]\nbs=${VIOSIM_FIO_TEST_UNSET}\n"),
            "job.fio:2: option 'bs': invalid value '' (from '${VIOSIM_FIO_TEST_UNSET}')");
}

TEST(SizeSyntaxTest, HostKeywordsAreRefusedWithAReason) {
  EXPECT_THAT(FirstError("[j]\nnumjobs=$ncpus\n"),
              StartsWith("job.fio:2: option 'numjobs': '$ncpus' stands for a property of the "
                         "host"));
  EXPECT_THAT(FirstError("[j]\nbs=$pagesize\n"), HasSubstr("'$pagesize'"));
}

// --- bs and bsrange -----------------------------------------------------------

TEST(BlockSizeTest, OneValueAppliesToAllDirections) {
  JobOptions j = Job("[j]\nbs=8k\n");
  for (int d = 0; d < kDdirs; ++d) {
    EXPECT_EQ(j.bs_min[d], 8192u);
    EXPECT_EQ(j.bs_max[d], 8192u);
  }
}

TEST(BlockSizeTest, CommaSeparatesReadWriteTrimAndTheLastFillsTheRest) {
  JobOptions j = Job("[j]\nbs=8k,32k\n");
  EXPECT_EQ(j.bs_min[kRead], 8192u);
  EXPECT_EQ(j.bs_min[kWrite], 32768u);
  EXPECT_EQ(j.bs_min[kTrim], 32768u);
  JobOptions k = Job("[j]\nbs=4k,8k,16k\n");
  EXPECT_EQ(k.bs_min[kTrim], 16384u);
}

TEST(BlockSizeTest, DashIsASeparatorNotARange) {
  EXPECT_EQ(Bs("4k-8k", kRead), 4096u);
  EXPECT_EQ(Bs("4k-8k", kWrite), 8192u);
  EXPECT_EQ(Bs("4k-8k", kTrim), 8192u);
  EXPECT_EQ(Bs("4k:8k", kWrite), 8192u);
  JobOptions j = Job("[j]\nbs=4k-8k\n");
  EXPECT_EQ(j.bs_max[kRead], 4096u);  // min == max: not a range
}

TEST(BlockSizeTest, TrailingCommaKeepsTheDefaultForTrim) {
  EXPECT_EQ(Bs("4k,8k,", kRead), 4096u);
  EXPECT_EQ(Bs("4k,8k,", kWrite), 8192u);
  EXPECT_EQ(Bs("4k,8k,", kTrim), 4096u);
  EXPECT_EQ(Bs("16k,32k,", kTrim), 4096u);
}

TEST(BlockSizeTest, LeadingCommaKeepsTheReadDefault) {
  EXPECT_EQ(Bs(",8k", kRead), 4096u);
  EXPECT_EQ(Bs(",8k", kWrite), 8192u);
  EXPECT_EQ(Bs(",8k", kTrim), 8192u);
}

TEST(BlockSizeTest, ZeroAndGarbageAreErrors) {
  EXPECT_EQ(FirstError("[j]\nbs=0\n"), "job.fio:2: option 'bs': 0 is below the minimum of 1");
  EXPECT_EQ(FirstError("[j]\nbs=big\n"), "job.fio:2: option 'bs': invalid value 'big'");
}

TEST(BlockSizeTest, RangeIsSwappedWhenMinIsAboveMax) {
  JobOptions j = Job("[j]\nbsrange=8k-4k\n");
  for (int d = 0; d < kDdirs; ++d) {
    EXPECT_EQ(j.bs_min[d], 4096u);
    EXPECT_EQ(j.bs_max[d], 8192u);
  }
}

TEST(BlockSizeTest, RangesPerDirection) {
  JobOptions j = Job("[j]\nbsrange=1k-4k,8k-16k\n");
  EXPECT_EQ(j.bs_min[kRead], 1024u);
  EXPECT_EQ(j.bs_max[kRead], 4096u);
  EXPECT_EQ(j.bs_min[kWrite], 8192u);
  EXPECT_EQ(j.bs_max[kWrite], 16384u);
  EXPECT_EQ(j.bs_min[kTrim], 8192u);
  EXPECT_EQ(j.bs_max[kTrim], 16384u);
  // ':' also separates min and max; '/' does not split (512-64k/1k-2k).
  JobOptions k = Job("[j]\nbsrange=2k:6k\n");
  EXPECT_EQ(k.bs_max[kWrite], 6144u);
  JobOptions l = Job("[j]\nblocksize_range=512-64k/1k-2k\n");
  EXPECT_EQ(l.bs_min[kWrite], 512u);
  EXPECT_EQ(l.bs_max[kWrite], 65536u);
}

TEST(BlockSizeTest, ASingleValueIsNotARange) {
  EXPECT_THAT(FirstError("[j]\nbsrange=4k\n"),
              StartsWith("job.fio:2: option 'bsrange': '4k' is not a range"));
}

TEST(BlockSizeTest, RangeWinsOverBs) {
  JobOptions j = Job("[global]\nbsrange=4k-16k\n[j]\nbs=8k\n");
  EXPECT_EQ(j.bs_min[kRead], 4096u);
  EXPECT_EQ(j.bs_max[kRead], 16384u);
}

// --- times ------------------------------------------------------------------

TEST(TimeSyntaxTest, PlainNumbersAreSecondsAndUnitsAreCaseInsensitive) {
  EXPECT_EQ(RuntimeUs("10"), 10 * kSec);
  EXPECT_EQ(RuntimeUs("1m"), 60 * kSec);  // minutes, not milliseconds
  EXPECT_EQ(RuntimeUs("2h"), 7200 * kSec);
  EXPECT_EQ(RuntimeUs("1d"), 86400 * kSec);
  EXPECT_EQ(RuntimeUs("1500ms"), 1500000);
  EXPECT_EQ(RuntimeUs("250us"), 250);
  EXPECT_EQ(RuntimeUs("3S"), 3 * kSec);
  EXPECT_EQ(RuntimeUs("7MSEC"), 7000);
  EXPECT_EQ(Job("[j]\nramp_time=500ms\n").ramp_time_us, 500000);
}

TEST(TimeSyntaxTest, NoFractions) {
  EXPECT_EQ(RuntimeUs("1.5"), 1 * kSec);
  EXPECT_EQ(RuntimeUs("0.5s"), 0);  // 0: unlimited
  // An unknown unit multiplies by one microsecond, as in fio.
  EXPECT_EQ(RuntimeUs("10sec"), 10);
}

TEST(TimeSyntaxTest, TimeoutIsAnAliasOfRuntime) {
  JobOptions j = Job("[j]\ntimeout=1500ms\n");
  EXPECT_EQ(j.runtime_us, 1500000);
  ASSERT_EQ(j.options.size(), 1u);
  EXPECT_EQ(j.options[0].name, "runtime");
  EXPECT_EQ(j.options[0].value, "1500ms");
  EXPECT_EQ(FirstError("[j]\nruntime=abc\n"),
            "job.fio:2: option 'runtime': invalid value 'abc' (a time such as 10, 500ms, 2m)");
}

// --- rw -----------------------------------------------------------------------

TEST(RwTest, PatternsAndReadwriteAlias) {
  EXPECT_EQ(Job("[j]\nrw=randrw\n").rw, Pattern::kRandRw);
  EXPECT_EQ(Job("[j]\nrw=readwrite\n").rw, Pattern::kRw);
  JobOptions j = Job("[j]\nreadwrite=randwrite\n");
  EXPECT_EQ(j.rw, Pattern::kRandWrite);
  EXPECT_EQ(j.options[0].name, "rw");
}

TEST(RwTest, SequentialSuffixIsAnOffsetStepThatMayBeNegative) {
  JobOptions j = Job("[j]\nrw=read:-8k\n");
  EXPECT_EQ(j.rw, Pattern::kRead);
  EXPECT_EQ(j.rw_seq_add, -8192);
  EXPECT_EQ(j.rw_seq_nr, 1);
  EXPECT_EQ(j.options[0].value, "read:-8k");
  EXPECT_EQ(Job("[j]\nrw=write:64k\n").rw_seq_add, 65536);
}

TEST(RwTest, RandomSuffixIsIosPerRandomOffset) {
  JobOptions j = Job("[j]\nrw=randread:8\n");
  EXPECT_EQ(j.rw, Pattern::kRandRead);
  EXPECT_EQ(j.rw_seq_nr, 8);
  EXPECT_EQ(j.rw_seq_add, 0);
  // A later rw= resets the suffix.
  EXPECT_EQ(Job("[global]\nrw=randread:8\n[j]\nrw=randwrite\n").rw_seq_nr, 1);
}

TEST(RwTest, MatchingIsExact) {
  EXPECT_THAT(FirstError("[j]\nrw=randomread\n"),
              StartsWith("job.fio:2: option 'rw': invalid value 'randomread' (fio's values:"));
}

TEST(RwTest, TrimIsKnownButNotModeledUnlessAJobOverridesIt) {
  EXPECT_EQ(FirstError("[j]\nrw=randtrim\n"),
            "job.fio:2: rw=randtrim is understood by fio but not modeled by viosim (trim is "
            "not modeled)");
  EXPECT_EQ(Job("[global]\nrw=trim\n[j]\nrw=write\n").rw, Pattern::kWrite);
}

TEST(RwmixTest, ReadAndWriteAreCoupledAndTheLaterWins) {
  EXPECT_EQ(Job("[j]\nrwmixwrite=30\n").rwmixread, 70);
  EXPECT_EQ(Job("[j]\nrwmixread=80\nrwmixwrite=40\n").rwmixread, 60);
  EXPECT_EQ(Job("[j]\nrwmixwrite=40\nrwmixread=80\n").rwmixread, 80);
  JobOptions j = Job("[j]\nrwmixwrite=25\n");
  EXPECT_EQ(j.options[0].name, "rwmixwrite");  // not rewritten as rwmixread
  EXPECT_EQ(FirstError("[j]\nrwmixread=120\n"),
            "job.fio:2: option 'rwmixread': 120 is above the maximum of 100");
}

// --- aliases, flags, bools ------------------------------------------------------

TEST(AliasTest, AliasesAreRecordedUnderFiosCanonicalNames) {
  JobOptions j = Job(
      "[j]\nblocksize=8k\nblocksize_range=4k-8k\niodepth_batch_submit=4\n"
      "iodepth_batch_complete=2\niodepth_batch_complete_max=8\nwait_for_previous\n");
  EXPECT_THAT(Names(j.options),
              ElementsAre("bs", "bsrange", "iodepth_batch", "iodepth_batch_complete_min",
                          "iodepth_batch_complete_max", "stonewall"));
  EXPECT_EQ(j.iodepth_batch_submit, 4);
  EXPECT_EQ(j.iodepth_batch_complete_min, 2);
  EXPECT_EQ(j.iodepth_batch_complete_max, 8);
  EXPECT_TRUE(j.stonewall);
  EXPECT_EQ(j.options[1].value, "4k-8k");
}

TEST(FlagTest, SetFlagsTakeBareZeroOrOne) {
  EXPECT_TRUE(Job("[j]\ntime_based\nruntime=1\n").time_based);
  EXPECT_TRUE(Job("[j]\ntime_based=1\nruntime=1\n").time_based);
  EXPECT_FALSE(Job("[global]\ntime_based\n[j]\ntime_based=0\nruntime=1\n").time_based);
  EXPECT_TRUE(Job("[j]\ngroup_reporting\n").group_reporting);
  EXPECT_TRUE(Job("[j]\nnorandommap\n").norandommap);
  EXPECT_TRUE(Job("[j]\nnew_group\n").new_group);
  EXPECT_TRUE(Job("[j]\nrefill_buffers\n").options[0].bare);
  EXPECT_EQ(FirstError("[j]\ngroup_reporting=yes\n"),
            "job.fio:2: option 'group_reporting': invalid value 'yes' (write it bare, =0 or "
            "=1)");
}

TEST(BoolTest, DirectNeedsAValueOfZeroOrOne) {
  EXPECT_TRUE(Job("[j]\ndirect=1\n").direct);
  EXPECT_EQ(FirstError("[j]\ndirect\n"), "job.fio:2: option 'direct' requires an argument");
  EXPECT_EQ(FirstError("[j]\ndirect=true\n"),
            "job.fio:2: option 'direct': invalid value 'true' (0 or 1)");
  EXPECT_EQ(FirstError("[j]\ndirect=2\n"), "job.fio:2: option 'direct': 2 is out of range (0 or 1)");
}

TEST(BoolTest, BufferedIsTheInverseOfDirectAndTheLastWins) {
  EXPECT_TRUE(Job("[j]\nbuffered=0\n").direct);
  EXPECT_FALSE(Job("[j]\ndirect=1\nbuffered=1\n").direct);
  EXPECT_TRUE(Job("[j]\nbuffered=1\ndirect=1\n").direct);
  EXPECT_FALSE(Job("[j]\nrandrepeat=0\n").randrepeat);
}

// --- hipri and engines --------------------------------------------------------

TEST(HipriTest, ValidOnlyForPvsync2AndIoUring) {
  EXPECT_EQ(FirstError("[j]\nioengine=libaio\nhipri\n"),
            "job.fio:3: option 'hipri' is not valid for ioengine=libaio");
  EXPECT_EQ(FirstError("[j]\nioengine=psync\nhipri=1\n"),
            "job.fio:3: option 'hipri' is not valid for ioengine=psync");
  EXPECT_EQ(FirstError("[j]\nhipri\n"), "job.fio:2: option 'hipri' is not valid for ioengine=psync");
  EXPECT_TRUE(Job("[j]\nioengine=pvsync2\nhipri\n").hipri);
  EXPECT_TRUE(Job("[j]\nioengine=io_uring\nhipri=1\n").hipri);
  EXPECT_FALSE(Job("[j]\nioengine=io_uring\nhipri=0\n").hipri);
}

TEST(HipriTest, ParsedAgainstTheSectionsFinalEngineInAnyOrder) {
  EXPECT_TRUE(Job("[j]\nhipri=1\nioengine=pvsync2\n").hipri);
  EXPECT_EQ(FirstError("[j]\nhipri\nioengine=pvsync2\nioengine=libaio\n"),
            "job.fio:2: option 'hipri' is not valid for ioengine=libaio");
}

TEST(HipriTest, EngineInheritedFromGlobal) {
  EXPECT_TRUE(Job("[global]\nioengine=io_uring\n[j]\nhipri\n").hipri);
  EXPECT_TRUE(Job("[global]\nioengine=io_uring\nhipri\n[j]\n").hipri);
  // [global] is parsed on its own: its engine is psync there.
  EXPECT_EQ(FirstError("[global]\nhipri\n[j]\nioengine=io_uring\n"),
            "job.fio:2: option 'hipri' is not valid for ioengine=psync");
  // A job that changes engine gets the new engine's defaults.
  EXPECT_FALSE(Job("[global]\nioengine=io_uring\nhipri\n[j]\nioengine=libaio\n").hipri);
  EXPECT_FALSE(Job("[global]\nioengine=io_uring\nhipri\n[j]\nioengine=pvsync2\n").hipri);
}

TEST(HipriTest, RecordedAfterTheGeneralOptionsLikeFio) {
  JobOptions j = Job("[j]\nioengine=pvsync2\nhipri=1\nfilename=/dev/vdb\nrw=randwrite\n");
  EXPECT_THAT(Names(j.options), ElementsAre("ioengine", "rw", "filename", "hipri"));
}

TEST(EngineTest, ModeledEngines) {
  EXPECT_EQ(Job("[j]\nioengine=libaio\n").ioengine, Engine::kLibaio);
  EXPECT_EQ(Job("[j]\nioengine=io_uring\n").ioengine, Engine::kIoUring);
  EXPECT_EQ(Job("[j]\nioengine=pvsync2\n").ioengine, Engine::kPvsync2);
  EXPECT_EQ(Job("[j]\nioengine=sync\n").ioengine, Engine::kSync);
  EXPECT_EQ(Job("[j]\nioengine=sync\n").ioengine_name, "sync");
}

TEST(EngineTest, OtherFioEnginesAreNotModeledAndUnknownOnesAreErrors) {
  EXPECT_EQ(FirstError("[j]\nsize=1m\nioengine=null\n"),
            "job.fio:3: ioengine=null is understood by fio but not modeled by viosim "
            "(modeled engines: libaio, io_uring, pvsync2, psync, sync)");
  EXPECT_THAT(FirstError("[j]\nioengine=net\n"), HasSubstr("ioengine=net is understood"));
  EXPECT_THAT(FirstError("[j]\nioengine=warp9\n"),
              StartsWith("job.fio:2: unknown ioengine 'warp9'"));
  // Only the engine a job ends up with counts.
  EXPECT_EQ(Job("[global]\nioengine=null\n[j]\nioengine=libaio\n").ioengine, Engine::kLibaio);
  // Reported where it was set, for each job that keeps it.
  EXPECT_EQ(FirstError("[global]\nioengine=falloc\n[a]\n[b]\n"),
            "job.fio:2: ioengine=falloc is understood by fio but not modeled by viosim "
            "(modeled engines: libaio, io_uring, pvsync2, psync, sync)");
}

TEST(EngineTest, OptionsOfOtherEnginesAreNotValid) {
  EXPECT_EQ(FirstError("[j]\nioengine=libaio\nport=8888\n"),
            "job.fio:3: option 'port' is not valid for ioengine=libaio");
  // An engine option of a modeled engine that is not modeled.
  EXPECT_EQ(FirstError("[j]\nioengine=io_uring\nsqthread_poll\n"),
            "job.fio:3: option 'sqthread_poll' is understood by fio but not modeled by viosim");
}

// --- option classes ---------------------------------------------------------------

TEST(OptionClassTest, UnknownOption) {
  EXPECT_EQ(FirstError("[j]\nrw=read\nxyz=1\n"), "job.fio:3: unknown option 'xyz'");
  EXPECT_EQ(FirstError("[j]\nrandrepaet=0\n"), "job.fio:2: unknown option 'randrepaet'; did you mean randrepeat?");
  EXPECT_EQ(FirstError("[j]\nDirect=1\n"), "job.fio:2: unknown option 'Direct'; did you mean direct?");  // case
}

// Pacing as fio reads it: rates per direction with 1024-based suffixes,
// thinktime in us without a unit, bssplit's blank shares filled and its
// entries walked in ascending order of share, equal shares as written.
TEST(PacingOptionsTest, RatesThinktimeAndBssplitAsFioReadsThem) {
  JobFile f = Parse("[j]\nrw=randrw\nrate=1m,\nrate_iops_min=,10\nrate_process=linear\nthinktime=250\n"
                    "thinktime_spin=1ms\nthinktime_blocks=8\nthinktime_blocks_type=issue\n"
                    "bssplit=4k/50:1k/:32k/\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  const JobOptions& j = f.jobs[0];
  EXPECT_EQ(j.rate[0], 1048576u);  // 1m = 1 MiB/s, reads only
  EXPECT_EQ(j.rate[1], 0u);
  EXPECT_EQ(j.rate_iops_min[0], 0u);
  EXPECT_EQ(j.rate_iops_min[1], 10u);
  EXPECT_FALSE(j.rate_poisson);
  EXPECT_TRUE(Parse("[j]\nrw=randrw\nrate_iops=100,100\nrate_process=poisson\n").jobs.at(0).rate_poisson);
  EXPECT_EQ(j.thinktime_us, 250);
  EXPECT_EQ(j.thinktime_spin_us, 250);  // clamped to thinktime
  EXPECT_EQ(j.thinktime_blocks, 8);
  EXPECT_TRUE(j.thinktime_blocks_issue);
  ASSERT_EQ(j.bssplit[0].size(), 3u);
  EXPECT_EQ(j.bssplit[0][0].bs, 1024u);  // 25%: the blank shares split 50%
  EXPECT_EQ(j.bssplit[0][0].perc, 25);
  EXPECT_EQ(j.bssplit[0][1].bs, 32768u);
  EXPECT_EQ(j.bssplit[0][2].bs, 4096u);  // 50% last
  EXPECT_EQ(j.bs_min[0], 1024u);
  EXPECT_EQ(j.bs_max[0], 32768u);
  EXPECT_EQ(FirstError("[j]\nbssplit=4k/60:8k/60:16k/:32k/\n"),
            "job.fio:2: option 'bssplit': '4k/60:8k/60:16k/:32k/': the percentages add to more than 100% (fio "
            "refuses it)");
  EXPECT_EQ(FirstError("[j]\nrate_iops=100\nrate_iops_min=200\n"),
            "job.fio:1: job 'j': minimum rate exceeds rate, ddir 0 (fio refuses it)");
  // What fio 3.33 dies on, or computes by wrapping, is refused.
  EXPECT_EQ(FirstError("[j]\nrate=1k\nrate_process=poisson\n"),
            "job.fio:1: job 'j': rate_process=poisson with a rate for reads below one block a second (1024 B/s "
            "against 4096 B blocks): fio 3.33 dies there with SIGFPE (its IOPS is 0)");
  EXPECT_NE(FirstError("[j]\nbssplit=4k/70:8k/40:16k/\n").find("with a share left blank"), std::string::npos);
  EXPECT_NE(FirstError("[j]\nrate_iops=5000000000\n").find("above the maximum"), std::string::npos);
  // An empty list leaves its directions as they were.
  const JobOptions w = Parse("[j]\nbssplit=,4k/90:64k/10\n").jobs.at(0);
  EXPECT_TRUE(w.bssplit[0].empty());
  EXPECT_EQ(w.bssplit[1].size(), 2u);
}

TEST(OptionClassTest, KnownButNotModeled) {
  EXPECT_EQ(FirstError("[j]\nrw=read\nrate_ignore_thinktime=1\n"),
            "job.fio:3: option 'rate_ignore_thinktime' is understood by fio but not modeled by viosim");
  EXPECT_EQ(FirstError("[j]\nthinktime_iotime=1\n"),
            "job.fio:2: option 'thinktime_iotime' is understood by fio but not modeled by viosim");
}

TEST(OptionClassTest, NoEffectOptionsAreAcceptedAndRecorded) {
  JobFile f = Parse(
      "[global]\ndirectory=/tmp\nthread\nnuma_cpu_nodes=0-1\nnuma_mem_policy=bind:0\n"
      "randseed=1234\nthreads=1\n[j]\nwrite_bw_log=bw\nwrite_lat_log\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_THAT(Names(f.global_options),
              ElementsAre("directory", "thread", "numa_cpu_nodes", "numa_mem_policy",
                          "randseed", "threads"));
  EXPECT_THAT(Names(f.jobs[0].options), ElementsAre("write_bw_log", "write_lat_log"));
  EXPECT_TRUE(f.jobs[0].options[1].bare);
  EXPECT_THAT(f.notes, testing::Not(testing::Contains(HasSubstr("log"))));
}

TEST(OptionClassTest, LogOptionsFillTheJobsLogOptions) {
  JobFile f = Parse(
      "[global]\nwrite_iops_log=all\nlog_avg_msec=250\n[j]\nwrite_bw_log=bw\nwrite_lat_log\n"
      "write_hist_log\nlog_hist_msec=100\nlog_hist_coarseness=3\nlog_max_value=1\nlog_offset=1\n"
      "log_prio=1\nper_job_logs=0\n[k]\nwrite_iolog=x\nlog_unix_epoch=1\n");
  ASSERT_EQ(f.jobs.size(), 2u);
  const LogOptions& l = f.jobs[0].log;
  EXPECT_TRUE(l.bw && l.lat && l.iops && l.hist);
  EXPECT_EQ(l.bw_prefix, "bw");
  EXPECT_EQ(l.lat_prefix, "");
  EXPECT_EQ(l.iops_prefix, "all");  // from [global]
  EXPECT_EQ(l.avg_msec, 250);
  EXPECT_EQ(l.hist_msec, 100);
  EXPECT_EQ(l.hist_coarseness, 3);
  EXPECT_TRUE(l.max_value && l.offset && l.prio);
  EXPECT_FALSE(l.per_job_logs);
  const LogOptions& k = f.jobs[1].log;
  EXPECT_TRUE(k.iops && !k.bw && k.per_job_logs && !k.offset);
  EXPECT_THAT(f.notes, testing::Contains(HasSubstr("write_iolog")));
  EXPECT_THAT(f.notes, testing::Contains(HasSubstr("log_unix_epoch")));
  EXPECT_EQ(FirstError("[j]\nlog_hist_coarseness=7\n"),
            "job.fio:2: option 'log_hist_coarseness': 7 is above the maximum of 6");
  EXPECT_EQ(FirstError("[j]\nlog_offset=2\n"), "job.fio:2: option 'log_offset': 2 is out of range (0 or 1)");
}

TEST(OptionClassTest, NoEffectValuesAreStillChecked) {
  EXPECT_THAT(FirstError("[j]\nfallocate=bogus\n"),
              StartsWith("job.fio:2: option 'fallocate': invalid value 'bogus'"));
  EXPECT_EQ(FirstError("[j]\nunique_filename=2\n"),
            "job.fio:2: option 'unique_filename': 2 is out of range (0 or 1)");
  EXPECT_EQ(FirstError("[j]\ndirectory\n"), "job.fio:2: option 'directory' requires an argument");
}

TEST(OptionClassTest, TheTableHasHundredsOfNamesInTheRightClasses) {
  EXPECT_GT(AllOptions().size(), 300u);
  EXPECT_EQ(FindOption("timeout")->name, std::string("runtime"));
  EXPECT_EQ(FindOption("rate_iops")->support, Support::kModeled);
  EXPECT_EQ(FindOption("rate_ignore_thinktime")->support, Support::kNotModeled);
  EXPECT_EQ(FindOption("directory")->support, Support::kNoEffect);
  EXPECT_EQ(FindOption("iodepth")->support, Support::kModeled);
  EXPECT_EQ(FindOption("not_an_option"), nullptr);
  EXPECT_EQ(FindEngine("null"), EngineSupport::kNotModeled);
  EXPECT_EQ(FindEngine("libaio"), EngineSupport::kModeled);
  EXPECT_EQ(FindEngine("nonesuch"), EngineSupport::kUnknown);
  // No name or alias is listed twice (a second entry would be unreachable).
  for (const OptionInfo* o : AllOptions()) {
    EXPECT_EQ(FindOption(o->name), o) << o->name;
    if (o->alias[0] != '\0') {
      EXPECT_EQ(FindOption(o->alias), o) << o->alias;
    }
  }
}

// --- ranges and limits ------------------------------------------------------------

TEST(LimitsTest, FiosMinimums) {
  EXPECT_EQ(FirstError("[j]\niodepth=0\n"),
            "job.fio:2: option 'iodepth': 0 is below the minimum of 1");
  EXPECT_EQ(FirstError("[j]\nnumjobs=0\n"),
            "job.fio:2: option 'numjobs': 0 is below the minimum of 1");
  EXPECT_EQ(FirstError("[j]\niodepth=-4\n"), "job.fio:2: option 'iodepth': negative value '-4'");
}

TEST(LimitsTest, AbsurdValuesNameFileLineAndOption) {
  EXPECT_EQ(FirstError("[j]\nsize=2p\n"),
            "job.fio:2: option 'size': '2p' is above viosim's limit of 1 PiB");
  EXPECT_EQ(FirstError("[j]\n\niodepth=100000\n"),
            "job.fio:3: option 'iodepth': '100000' is above viosim's limit of 65536");
  EXPECT_EQ(FirstError("[j]\nnumjobs=5000\n"),
            "job.fio:2: option 'numjobs': '5000' is above viosim's limit of 4096");
  EXPECT_EQ(FirstError("[j]\nruntime=400d\n"),
            "job.fio:2: option 'runtime': '400d' is above viosim's limit of 1 year");
  EXPECT_EQ(FirstError("[j]\nramp_time=9999999999999999999\n"),
            "job.fio:2: option 'ramp_time': '9999999999999999999' is above viosim's limit of "
            "1 year");
  EXPECT_THAT(FirstError("[j]\nbs=2g\n"), StartsWith("job.fio:2: option 'bs': '2g' has a block "
                                                     "size above viosim's limit of 1 GiB"));
  // Still fine at the limits.
  EXPECT_EQ(Job("[j]\nsize=1p\n").size, uint64_t{1} << 50);
  EXPECT_EQ(Job("[j]\niodepth=65536\n").iodepth, 65536);
  EXPECT_EQ(Job("[j]\nnumjobs=4096\n").numjobs, 4096);
}

TEST(LimitsTest, SizeBelowTheBlockSizeIsAnError) {
  EXPECT_EQ(FirstError("[j]\nsize=2k\nbs=4k\n"),
            "job.fio:1: job 'j': size 2048 is smaller than the minimum block size 4096 (fio: "
            "size too small)");
}

// --- notes and job semantics -------------------------------------------------------

TEST(NotesTest, BufferedIoIsNotedOnce) {
  JobFile f = Parse("[a]\n[b]\n");
  EXPECT_THAT(f.notes, ElementsAre("direct=0 (buffered I/O through the page cache) is not "
                                   "modeled: jobs run as direct I/O"));
  EXPECT_FALSE(f.jobs[0].direct);
  EXPECT_THAT(Parse("[global]\ndirect=1\n[a]\n[b]\n").notes, IsEmpty());
}

TEST(NotesTest, TimeBasedWithoutRuntimeRunsSizeBound) {
  JobFile f = Parse("[global]\ndirect=1\n[j]\ntime_based\nsize=1m\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_FALSE(f.jobs[0].time_based);
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_THAT(f.notes[0], HasSubstr("time_based requires a runtime/timeout setting"));
  EXPECT_TRUE(Job("[j]\ndirect=1\ntime_based\nruntime=5\n").time_based);
}

// A number's text that fio passes over (an exponent, a fraction, letters
// after its unit) is read as fio reads it, and noted with its line: bs=1e3
// is 1 byte, iodepth=1.5 is 1, runtime=10sec is 10 us.
TEST(NotesTest, TextFioDoesNotReadInANumberIsNoted) {
  JobFile f = Parse("[j]\ndirect=1\nbs=1e3\niodepth=1.5\nruntime=10sec\nsize=4kz\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_EQ(f.jobs[0].bs_min[0], 1u);
  EXPECT_EQ(f.jobs[0].iodepth, 1);
  EXPECT_EQ(f.jobs[0].runtime_us, 10);
  EXPECT_EQ(f.jobs[0].size, 4096u);
  ASSERT_EQ(f.notes.size(), 4u) << testing::PrintToString(f.notes);
  EXPECT_THAT(f.notes[0], HasSubstr("job.fio:3: option 'bs=1e3': fio does not read 'e3' of it"));
  EXPECT_THAT(f.notes[1], HasSubstr("job.fio:4: option 'iodepth=1.5': fio does not read '.5'"));
  EXPECT_THAT(f.notes[2], HasSubstr("job.fio:5: option 'runtime=10sec': fio does not read 'sec'"));
  EXPECT_THAT(f.notes[3], HasSubstr("job.fio:6: option 'size=4kz': fio does not read 'z'"));
  // Every unit fio reads, lists and ranges: nothing to note.
  EXPECT_THAT(Parse("[j]\ndirect=1\nbs=4KiB,8k\nsize=1G\nruntime=2m\nramp_time=500ms\nbsrange=4k-64k\n"
                    "iodepth=0x10\nnorandommap=1\n")
                  .notes,
              IsEmpty());
}

TEST(JobSemanticsTest, NumjobsIsRecordedNotCloned) {
  JobFile f = Parse("[j]\nnumjobs=4\n");
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_EQ(f.jobs[0].numjobs, 4);
}

TEST(JobSemanticsTest, StonewallAndNewGroupPerJob) {
  JobFile f = Parse("[a]\n[b]\nstonewall\n[c]\nnew_group\n");
  ASSERT_EQ(f.jobs.size(), 3u);
  EXPECT_FALSE(f.jobs[0].stonewall);
  EXPECT_TRUE(f.jobs[1].stonewall);
  EXPECT_FALSE(f.jobs[1].new_group);
  EXPECT_TRUE(f.jobs[2].new_group);
}

TEST(JobSemanticsTest, LoopsFilesizeAndWaitFor) {
  EXPECT_EQ(Job("[j]\nloops=3\n").loops, 3);
  EXPECT_EQ(Job("[j]\nloops=0\n").loops, 1);  // fio runs loops=0 once
  EXPECT_EQ(Job("[j]\nfilesize=128m\n").size, uint64_t{128} << 20);
  EXPECT_EQ(Job("[j]\nfilesize=128m\nsize=1g\n").size, uint64_t{1} << 30);
  EXPECT_THAT(FirstError("[j]\nfilesize=1m-4m\n"),
              HasSubstr("a range of file sizes ('1m-4m') is understood by fio but not modeled"));
  JobFile f = Parse("[w]\n[r]\nwait_for=w\n[x]\nwait_for=nobody\n");
  ASSERT_EQ(f.jobs.size(), 3u);
  EXPECT_EQ(f.jobs[1].wait_for, "w");
  EXPECT_THAT(f.notes, testing::Contains(HasSubstr("wait_for=nobody names no other job")));
  EXPECT_THAT(f.notes, testing::Not(testing::Contains(HasSubstr("wait_for=w "))));
}

TEST(JobSemanticsTest, OrderQuirkFilenameLast) {
  JobFile f = Parse("[global]\nfilename=/dev/vdb\nsize=16M\nruntime=1\n[j]\n");
  EXPECT_THAT(Names(f.global_options), ElementsAre("size", "runtime", "filename"));
}

TEST(ErrorsTest, SeveralErrorsComeInLineOrderOnePerLine) {
  std::string e = Error("[global]\nioengine=null\n[j]\nfoo=1\nstartdelay=1\n");
  EXPECT_EQ(e,
            "job.fio:2: ioengine=null is understood by fio but not modeled by viosim (modeled "
            "engines: libaio, io_uring, pvsync2, psync, sync)\n"
            "job.fio:4: unknown option 'foo'\n"
            "job.fio:5: option 'startdelay' is understood by fio but not modeled by viosim");
}

// --- command line -----------------------------------------------------------------

TEST(CommandLineTest, NameStartsAJobAndEarlierOptionsAreGlobal) {
  absl::StatusOr<JobFile> f = ParseCommandLine(
      {"--iodepth=8", "--name=a", "--rw=randread", "--bs=8k", "--name=b", "--direct=1"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->jobs.size(), 2u);
  EXPECT_EQ(f->jobs[0].name, "a");
  EXPECT_EQ(f->jobs[0].iodepth, 8);
  EXPECT_EQ(f->jobs[0].rw, Pattern::kRandRead);
  EXPECT_EQ(f->jobs[0].bs_min[kRead], 8192u);
  EXPECT_EQ(f->jobs[1].name, "b");
  EXPECT_EQ(f->jobs[1].iodepth, 8);
  EXPECT_EQ(f->jobs[1].rw, Pattern::kRead);  // a's options stay in a
  EXPECT_TRUE(f->jobs[1].direct);
  EXPECT_THAT(Names(f->global_options), ElementsAre("iodepth"));
  EXPECT_THAT(Names(f->jobs[0].options), ElementsAre("name", "rw", "bs"));
  EXPECT_EQ(f->jobs[1].line, 5);
}

TEST(CommandLineTest, SingleDashSeparateValuesAndBareFlags) {
  absl::StatusOr<JobFile> f =
      ParseCommandLine({"-name=x", "--ioengine", "libaio", "--time_based", "-runtime=2"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->jobs.size(), 1u);
  EXPECT_EQ(f->jobs[0].ioengine, Engine::kLibaio);
  EXPECT_TRUE(f->jobs[0].time_based);
  EXPECT_EQ(f->jobs[0].runtime_us, 2 * kSec);
}

TEST(CommandLineTest, Errors) {
  absl::StatusOr<JobFile> f = ParseCommandLine({"--name=x", "--foo=1"});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "<command line>:2: unknown option 'foo'");
  f = ParseCommandLine({"--rw=read"});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "<command line>: no jobs defined");
  f = ParseCommandLine({"--output-format=json", "--name=x"});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "<command line>:1: '--output-format' is a fio program option, not a job option");
  f = ParseCommandLine({"--name=x", "job.fio"});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              StartsWith("<command line>:2: unexpected argument 'job.fio'"));
  f = ParseCommandLine({"--name=x", "--direct"});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "<command line>:2: option 'direct' requires an argument");
}

TEST(CommandLineTest, NameStartingWithGlobalIsAGlobalSection) {
  absl::StatusOr<JobFile> f =
      ParseCommandLine({"--name=global", "--bs=16k", "--name=j", "--rw=write"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->jobs.size(), 1u);
  EXPECT_EQ(f->jobs[0].bs_min[kWrite], 16384u);
}

}  // namespace
}  // namespace fio
