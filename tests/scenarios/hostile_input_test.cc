// Inputs a hostile user might give every reader of files: special files,
// files without end, deep nesting, and problems found after parsing. Each
// must be an error that names the file (and the line and column where the
// text has one), never a crash, a hang or unbounded memory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/fio_parser.h"
#include "scenarios/input_file.h"
#include "scenarios/loader.h"
#include "scenarios/scenario.pb.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Temp(const std::string& name) { return ::testing::TempDir() + name; }

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = Temp(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

std::string ReadProjectFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << path;
  return ss.str();
}

// One file of each kind a reader must refuse, and the words that say why.
struct BadFile {
  std::string path;
  std::string why;
};

std::vector<BadFile> BadFiles() {
  std::vector<BadFile> out;
  const std::string dir = Temp("a_directory");
  std::filesystem::create_directories(dir);
  out.push_back({dir, "a directory"});
  const std::string fifo = Temp("a_fifo");
  ::unlink(fifo.c_str());
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  out.push_back({fifo, "a FIFO"});  // no writer: reading it would wait for ever
  out.push_back({"/dev/zero", "a character device"});  // never ends
  // A regular file over the bound: refused by its size, before reading.
  const std::string big = Temp("too_big");
  const int fd = ::open(big.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, kMaxInputFileBytes + 1), 0);
  ::close(fd);
  out.push_back({big, "larger than"});
  out.push_back({Temp("does_not_exist"), "No such file"});
  return out;
}

// Every reader of a file named on the command line or in another file.
struct Reader {
  std::string name;
  std::function<absl::Status(const std::string&)> read;
};

std::vector<Reader> Readers() {
  return {
      {"scenario", [](const std::string& p) { return LoadScenarioFile(p).status(); }},
      {"baseline", [](const std::string& p) { return LoadBaselineFile(p).status(); }},
      {"fio job file", [](const std::string& p) { return fio::ParseJobFile(p).status(); }},
      {"fio include",
       [](const std::string& p) {
         return fio::ParseJobText("inc.fio", absl::StrCat("[j]\ninclude ", p, "\nrw=read\n"), "").status();
       }},
      {"scenario's job_file",
       [](const std::string& p) {
         std::string text = ReadProjectFile("scenarios/virtio_blk_kick_lock.textproto");
         text = absl::StrReplaceAll(text, {{"\"fio/kick-lock.fio\"", absl::StrCat("\"", p, "\"")}});
         absl::StatusOr<ScenarioFile> file = ParseScenarioText(Temp("kick.textproto"), text);
         if (!file.ok()) return file.status();
         return ResolveVariant(*file, VariantNames(*file).front(), {}).status();
       }},
  };
}

TEST(HostileInputTest, EveryReaderRefusesSpecialMissingAndOversizedFilesNamingThem) {
  for (const Reader& r : Readers()) {
    for (const BadFile& f : BadFiles()) {
      const absl::Status s = r.read(f.path);
      EXPECT_FALSE(s.ok()) << r.name << " read " << f.path;
      EXPECT_THAT(std::string(s.message()), HasSubstr(f.path)) << r.name;
      EXPECT_THAT(std::string(s.message()), HasSubstr(f.why)) << r.name;
    }
  }
}

TEST(HostileInputTest, AScenariosUnreadableJobFileIsReportedAtTheFieldsLine) {
  // The error names the line of workload { fio { job_file: ... } }, found
  // in the scenario's text rather than written down.
  const std::string text = ReadProjectFile("scenarios/virtio_blk_kick_lock.textproto");
  const size_t at = text.find("job_file: \"fio/kick-lock.fio\"");
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n'));
  const absl::Status s = Readers().back().read("missing.fio");
  EXPECT_THAT(std::string(s.message()), StartsWith(absl::StrCat(Temp("kick.textproto"), ":", line, ":")));
  EXPECT_THAT(std::string(s.message()), HasSubstr("field 'workload.fio.job_file' (missing.fio)"));
}

