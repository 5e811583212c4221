// Keeps bad input away from the models' aborts: for every shipped scenario
// and every numeric or duration field its resolved scenario has, boundary
// values set as --set sets them (0, 1, -1, the field's bounds and one past
// them, a huge value; for durations 0, 1ps, the horizon and past it) must
// either resolve and run 200 simulated microseconds, or be refused with
// InvalidArgument naming the field. A crash or a hang fails the test; each
// case is written to stderr before it runs, so the log names the last one.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "scenarios/fio_parser.h"
#include "scenarios/builder.h"
#include "scenarios/checks.h"
#include "scenarios/fio_builder.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"

namespace viosim {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

struct Target {
  std::string path;
  const FieldDescriptor* field;
};

bool IsDuration(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_STRING && f->options().GetExtension(unit) == TIME;
}

// Every numeric and duration field of `m` and of the messages set in it.
void Collect(const Message& m, const std::string& prefix, std::vector<Target>* out) {
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < m.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* f = m.GetDescriptor()->field(i);
    const std::string path = prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) {
          Collect(r->GetRepeatedMessage(m, f, k), absl::StrCat(path, "[", k, "]"), out);
        }
      } else if (r->HasField(m, f)) {
        Collect(r->GetMessage(m, f), path, out);
      }
      continue;
    }
    if (f->is_repeated()) continue;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
      case FieldDescriptor::CPPTYPE_UINT32:
      case FieldDescriptor::CPPTYPE_UINT64:
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT:
        out->push_back({path, f});
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        if (IsDuration(f)) out->push_back({path, f});
        break;
      default:
        break;
    }
  }
}

// The boundary values of `f`, as --set takes them.
std::vector<std::string> Boundaries(const FieldDescriptor* f) {
  if (IsDuration(f)) {
    return {"0ns", "1ps", FormatDurationForInput(kMaxSimulatedTime),
            FormatDurationForInput(kMaxSimulatedTime + sim::Time::Picos(1)), "9223372s"};
  }
  std::vector<std::string> v = {"0", "1", "-1"};
  const bool real = f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE || f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT;
  for (const bool is_max : {false, true}) {
    const auto& option = is_max ? max : min;
    if (!f->options().HasExtension(option)) continue;
    const double bound = f->options().GetExtension(option);
    const double past = bound + (is_max ? 1 : -1);
    v.push_back(real ? absl::StrCat(bound) : absl::StrCat(static_cast<int64_t>(bound)));
    v.push_back(real ? absl::StrCat(is_max ? bound * 2 : bound / 2 - 1) : absl::StrCat(static_cast<int64_t>(past)));
  }
  // The largest value of the field's type; for reals, far beyond any bound.
  const std::map<FieldDescriptor::CppType, std::vector<std::string>> huge = {
      {FieldDescriptor::CPPTYPE_INT32, {absl::StrCat(std::numeric_limits<int32_t>::max())}},
      {FieldDescriptor::CPPTYPE_INT64, {absl::StrCat(std::numeric_limits<int64_t>::max())}},
      {FieldDescriptor::CPPTYPE_UINT32, {absl::StrCat(std::numeric_limits<uint32_t>::max())}},
      {FieldDescriptor::CPPTYPE_UINT64, {absl::StrCat(std::numeric_limits<uint64_t>::max())}},
      {FieldDescriptor::CPPTYPE_DOUBLE, {"1e300", "-1e300"}},
      {FieldDescriptor::CPPTYPE_FLOAT, {"1e300", "-1e300"}},
  };
  for (const std::string& h : huge.at(f->cpp_type())) v.push_back(h);
  return v;
}

// Whether `message` names the field at `path` or a message holding it
// (the lock benchmark's rules speak of workload.lockbench.think as a whole).
bool NamesField(absl::string_view message, std::string path) {
  while (path.find('.') != std::string::npos) {
    if (absl::StrContains(message, absl::StrCat("'", path, "'")) ||
        absl::StrContains(message, absl::StrCat("'", path, "="))) {
      return true;
    }
    path = path.substr(0, path.rfind('.'));
  }
  return false;
}

