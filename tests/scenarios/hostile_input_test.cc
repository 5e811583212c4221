// Inputs a hostile user might give every reader of files: special files,
// files without end, deep nesting, and problems found after parsing. Each
// must be an error that names the file (and the line and column where the
// text has one), never a crash, a hang or unbounded memory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/fio_parser.h"
#include "scenarios/input_file.h"
#include "scenarios/loader.h"

namespace viosim {
namespace {

using ::testing::HasSubstr;
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
  // workload { fio { job_file: ... } } is on line 153 of the scenario.
  const absl::Status s = Readers().back().read("missing.fio");
  EXPECT_THAT(std::string(s.message()), StartsWith(Temp("kick.textproto") + ":153:"));
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

}  // namespace
}  // namespace viosim