// Nesting of every shape, below, at and far beyond the limit.
TEST(HostileInputTest, DeepNestingIsAnErrorAtItsPlaceNotAStackOverflow) {
  struct Shape {
    std::string name, open, close;
  };
  const std::vector<Shape> shapes = {
      {"unknown field", "x {", "}"},
      {"unknown field, angle brackets", "x <", ">"},
      {"list of messages", "x: [{", "}]"},
      {"variant overlays", "variant { name: \"v\" overlay {", "} }"},
  };
  for (const Shape& shape : shapes) {
    for (const int depth : {1, 40, 60, 1000, 100000}) {
      std::string text;
      for (int i = 0; i < depth; ++i) text += shape.open;
      for (int i = 0; i < depth; ++i) text += shape.close;
      const std::string path = WriteTemp("deep.textproto", text);
      const absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
      if (depth >= 1000) {
        ASSERT_FALSE(file.ok()) << shape.name << " " << depth;
      }
      if (file.ok()) continue;  // one variant with an empty overlay is a scenario
      EXPECT_THAT(std::string(file.status().message()), StartsWith(path + ":1:")) << shape.name << " " << depth;
      if (depth >= 1000) {
        EXPECT_THAT(std::string(file.status().message()), HasSubstr("too deep")) << shape.name << " " << depth;
      }
    }
  }
}

// A scenario to break: two variants, a matrix, a stack with profiles.
constexpr char kScenario[] = R"(name: "t"
platform { cpus: 4 host_profile: "xeon" }
stack { nvme { profile: "optane_p4800x" } }
variant { name: "a-x" }
matrix {
  row { name: "a" }
  column { name: "x" }
}
)";

TEST(HostileInputTest, ADuplicateVariantFromTheMatrixIsReportedAtTheMatrix) {
  const std::string path = WriteTemp("matrix.textproto", kScenario);
  const absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()), StartsWith(path + ":5:1: field 'variant[1].name': duplicate variant name"));
}

// Every command resolves variants from the whole file, so a scenario's
// cost grows with the square of its variants: a small file must not buy a
// million of them (a 1,000 x 1,000 matrix is 47 KB). kMaxVariants in all,
// listed and generated, each path refused at its own line.
TEST(HostileInputTest, VariantsPastTheirBoundAreRefusedAtTheirLine) {
  auto axis = [](const char* kind, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) absl::StrAppend(&out, kind, " { name: \"", std::string(1, kind[0]), i, "\" }\n");
    return out;
  };
  struct Case {
    std::string text;
    std::string says;  // empty: accepted
  };
  const std::string head = "name: \"t\"\nvariant { name: \"v\" }\n";
  const std::vector<Case> cases = {
      {absl::StrCat(head, "matrix {\n", axis("row", 1000), axis("column", 1000), "}\n"),
       ":3:1: field 'matrix': the matrix makes 1000 x 1000 = 1000000 variants beside 1 listed; a scenario may have at "
       "most 1024"},
      {absl::StrCat(head, "matrix {\n", axis("row", 32), axis("column", 32), "}\n"), ":3:1: field 'matrix'"},
      {absl::StrCat("name: \"t\"\nmatrix {\n", axis("row", 32), axis("column", 32), "}\n"), ""},
      {absl::StrCat("name: \"t\"\n", axis("variant", 1025)),
       ":1026:1: field 'variant[1024]': 1025 variants; a scenario may have at most 1024"},
      {absl::StrCat("name: \"t\"\n", axis("variant", 1024)), ""},
  };
  for (const Case& c : cases) {
    const std::string path = WriteTemp("many.textproto", c.text);
    const absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
    if (c.says.empty()) {
      ASSERT_TRUE(file.ok()) << file.status();
      EXPECT_EQ(VariantNames(*file).size(), static_cast<size_t>(kMaxVariants));
      continue;
    }
    ASSERT_FALSE(file.ok()) << c.says;
    EXPECT_THAT(std::string(file.status().message()), StartsWith(path + c.says));
  }
}

TEST(HostileInputTest, UnknownProfilesAreReportedAtTheirLinesBeforeAnythingIsBuilt) {
  std::string text = absl::StrReplaceAll(kScenario, {{"variant { name: \"a-x\" }\n", ""},
                                                      {"\"xeon\"", "\"opteron\""},
                                                      {"\"optane_p4800x\"", "\"floppy\""}});
  const std::string path = WriteTemp("profiles.textproto", text);
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  for (const std::string& v : VariantNames(*file)) {
    const absl::Status s = ResolveVariant(*file, v, {}).status();
    EXPECT_THAT(std::string(s.message()), HasSubstr(path + ":2:20 (variant '" + v +
                                       "'): field 'platform.host_profile' (opteron) is not a known profile"));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(path + ":3:16 (variant '" + v + "'): field 'stack.nvme.profile' (floppy) is not a known"));
  }
}