// Fields whose large values make a run long by definition: only resolved
// there, run at their smallest values.
bool RunsAt(const std::string& path, const std::string& value) {
  for (const char* length : {"run.warmup", "run.duration", "workload.fio.max_group_time"}) {
    if (path == length) return value == "0ns" || value == "1ps";
  }
  if (path == "workload.fio.target_ci_pct") return value != "0";  // 0: the job's full length
  return true;
}

// A status from resolving or running is fine when OK or InvalidArgument
// naming the field.
void ExpectOkOrNamed(const absl::Status& s, const std::string& path, const std::string& what) {
  if (s.ok()) return;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what << ": " << s;
  EXPECT_TRUE(NamesField(s.message(), path)) << what << ": the message does not name the field: " << s.message();
}

// A small job for a stack scenario without a workload of its own.
constexpr char kStackJob[] = "[j]\nrw=randread\nioengine=libaio\niodepth=4\nnumjobs=2\n";

void Sweep(const std::string& scenario) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(scenario);
  ASSERT_TRUE(file.ok()) << file.status();
  const std::vector<std::string> variants = VariantNames(*file);
  for (const std::string& variant : {variants.front(), variants.back()}) {
    absl::StatusOr<Scenario> plain = ResolveVariant(*file, variant, {});
    ASSERT_TRUE(plain.ok()) << plain.status();
    std::vector<Target> targets;
    Collect(*plain, "", &targets);
    ASSERT_FALSE(targets.empty());
    // 200 simulated microseconds per run: the run block rules `viosim run`
    // (every workload), max_group_time `viosim fio` on a stack scenario.
    std::vector<std::string> brief = {"run.warmup=0ns", "run.duration=200us"};
    if (plain->workload().has_fio()) brief.push_back("workload.fio.max_group_time=200us");
    absl::StatusOr<fio::JobFile> stack_job = fio::ParseJobText("stack_job.fio", kStackJob, "");
    ASSERT_TRUE(stack_job.ok()) << stack_job.status();
    for (const Target& t : targets) {
      for (const std::string& value : Boundaries(t.field)) {
        const std::string assignment = absl::StrCat(t.path, "=", value);
        const std::string what = absl::StrCat(scenario, " variant ", variant, " --set ", assignment);
        std::cerr << "case: " << what << "\n";
        std::vector<std::string> overrides = brief;
        overrides.push_back(assignment);
        absl::StatusOr<Scenario> s = ResolveVariant(*file, variant, overrides);
        ExpectOkOrNamed(s.status(), t.path, what);
        if (!s.ok() || !RunsAt(t.path, value)) continue;
        if (plain->workload().kind_case() != Workload::KIND_NOT_SET) {
          RunOptions options;
          options.base_dir = "scenarios";
          ExpectOkOrNamed(RunScenario(*s, variant, options).status(), t.path, what);
          continue;
        }
        // A stack for `viosim fio`: its jobs come from the command line.
        absl::Status checked = CheckJobsOnStack(*file, overrides, *s, *stack_job, std::nullopt);
        ExpectOkOrNamed(checked, t.path, what);
        FioRunOptions once;
        once.replicate = false;  // boundaries, not intervals: one run each
        if (checked.ok()) ExpectOkOrNamed(RunFio(*s, *stack_job, once).status(), t.path, what);
      }
    }
  }
}

// Every scenario file under scenarios/.
std::vector<std::string> ShippedScenarios() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator("scenarios")) {
    if (entry.path().extension() == ".textproto") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

class InputBoundariesTest : public testing::TestWithParam<std::string> {};

TEST_P(InputBoundariesTest, ResolveAndRunOrNameTheField) { Sweep(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Scenarios, InputBoundariesTest, testing::ValuesIn(ShippedScenarios()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           for (char& c : name) {
                             if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace viosim
