// docs/cli.md and `--help` in step: every flag a subcommand's help lists is
// documented in docs/cli.md (as a whole word: `--jobs` is not `--jobs-x`);
// and the error messages docs/cli.md shows are the ones viosim prints.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/fio_output/test_files.h"

namespace {

// The test's scratch folder.
std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

std::string Help(const std::string& args) {
  const std::string out = TmpDir() + "/help.txt";
  const int status = std::system(absl::StrCat("cli/viosim ", args, " --help >", out, " 2>&1").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << args;
  return fio_test::ReadFile(out);
}

// The first column of each option line: "  -o,--output FILE   text" -> {"--output"}.
std::vector<std::string> Flags(const std::string& help) {
  std::vector<std::string> flags;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(line, "-")) continue;
    const absl::string_view names = line.substr(0, line.find(' '));
    for (absl::string_view name : absl::StrSplit(names, ',')) {
      if (absl::ConsumePrefix(&name, "--") && name != "help") flags.push_back(absl::StrCat("--", name));
    }
  }
  return flags;
}

// Subcommand names: the lines under "Subcommands:".
std::vector<std::string> Subcommands(const std::string& help) {
  std::vector<std::string> subs;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (line == "Subcommands:") {
      in = true;
      continue;
    }
    if (!in || line.empty()) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    subs.emplace_back(line.substr(0, line.find(' ')));
  }
  return subs;
}

// Whether `flag` occurs in `doc` not followed by a letter, digit or '-'.
bool Mentions(const std::string& doc, const std::string& flag) {
  for (size_t at = doc.find(flag); at != std::string::npos; at = doc.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if (end == doc.size() || !(std::isalnum(static_cast<unsigned char>(doc[end])) || doc[end] == '-')) return true;
  }
  return false;
}

TEST(DocsTest, EveryFlagOfEverySubcommandIsInDocsCli) {
  const std::string doc = fio_test::ReadFile("docs/cli.md");
  ASSERT_FALSE(doc.empty());
  const std::vector<std::string> subs = Subcommands(Help(""));
  ASSERT_GE(subs.size(), 7u);
  int checked = 0;
  for (const std::string& sub : subs) {
    EXPECT_NE(doc.find(absl::StrCat("`viosim ", sub)), std::string::npos) << "docs/cli.md lacks `viosim " << sub;
    for (const std::string& flag : Flags(Help(sub))) {
      EXPECT_TRUE(Mentions(doc, flag))
          << "viosim " << sub << " " << flag << " is not documented in docs/cli.md";
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

// Each example of bad input in docs/cli.md, and the command that gives it:
// the doc shows the first line viosim prints on stderr, exactly, and the
// exit status is 2. A doc line starting "viosim: " that is not an example
// here is reported, so that a new example gets its command too.
TEST(DocsTest, ErrorExamplesAreWhatViosimPrints) {
  const std::string dir = TmpDir();
  // The file of the first example, "lock.textproto", with `two` at 4:14.
  std::ofstream(dir + "/lock.textproto") << "# a lock benchmark\nworkload {\n  lockbench {\n    threads: two\n  }\n}\n";
  const std::string viosim = (std::filesystem::current_path() / "cli/viosim").string();
  struct Example {
    std::string cwd;  // where to run (the message names files as given)
    std::string args;
  };
  const std::vector<Example> examples = {
      {dir, "run lock.textproto"},
      {".", "run scenarios/lockbench.textproto --set run.durashun=1s"},
      {".", "run scenarios/virtio_blk_kick_lock.textproto --variant after --set stack.virtio_blk.queue_depth=256"},
      {".", "run scenarios/virtio_blk_poll.textproto --variant randread-4k-hipri0 --set "
            "platform.kvm.mmio_exit_user.value=1ms"},
  };
  const std::string doc = fio_test::ReadFile("docs/cli.md");
  std::vector<std::string> shown;
  for (absl::string_view line : absl::StrSplit(doc, '\n')) {
    if (absl::StartsWith(line, "viosim: ") && !absl::StartsWith(line, "viosim: simulated ")) shown.emplace_back(line);
  }
  std::vector<std::string> printed;
  for (const Example& e : examples) {
    const std::string err = dir + "/err.txt";
    const int status = std::system(absl::StrCat("cd ", e.cwd, " && ", viosim, " ", e.args, " >/dev/null 2>", err).c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << e.args;
    const std::string out = fio_test::ReadFile(err);
    const std::string first = out.substr(0, out.find('\n'));
    printed.push_back(first);
    EXPECT_NE(std::find(shown.begin(), shown.end(), first), shown.end())
        << "viosim " << e.args << " prints\n  " << first << "\nwhich docs/cli.md does not show";
  }
  for (const std::string& line : shown) {
    EXPECT_NE(std::find(printed.begin(), printed.end(), line), printed.end())
        << "docs/cli.md shows\n  " << line << "\nwhich no example of this test prints";
  }
}

}  // namespace