TEST(HostileInputTest, SeedsOutsideUint64AreRefusedWhateverTheirSpelling) {
  for (const std::string seed : {"-1", "18446744073709551616", "99999999999999999999999", "1e3", "0x10", "", "1 2"}) {
    Scenario s;
    const absl::Status st = ApplyOverride(&s, "run.seed=" + seed, "--seed");
    EXPECT_FALSE(st.ok()) << seed;
    EXPECT_THAT(std::string(st.message()), StartsWith("--seed 'run.seed=" + seed + "': field 'run.seed'")) << seed;
  }
  Scenario s;
  EXPECT_TRUE(ApplyOverride(&s, "run.seed=18446744073709551615", "--seed").ok());
  EXPECT_EQ(s.run().seed(), 18446744073709551615u);
}


// ---------------------------------------------------------------------------
// Strings that are not UTF-8, in every string field of every input

// Every string field (TYPE_STRING) reachable from `d`, as --set paths
// ("a.b", "a.b[0].c" through repeated messages), each message type once per
// path so that recursion ends.
void StringFields(const google::protobuf::Descriptor* d, const std::string& prefix,
                  std::vector<const google::protobuf::Descriptor*>* stack, std::vector<std::string>* out) {
  using google::protobuf::FieldDescriptor;
  if (std::find(stack->begin(), stack->end(), d) != stack->end()) return;
  stack->push_back(d);
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = absl::StrCat(prefix, prefix.empty() ? "" : ".", f->name(), f->is_repeated() ? "[0]" : "");
    if (f->type() == FieldDescriptor::TYPE_STRING) out->push_back(path);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) StringFields(f->message_type(), path, stack, out);
  }
  stack->pop_back();
}

std::vector<std::string> StringFieldsOf(const google::protobuf::Descriptor* d) {
  std::vector<const google::protobuf::Descriptor*> stack;
  std::vector<std::string> out;
  StringFields(d, "", &stack, &out);
  return out;
}

// `path` ("a.b[0].c") written as text-format nesting around `leaf`.
std::string Nest(const std::string& path, const std::string& leaf) {
  const std::vector<std::string> steps = absl::StrSplit(path, '.');
  std::string open, close;
  for (size_t k = 0; k + 1 < steps.size(); ++k) {
    absl::StrAppend(&open, std::string(absl::StripSuffix(steps[k], "[0]")), " {\n");
    close += "}\n";
  }
  return absl::StrCat(open, std::string(absl::StripSuffix(steps.back(), "[0]")), ": ", leaf, "\n", close);
}

TEST(HostileInputTest, InvalidUtf8InEveryStringFieldIsRefusedAtItsLineInFilesAndSetValues) {
  const std::vector<std::string> fields = StringFieldsOf(Scenario::descriptor());
  ASSERT_GT(fields.size(), 20u);
  for (const std::string& field : fields) {
    // In a file, after a comment, so that the field's line is not the first.
    const std::string text = absl::StrCat("# a scenario\n", Nest(field, "\"ok\\377\""));
    absl::StatusOr<ScenarioFile> file = ParseScenarioText("bad.textproto", text);
    ASSERT_FALSE(file.ok()) << field;
    EXPECT_THAT(file.status().message(), HasSubstr(absl::StrCat("field '", field, "': not valid UTF-8: byte 0xff")))
        << field << "\n" << file.status().message();
    EXPECT_THAT(std::string(file.status().message()), StartsWith("bad.textproto:")) << field;
    EXPECT_THAT(std::string(file.status().message()), Not(StartsWith("bad.textproto:1:"))) << field;
    // By --set, wherever the path may be set from the command line.
    Scenario s;
    absl::Status set = ApplyOverride(&s, absl::StrCat(field, "=ok\xff"));
    if (!absl::StrContains(set.message(), "index")) {  // repeated fields need an element to exist first
      EXPECT_THAT(set.message(), HasSubstr("not valid UTF-8")) << field << ": " << set;
    }
  }
}

TEST(HostileInputTest, InvalidUtf8IsRefusedInBaselinesAndFioJobFilesAtTheirLines) {
  std::vector<std::string> fields = StringFieldsOf(Baseline::descriptor());
  ASSERT_FALSE(fields.empty());
  for (const std::string& field : fields) {
    const std::string path = WriteTemp("bad_baseline.textproto", absl::StrCat("\n", Nest(field, "\"\\377\"")));
    absl::Status s = LoadBaselineFile(path).status();
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(path, ":"))) << field << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("field '", field, "': not valid UTF-8"))) << s;
  }
  // fio: a job name, an option's value, a section header, an include, on
  // the command line.
  for (const char* line : {"name=a\xc3", "filename=/dev/\xff", "[j\xfe]", "include x\xff"}) {
    absl::Status s = fio::ParseJobText("bad.fio", absl::StrCat("[j]\nrw=read\n", line, "\n"), "").status();
    EXPECT_THAT(s.message(), HasSubstr("bad.fio:3:")) << line << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("not valid UTF-8")) << line << ": " << s;
  }
  absl::Status s = fio::ParseCommandLine({"--name=j", "--rw=read", "--filename=\xff"}).status();
  EXPECT_THAT(s.message(), HasSubstr("not valid UTF-8")) << s;
}

// ---------------------------------------------------------------------------
// Files with nothing to run, cells naming what their variant does not report

TEST(HostileInputTest, EmptyAndCommentOnlyFilesAreRefusedAtTheirFirstLine) {
  for (const std::string& text : {std::string(""), std::string("\n\n"), std::string("# a comment\n  # another\n")}) {
    absl::StatusOr<ScenarioFile> file = ParseScenarioText("empty.textproto", text);
    ASSERT_FALSE(file.ok());
    EXPECT_THAT(std::string(file.status().message()), StartsWith("empty.textproto:1:1: field 'workload': the file sets no field"));
  }
  // A file that sets something, but neither a workload nor a stack.
  absl::StatusOr<ScenarioFile> named = ParseScenarioText("named.textproto", "name: \"x\"\n");
  ASSERT_TRUE(named.ok()) << named.status();
  absl::Status s = ResolveVariant(*named, kBaseVariant, {}).status();
  EXPECT_THAT(std::string(s.message()), StartsWith("named.textproto:1:1: field 'workload': the scenario has neither"));
}

TEST(HostileInputTest, APublishedCellNamingAMetricItsVariantDoesNotReportIsRefusedAtItsLine) {
  const std::string text = ReadProjectFile("scenarios/virtio_blk_kick_lock.textproto");
  absl::StatusOr<ScenarioFile> good = ParseScenarioText("kick.textproto", text);
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_GT(good->scenario.published_size(), 0);
  const std::string metric = good->scenario.published(0).metric();
  // The first cell's metric renamed in place: its line is where it was.
  const size_t at = text.find(absl::StrCat("metric: \"", metric, "\""));
  ASSERT_NE(at, std::string::npos);
  std::string bad = text;
  bad.replace(at, metric.size() + 10, "metric: \"no_such_metric\"");
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n'));
  absl::Status s = ParseScenarioText("kick.textproto", bad).status();
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("kick.textproto:", line, ":")));
  EXPECT_THAT(s.message(), HasSubstr("field 'published[0].metric': 'no_such_metric' is not a metric of variant"));
  // By --set too.
  ScenarioFile edited = *good;
  s = ApplyFileOverrides(&edited, {"published[0].metric=iops_x"});
  EXPECT_THAT(s.message(), HasSubstr("field 'published[0].metric': 'iops_x' is not a metric")) << s;
}

// ---------------------------------------------------------------------------
// Arithmetic boundaries: one picosecond either side

TEST(HostileInputTest, ARunTooShortForItsBatchesIsRefusedOnePicosecondBelowTheBound) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile("scenarios/lockbench.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  const std::string v = VariantNames(*file).front();
  for (const int batches : {2, 20, 999}) {
    const std::string b = absl::StrCat("run.batches=", batches);
    absl::Status under = ResolveVariant(*file, v, {b, absl::StrCat("run.duration=", batches - 1, "ps")}).status();
    EXPECT_THAT(under.message(), HasSubstr("field 'run.duration'")) << under;
    EXPECT_THAT(under.message(), HasSubstr(absl::StrCat("it must be at least ", batches, "ps"))) << under;
    EXPECT_TRUE(ResolveVariant(*file, v, {b, absl::StrCat("run.duration=", batches, "ps")}).ok()) << batches;
  }
  // The same rule on an fio workload's run (blk-poll).
  absl::StatusOr<ScenarioFile> poll = LoadScenarioFile("scenarios/virtio_blk_poll.textproto");
  ASSERT_TRUE(poll.ok()) << poll.status();
  absl::Status s = ResolveVariant(*poll, VariantNames(*poll).front(), {"run.duration=1ps"}).status();
  EXPECT_THAT(s.message(), HasSubstr("field 'run.duration'")) << s;
  // fio's time cap, cut into its 20 batches.
  absl::Status cap = ResolveVariant(*poll, VariantNames(*poll).front(), {"workload.fio.max_group_time=19ps"}).status();
  EXPECT_THAT(cap.message(), HasSubstr("it must be at least 20ps")) << cap;
  EXPECT_TRUE(ResolveVariant(*poll, VariantNames(*poll).front(), {"workload.fio.max_group_time=20ps"}).ok());
}

}  // namespace
}  // namespace viosim
