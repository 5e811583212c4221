#include "scenarios/loader.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/units.h"
#include "sim/time.h"

namespace viosim {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr char kGoodFile[] = "tests/scenarios/testdata/lockbench.textproto";

// Writes `text` to a file named `name` in the test's temporary directory and
// returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  EXPECT_TRUE(out.good()) << path;
  return path;
}

// Loads `text` from a temporary file called `name`; the load must fail with
// InvalidArgument. Returns the message.
std::string LoadError(const std::string& name, const std::string& text) {
  const std::string path = WriteTemp(name, text);
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
  EXPECT_FALSE(file.ok()) << name << " loaded";
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument)
      << file.status();
  return std::string(file.status().message());
}

// The prefix of an error about `field` at LINE:COLUMN of temp file `name`.
std::string At(const std::string& name, int line, int column,
               const std::string& field) {
  return ::testing::TempDir() + name + ":" + std::to_string(line) + ":" +
         std::to_string(column) + ": field '" + field + "': ";
}

ScenarioFile LoadGood() {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(kGoodFile);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *std::move(file) : ScenarioFile{};
}

// A small valid file with two variants, for override tests.
constexpr char kTwoVariants[] = R"pb(
platform { cpus: 4 }
workload { lockbench { threads: 2 think { exponential { mean: "10us" } } } }
run { duration: "1s" }
variant { name: "a" }
variant { name: "b" overlay { workload { lockbench { threads: 4 } } } }
published { variant: "b" metric: "lock_acquisitions_per_s" value: 1 role: PREDICTION tolerance_pct: 5 }
)pb";

Scenario TwoVariants() {
  absl::StatusOr<ScenarioFile> file = ParseScenarioText("two.textproto", kTwoVariants);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? file->scenario : Scenario{};
}

// --- Loading a valid file -------------------------------------------------

TEST(LoadScenarioFileTest, LoadsAValidFile) {
  const ScenarioFile file = LoadGood();
  EXPECT_EQ(file.path, kGoodFile);
  EXPECT_EQ(file.scenario.name(), "lockbench-test");
  EXPECT_EQ(file.scenario.platform().cpus(), 8);
  EXPECT_EQ(file.scenario.workload().lockbench().hold().constant().value(), "1.5us");
  EXPECT_EQ(file.scenario.published_size(), 2);
  EXPECT_THAT(VariantNames(file), ElementsAre("n2", "n4"));
  ASSERT_NE(file.locations, nullptr);
  EXPECT_THAT(file.text, HasSubstr("lockbench-test"));
}

TEST(LoadScenarioFileTest, MissingFileIsNotFoundAndNamesThePath) {
  const std::string path = ::testing::TempDir() + "no-such-dir/none.textproto";
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr(path));
}

TEST(LoadScenarioFileTest, DirectoryIsNotARegularFile) {
  absl::StatusOr<ScenarioFile> file = LoadScenarioFile(::testing::TempDir());
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("not a regular file (a directory)"));
}

TEST(LoadScenarioFileTest, ZeroIsAcceptedWhereAllowed) {
  absl::StatusOr<ScenarioFile> file = ParseScenarioText(
      "zero.textproto",
      "platform { lock_handoff { value: \"0ns\" } }\n"
      "workload { lockbench { hold { constant { value: \"0ns\" } } } }\n"
      "run { warmup: \"0s\" }\n");
  EXPECT_TRUE(file.ok()) << file.status();
}

TEST(VariantNamesTest, FileWithoutVariantsHasTheBase) {
  absl::StatusOr<ScenarioFile> file =
      ParseScenarioText("plain.textproto", "platform { cpus: 2 }\n");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(VariantNames(*file), ElementsAre(kBaseVariant));
}

TEST(FieldLocationTest, PointsAtTheFieldInTheFile) {
  const ScenarioFile file = LoadGood();
  EXPECT_EQ(FieldLocation(file, "published[1]"), std::string(kGoodFile) + ":45:1");
  EXPECT_EQ(FieldLocation(file, "run.duration"), std::string(kGoodFile) + ":23:3");
  EXPECT_EQ(FieldLocation(file, "published[7]"), kGoodFile);
  EXPECT_EQ(FieldLocation(file, "no.such"), kGoodFile);
}

// --- Parse errors ---------------------------------------------------------

TEST(ParseErrorTest, TruncatedFile) {
  const std::string message = LoadError("truncated.textproto",
                                        "name: \"t\"\n"
                                        "platform {\n"
                                        "  cpus: 4\n"
                                        "  lock_handoff {\n"
                                        "    value: \"1ns\"\n");
  EXPECT_THAT(message, StartsWith(At("truncated.textproto", 6, 1,
                                     "platform.lock_handoff")));
  EXPECT_THAT(message, HasSubstr("unexpected end of file with 2 blocks still open"));
}

TEST(ParseErrorTest, TruncatedInsideAValue) {
  const std::string message =
      LoadError("truncated2.textproto", "platform {\n  cpus:");
  EXPECT_THAT(message, StartsWith(At("truncated2.textproto", 2, 8, "platform.cpus")));
  EXPECT_THAT(message, HasSubstr("unexpected end of file"));
}

TEST(ParseErrorTest, UnknownFieldListsTheFieldsThatExist) {
  const std::string message = LoadError("unknown.textproto",
                                        "platform {\n"
                                        "  cpuz: 4\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("unknown.textproto", 2, 3, "platform.cpuz")));
  EXPECT_THAT(message, HasSubstr("no field named \"cpuz\""));
  EXPECT_THAT(message, HasSubstr("name, description, cpus, lock_handoff"));
}

TEST(ParseErrorTest, UnknownFieldInsideARepeatedMessageGetsItsIndex) {
  const std::string message = LoadError("unknown2.textproto",
                                        "variant { name: \"a\" }\n"
                                        "variant {\n"
                                        "  name: \"b\"\n"
                                        "  overlay { run { seeed: 3 } }\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("unknown2.textproto", 4, 19,
                                     "variant[1].overlay.run.seeed")));
}

TEST(ParseErrorTest, StringWhereIntegerExpected) {
  const std::string message = LoadError("type1.textproto",
                                        "platform {\n"
                                        "  cpus: \"four\"\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("type1.textproto", 2, 9, "platform.cpus")));
  EXPECT_THAT(message, HasSubstr("Expected integer"));
  EXPECT_THAT(message, HasSubstr("a number of type int32"));
}

TEST(ParseErrorTest, WordWhereIntegerExpected) {
  const std::string message =
      LoadError("type2.textproto", "workload { lockbench { threads: abc } }\n");
  EXPECT_THAT(message, StartsWith(At("type2.textproto", 1, 33,
                                     "workload.lockbench.threads")));
}

TEST(ParseErrorTest, IntegerWhereMessageExpected) {
  const std::string message = LoadError("type3.textproto", "name: \"x\"\nplatform: 5\n");
  EXPECT_THAT(message, StartsWith(At("type3.textproto", 2, 11, "platform")));
  EXPECT_THAT(message, HasSubstr("viosim.Platform message"));
}

TEST(ParseErrorTest, BadEnumValuePointsAtTheField) {
  const std::string message = LoadError("enum.textproto",
                                        "stack {\n"
                                        "  lock { kind: SPIN }\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("enum.textproto", 2, 10, "stack.lock.kind")));
  EXPECT_THAT(message, HasSubstr("\"SPIN\""));
  EXPECT_THAT(message, HasSubstr("TICKET"));
}

TEST(ParseErrorTest, TabsAdvanceTheColumnAsInProtobuf) {
  const std::string message = LoadError("tab.textproto", "platform {\n\tcpus: x\n}\n");
  EXPECT_THAT(message, StartsWith(At("tab.textproto", 2, 15, "platform.cpus")));
}

TEST(ParseErrorTest, UnterminatedString) {
  const std::string message =
      LoadError("string.textproto", "platform {\n  name: \"box\n}\n");
  EXPECT_THAT(message, StartsWith(At("string.textproto", 2, 13, "platform.name")));
  EXPECT_THAT(message, Not(HasSubstr("end of file")));
}

TEST(ParseErrorTest, AllUnknownFieldsAreReported) {
  const std::string message = LoadError("unknowns.textproto",
                                        "nmae: \"x\"\n"
                                        "platform { cpuz: 4 }\n"
                                        "run { seeed: 1 }\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(3)) << message;
  EXPECT_THAT(lines[0], StartsWith(At("unknowns.textproto", 1, 1, "nmae")));
  EXPECT_THAT(lines[1], StartsWith(At("unknowns.textproto", 2, 12, "platform.cpuz")));
  EXPECT_THAT(lines[2], StartsWith(At("unknowns.textproto", 3, 7, "run.seeed")));
}

// The errors of one text are located in one scan that goes on from each to
// the next: the count of a repeated field's elements carries over.
TEST(ParseErrorTest, ErrorsAfterEachOtherKeepTheirElementIndices) {
  const std::string message = LoadError("indices.textproto",
                                        "variant { name: \"a\" bogus: 1 }\n"
                                        "variant { name: \"b\" bogus: 2 }\n"
                                        "platform { cpus: }\n");
  EXPECT_THAT(std::vector<std::string>(absl::StrSplit(message, '\n')),
              ElementsAre(StartsWith(At("indices.textproto", 1, 21, "variant[0].bogus")),
                          StartsWith(At("indices.textproto", 2, 21, "variant[1].bogus")),
                          StartsWith(At("indices.textproto", 3, 18, "platform.cpus"))))
      << message;
}

// --- Value checks ---------------------------------------------------------

TEST(ValueCheckTest, NegativeDuration) {
  const std::string message = LoadError("negative.textproto",
                                        "run {\n"
                                        "  duration: \"-5ms\"\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("negative.textproto", 2, 3, "run.duration")));
  EXPECT_THAT(message, HasSubstr("must not be negative"));
}

TEST(ValueCheckTest, ZeroDurationWhereNotAllowed) {
  const std::string message = LoadError("zero.textproto",
                                        "workload {\n"
                                        "  lockbench {\n"
                                        "    think { exponential { mean: \"0us\" } }\n"
                                        "  }\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("zero.textproto", 3, 27,
                                     "workload.lockbench.think.exponential.mean")));
  EXPECT_THAT(message, HasSubstr("must be greater than zero"));
}

TEST(ValueCheckTest, DurationWithBadUnit) {
  const std::string message =
      LoadError("unit.textproto", "run { duration: \"5 min\" }\n");
  EXPECT_THAT(message, StartsWith(At("unit.textproto", 1, 7, "run.duration")));
  EXPECT_THAT(message, HasSubstr("unknown unit 'min'"));
  EXPECT_THAT(message, HasSubstr("ps, ns, us, ms, s"));
}

TEST(ValueCheckTest, DurationWithoutUnit) {
  const std::string message =
      LoadError("nounit.textproto", "platform { lock_handoff { value: \"40\" } }\n");
  EXPECT_THAT(message, StartsWith(At("nounit.textproto", 1, 27,
                                     "platform.lock_handoff.value")));
  EXPECT_THAT(message, HasSubstr("missing unit"));
}

TEST(ValueCheckTest, NumberOutOfBounds) {
  const std::string message = LoadError("bounds.textproto",
                                        "workload {\n"
                                        "  lockbench { threads: 0 }\n"
                                        "}\n");
  EXPECT_THAT(message, StartsWith(At("bounds.textproto", 2, 15,
                                     "workload.lockbench.threads")));
  EXPECT_THAT(message, HasSubstr("must be between 1 and 4096, got 0"));
}

TEST(ValueCheckTest, DoubleOutOfBoundsInARepeatedMessage) {
  const std::string message = LoadError(
      "bounds2.textproto",
      "workload { lockbench { hold { empirical {\n"
      "  point { p: 0 value: \"1us\" }\n"
      "  point { p: 1.5 value: \"2us\" }\n"
      "} } } }\n");
  EXPECT_THAT(message, StartsWith(At("bounds2.textproto", 3, 11,
                                     "workload.lockbench.hold.empirical.point[1].p")));
  EXPECT_THAT(message, HasSubstr("must be between 0 and 1, got 1.5"));
}

TEST(ValueCheckTest, ErrorsInsideAVariantOverlayNameThePath) {
  const std::string message = LoadError(
      "overlay.textproto",
      "variant { name: \"a\" }\n"
      "variant { name: \"b\" overlay { run { duration: \"0s\" } } }\n");
  EXPECT_THAT(message, StartsWith(At("overlay.textproto", 2, 37,
                                     "variant[1].overlay.run.duration")));
}

TEST(ValueCheckTest, MultipleErrorsAreAllReportedInFileOrder) {
  const std::string message = LoadError("many.textproto",
                                        "platform { cpus: 0 }\n"
                                        "workload {\n"
                                        "  lockbench { threads: 5000 }\n"
                                        "}\n"
                                        "run {\n"
                                        "  warmup: \"-1ms\"\n"
                                        "  duration: \"1 hour\"\n"
                                        "}\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(4)) << message;
  EXPECT_THAT(lines[0], StartsWith(At("many.textproto", 1, 12, "platform.cpus")));
  EXPECT_THAT(lines[1], StartsWith(At("many.textproto", 3, 15,
                                      "workload.lockbench.threads")));
  EXPECT_THAT(lines[2], StartsWith(At("many.textproto", 6, 3, "run.warmup")));
  EXPECT_THAT(lines[3], StartsWith(At("many.textproto", 7, 3, "run.duration")));
}

TEST(ValueCheckTest, ValueErrorsBeforeAParseErrorAreReportedToo) {
  const std::string message = LoadError("both.textproto",
                                        "platform { cpus: 0 }\n"
                                        "run { seed: x }\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(2)) << message;
  EXPECT_THAT(lines[0], StartsWith(At("both.textproto", 1, 12, "platform.cpus")));
  EXPECT_THAT(lines[1], StartsWith(At("both.textproto", 2, 13, "run.seed")));
}

// --- Cross-field rules ----------------------------------------------------

TEST(RuleTest, VariantNamesMustBeUniqueNonEmptyAndNotBase) {
  const std::string message = LoadError("names.textproto",
                                        "variant { name: \"a\" }\n"
                                        "variant { name: \"a\" }\n"
                                        "variant { description: \"no name\" }\n"
                                        "variant { name: \"base\" }\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(3)) << message;
  EXPECT_THAT(lines[0], StartsWith(At("names.textproto", 2, 11, "variant[1].name")));
  EXPECT_THAT(lines[0], HasSubstr("duplicate variant name 'a'"));
  EXPECT_THAT(lines[1], StartsWith(At("names.textproto", 3, 1, "variant[2].name")));
  EXPECT_THAT(lines[1], HasSubstr("non-empty name"));
  EXPECT_THAT(lines[2], StartsWith(At("names.textproto", 4, 11, "variant[3].name")));
  EXPECT_THAT(lines[2], HasSubstr("reserved"));
}

TEST(RuleTest, OverlayMustNotContainVariantsOrPublished) {
  const std::string message = LoadError(
      "nested.textproto",
      "variant {\n"
      "  name: \"a\"\n"
      "  overlay {\n"
      "    variant { name: \"inner\" }\n"
      "    published { metric: \"m\" value: 1 role: PREDICTION }\n"
      "  }\n"
      "}\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(2)) << message;
  EXPECT_THAT(lines[0], StartsWith(At("nested.textproto", 4, 5,
                                      "variant[0].overlay.variant[0]")));
  EXPECT_THAT(lines[1], StartsWith(At("nested.textproto", 5, 5,
                                      "variant[0].overlay.published[0]")));
}

TEST(RuleTest, PublishedNeedsKnownVariantMetricReferenceAndRole) {
  const std::string message = LoadError("published.textproto",
                                        "variant { name: \"a\" }\n"
                                        "published {\n"
                                        "  variant: \"zz\"\n"
                                        "}\n");
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_THAT(lines, SizeIs(4)) << message;
  // The missing fields are reported at the published cell itself.
  EXPECT_THAT(message, HasSubstr(At("published.textproto", 2, 1, "published[0].metric")));
  EXPECT_THAT(message, HasSubstr(At("published.textproto", 2, 1, "published[0]") +
                                 "a published cell needs a reference"));
  EXPECT_THAT(message, HasSubstr(At("published.textproto", 2, 1, "published[0].role")));
  EXPECT_THAT(message, HasSubstr(At("published.textproto", 3, 3, "published[0].variant") +
                                 "unknown variant 'zz' (variants: a"));
}

TEST(RuleTest, OnlyAPredictionHoldsAnEffectTolerance) {
  const std::string message = LoadError("effect.textproto",
                                        "variant { name: \"a\" }\n"
                                        "published {\n"
                                        "  variant: \"a\" metric: \"lock_acquisitions_per_s\" value: 1\n"
                                        "  role: CALIBRATION\n"
                                        "  effect_tolerance_pct: 10\n"
                                        "}\n");
  EXPECT_THAT(message, HasSubstr(At("effect.textproto", 5, 3, "published[0].effect_tolerance_pct") +
                                 "only a PREDICTION cell has an effect"));
}

TEST(RuleTest, PublishedMayNameTheBase) {
  absl::StatusOr<ScenarioFile> file = ParseScenarioText(
      "p.textproto",
      "workload { lockbench { threads: 2 } }\n"
      "published { variant: \"base\" metric: \"lock_acquisitions_per_s\" value: 1 role: CALIBRATION }\n"
      "published { metric: \"lock_acquisitions_per_s\" analytic: MACHINE_REPAIRMAN_MVA role: PREDICTION }\n");
  EXPECT_TRUE(file.ok()) << file.status();
}

// --- Variants -------------------------------------------------------------

TEST(ResolveVariantTest, OverlayScalarReplacesAndUnsetFieldsKeepTheBase) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s = ResolveVariant(file, "n4", {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->workload().lockbench().threads(), 4);           // from the overlay
  EXPECT_EQ(s->platform().lock_handoff().value(), "60ns");    // from the overlay
  EXPECT_EQ(s->platform().lock_handoff().source().ref(), "test value");  // base
  EXPECT_EQ(s->platform().cpus(), 8);                          // base
  EXPECT_EQ(s->workload().lockbench().think().exponential().mean(), "35us");
  EXPECT_EQ(s->run().duration(), "2s");
  EXPECT_EQ(s->variant_size(), 0);
  EXPECT_EQ(s->published_size(), 0);
}

TEST(ResolveVariantTest, EmptyOverlayAndBaseGiveTheBase) {
  const ScenarioFile file = LoadGood();
  Scenario expected = file.scenario;
  expected.clear_variant();
  expected.clear_published();
  for (const char* name : {"", "base", "n2"}) {
    absl::StatusOr<Scenario> s = ResolveVariant(file, name, {});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(MessageDifferencer::Equals(*s, expected)) << name;
  }
}

TEST(ResolveVariantTest, UnknownVariant) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s = ResolveVariant(file, "n8", {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            std::string(kGoodFile) + ": unknown variant 'n8' (variants: n2, n4)");
}

TEST(ResolveVariantTest, OverridesApplyAfterTheOverlay) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s = ResolveVariant(
      file, "n4",
      {"workload.lockbench.threads=7", "run.duration=6.648s",
       "platform.lock_handoff.value=20ns", "workload.lockbench.threads=6"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->workload().lockbench().threads(), 6) << "later assignments win";
  EXPECT_EQ(s->platform().lock_handoff().value(), "20ns");
  EXPECT_EQ(s->run().duration(), "6.648s");
  absl::StatusOr<sim::Time> duration = TimeOf(s->run().duration());
  ASSERT_TRUE(duration.ok());
  EXPECT_EQ(duration->ps(), 6648000000000);
}

TEST(ResolveVariantTest, OverridesCanEditAVariantOverlay) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s =
      ResolveVariant(file, "n4", {"variant[1].overlay.workload.lockbench.threads=3"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->workload().lockbench().threads(), 3);
  s = ResolveVariant(file, "n2", {"variant[1].overlay.workload.lockbench.threads=3"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->workload().lockbench().threads(), 2) << "other variants unaffected";
}

TEST(ResolveVariantTest, BadOverrideFails) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s = ResolveVariant(file, "n4", {"run.duration=0s"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              StartsWith("--set 'run.duration=0s': field 'run.duration': "));
}

TEST(ResolveVariantTest, OverrideBreakingAFileRuleFails) {
  const ScenarioFile file = LoadGood();
  absl::StatusOr<Scenario> s = ResolveVariant(file, "n4", {"variant[1].name=n2"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("field 'variant[1].name': duplicate variant name 'n2'"));
}

TEST(ApplyFileOverridesTest, ChangesPublishedCellsOnly) {
  ScenarioFile file = LoadGood();
  ASSERT_TRUE(ApplyFileOverrides(&file, {"published[0].tolerance_pct=2",
                                         "workload.lockbench.threads=9"})
                  .ok());
  EXPECT_EQ(file.scenario.published(0).tolerance_pct(), 2);
  EXPECT_EQ(file.scenario.workload().lockbench().threads(), 2);
  EXPECT_TRUE(IsFileLevelOverride("published[0].role=CALIBRATION"));
  EXPECT_TRUE(IsFileLevelOverride("variant[0].name=x"));
  EXPECT_FALSE(IsFileLevelOverride("variants.name=x"));
  EXPECT_FALSE(IsFileLevelOverride("run.seed=1"));
}

// --- --set ----------------------------------------------------------------

// Applies `assignment` to the two-variant scenario; it must fail with
// InvalidArgument and leave the scenario unchanged. Returns the message.
std::string SetError(const std::string& assignment) {
  Scenario s = TwoVariants();
  const Scenario before = s;
  absl::Status status = ApplyOverride(&s, assignment);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << assignment;
  EXPECT_TRUE(MessageDifferencer::Equals(s, before)) << assignment;
  return std::string(status.message());
}

TEST(ApplyOverrideTest, SetsScalarsOfEveryKind) {
  Scenario s = TwoVariants();
  for (const char* a :
       {"run.duration=6.648s", "workload.lockbench.threads=8", "run.seed=42",
        "platform.lock_handoff.value=20ns", "stack.lock.kind=TICKET",
        "published[0].tolerance_pct=2.5", "published[0].role=CALIBRATION",
        "variant[1].overlay.workload.lockbench.threads=3", "name=has = sign",
        "platform.lock_handoff.source.kind=MEASURED"}) {
    EXPECT_TRUE(ApplyOverride(&s, a).ok()) << a << ": " << ApplyOverride(&s, a);
  }
  EXPECT_EQ(s.run().duration(), "6.648s");
  EXPECT_EQ(s.workload().lockbench().threads(), 8);
  EXPECT_EQ(s.run().seed(), 42u);
  EXPECT_EQ(s.platform().lock_handoff().value(), "20ns");
  EXPECT_EQ(s.platform().lock_handoff().source().kind(), Source::MEASURED);
  EXPECT_EQ(s.stack().lock().kind(), Stack::Lock::TICKET);
  EXPECT_TRUE(s.stack().lock().has_kind());
  EXPECT_EQ(s.published(0).tolerance_pct(), 2.5);
  EXPECT_EQ(s.published(0).role(), Published::CALIBRATION);
  EXPECT_EQ(s.variant(1).overlay().workload().lockbench().threads(), 3);
  EXPECT_EQ(s.name(), "has = sign");
}

TEST(ApplyOverrideTest, AStringInTheFilesQuotesReadsAsInTheFile) {
  Scenario s = TwoVariants();
  ASSERT_TRUE(ApplyOverride(&s, R"(platform.scheduler="fair")").ok());
  EXPECT_EQ(s.platform().scheduler(), "fair");
  ASSERT_TRUE(ApplyOverride(&s, R"(platform.scheduler='pinned')").ok());
  EXPECT_EQ(s.platform().scheduler(), "pinned");
  ASSERT_TRUE(ApplyOverride(&s, R"(name="say \"hi\"\t")").ok());
  EXPECT_EQ(s.name(), "say \"hi\"\t");
  ASSERT_TRUE(ApplyOverride(&s, R"(run.duration="2ms")").ok());
  EXPECT_EQ(s.run().duration(), "2ms");
  // Not a quoted string: taken as given.
  for (const char* a : {R"(name=")", R"(name="x)", R"(name=x")", R"(name="x')"}) {
    ASSERT_TRUE(ApplyOverride(&s, a).ok()) << a;
    EXPECT_EQ(s.name(), std::string(a).substr(5)) << a;
  }
  EXPECT_EQ(ApplyOverride(&s, R"(name="")").ok(), true);
  EXPECT_EQ(s.name(), "");
  // Quoted, but not as a scenario file would read it.
  EXPECT_THAT(SetError(R"(name="a"b")"), HasSubstr("unescaped \" inside"));
  EXPECT_THAT(SetError(R"(name="a\q")"), HasSubstr("does not read as in a scenario file"));
  EXPECT_THAT(SetError(R"(run.duration="2 parsecs")"), StartsWith("--set 'run.duration=\"2 parsecs\"': field 'run.duration': "));
}

// A path into another stack or another workload kind would clear the
// one set, and the parameters the user never named with it: refused at the
// path, naming the member the scenario has; the scenario is unchanged. A
// distribution's kind is one quantity written another way: the path names
// the new kind, which replaces the old.
TEST(ApplyOverrideTest, APathIntoAnotherStackOrWorkloadIsRefused) {
  Scenario s = TwoVariants();
  s.mutable_stack()->mutable_raid10()->set_home_socket(0);
  const Scenario before = s;
  const absl::Status st = ApplyOverride(&s, "stack.virtio_blk.qemu_pop_submit.value=13us");
  EXPECT_THAT(st.message(), HasSubstr("field 'stack.virtio_blk': the scenario's stack is 'raid10' (one of nvme, "
                                      "virtio_blk, virtio_blk_mq, vhost_net, raid10, raid1); a path into "
                                      "'virtio_blk' would replace it"));
  EXPECT_THAT(st.message(), HasSubstr("set a field of 'stack.raid10' instead"));
  EXPECT_TRUE(MessageDifferencer::Equals(s, before));
  EXPECT_THAT(SetError("workload.fio.job_file=x.fio"),
              HasSubstr("field 'workload.fio': the scenario's workload is 'lockbench'"));
  // The member the scenario has takes the path; an unset oneof takes any.
  EXPECT_TRUE(ApplyOverride(&s, "stack.raid10.plug.value=1us").ok());
  Scenario empty;
  EXPECT_TRUE(ApplyOverride(&empty, "stack.raid1.plug.value=1us").ok());
  EXPECT_TRUE(empty.stack().has_raid1());
  ASSERT_TRUE(ApplyOverride(&s, "workload.lockbench.think.constant.value=5us").ok());
  EXPECT_TRUE(s.workload().lockbench().think().has_constant());
  EXPECT_FALSE(s.workload().lockbench().think().has_exponential());
}

// Relative values: against the value the field holds, for numbers and
// durations; an absolute value with a sign stays absolute on a number.
TEST(ApplyOverrideTest, RelativeValues) {
  Scenario s = TwoVariants();
  s.mutable_platform()->mutable_lock_handoff()->set_value("50.93us");
  s.mutable_workload()->mutable_lockbench()->set_threads(4);
  ASSERT_TRUE(ApplyOverride(&s, "platform.lock_handoff.value=*0.5").ok());
  EXPECT_EQ(s.platform().lock_handoff().value(), "25465000ps");
  ASSERT_TRUE(ApplyOverride(&s, "platform.lock_handoff.value=+10%").ok());
  EXPECT_EQ(s.platform().lock_handoff().value(), "28011500ps");
  ASSERT_TRUE(ApplyOverride(&s, "platform.lock_handoff.value=-11.5us").ok());
  EXPECT_EQ(s.platform().lock_handoff().value(), "16511500ps");
  ASSERT_TRUE(ApplyOverride(&s, "platform.lock_handoff.value=+1ns").ok());
  EXPECT_EQ(s.platform().lock_handoff().value(), "16512500ps");
  ASSERT_TRUE(ApplyOverride(&s, "workload.lockbench.threads=*2.5").ok());
  EXPECT_EQ(s.workload().lockbench().threads(), 10);
  ASSERT_TRUE(ApplyOverride(&s, "workload.lockbench.threads=-50%").ok());
  EXPECT_EQ(s.workload().lockbench().threads(), 5);
  ASSERT_TRUE(ApplyOverride(&s, "published[0].tolerance_pct=*3").ok());
  ASSERT_TRUE(ApplyOverride(&s, "stack.raid10.home_socket=-1").ok());  // absolute
  EXPECT_EQ(s.stack().raid10().home_socket(), -1);
  // Bounds still hold, and what has no number refuses.
  EXPECT_THAT(SetError("workload.lockbench.threads=*0"), HasSubstr("must be between 1 and 4096, got 0"));
  EXPECT_THAT(SetError("run.duration=-1000s"), HasSubstr("is below zero"));
  EXPECT_THAT(SetError("run.duration=*-1"), HasSubstr("expected *F with F a finite number >= 0"));
  EXPECT_THAT(SetError("run.duration=+x%"), HasSubstr("expected +P% or -P%"));
  EXPECT_THAT(SetError("run.duration=-200%"), HasSubstr("takes more than the whole value"));
  EXPECT_THAT(SetError("platform.scheduler=*2"), HasSubstr("only a number or a duration takes"));
  EXPECT_THAT(SetError("platform.kvm.mmio_exit_user.value=*2"), HasSubstr("it holds none here"));
}

TEST(ApplyOverrideTest, UnknownFieldListsTheFields) {
  const std::string message = SetError("run.durashun=1s");
  EXPECT_THAT(message, StartsWith("--set 'run.durashun=1s': field 'run.durashun': "));
  EXPECT_THAT(message, HasSubstr("seed, warmup, duration, batches"));
  EXPECT_THAT(SetError("nope=1"), StartsWith("--set 'nope=1': field 'nope': "));
}

TEST(ApplyOverrideTest, PathMustEndAtAScalar) {
  const std::string message = SetError("platform.lock_handoff=20ns");
  EXPECT_THAT(message, StartsWith("--set 'platform.lock_handoff=20ns': "
                                  "field 'platform.lock_handoff': "));
  EXPECT_THAT(message, HasSubstr("not a scalar; set one of its fields: value, source"));
  EXPECT_THAT(SetError("run.seed.x=1"),
              HasSubstr("field 'run.seed': is a scalar, so it has no field 'x'"));
}

TEST(ApplyOverrideTest, BadValues) {
  EXPECT_THAT(SetError("workload.lockbench.threads=eight"),
              StartsWith("--set 'workload.lockbench.threads=eight': "
                         "field 'workload.lockbench.threads': expected a number of "
                         "type int32, got 'eight'"));
  EXPECT_THAT(SetError("workload.lockbench.threads=0"),
              HasSubstr("must be between 1 and 4096, got 0"));
  EXPECT_THAT(SetError("workload.lockbench.threads=2.5"), HasSubstr("expected a number"));
  EXPECT_THAT(SetError("workload.lockbench.threads=9999999999"),
              HasSubstr("expected a number"));
  EXPECT_THAT(SetError("run.seed=-1"), HasSubstr("type uint64"));
  EXPECT_THAT(SetError("run.duration=5"),
              HasSubstr("field 'run.duration': invalid duration \"5\": missing unit"));
  EXPECT_THAT(SetError("run.duration=-5s"), HasSubstr("below zero"));  // 5s less than its value
  EXPECT_THAT(SetError("run.duration=0s"), HasSubstr("must be greater than zero"));
  EXPECT_THAT(SetError("stack.lock.kind=SPIN"), HasSubstr("one of KIND_UNSPECIFIED, TICKET"));
  EXPECT_THAT(SetError("published[0].tolerance_pct=nan"), HasSubstr("finite"));
  EXPECT_THAT(SetError("published[0].value=x"), HasSubstr("type double"));
  EXPECT_THAT(SetError("run.duration"), HasSubstr("expected FIELD.PATH=VALUE"));
}

TEST(ApplyOverrideTest, BadIndex) {
  EXPECT_THAT(SetError("variant[2].name=x"),
              StartsWith("--set 'variant[2].name=x': field 'variant[2]': index 2 is "
                         "out of range (it has 2 elements)"));
  EXPECT_THAT(SetError("variant.name=x"),
              HasSubstr("field 'variant': is a repeated field; give an index"));
  EXPECT_THAT(SetError("run[0].seed=1"),
              HasSubstr("field 'run[0]': is not a repeated field"));
  EXPECT_THAT(SetError("variant[x].name=a"), HasSubstr("malformed index"));
  EXPECT_THAT(SetError("variant[-1].name=a"), HasSubstr("malformed index"));
  EXPECT_THAT(SetError("run..seed=1"), HasSubstr("is not a field name"));
}

TEST(ScalarKindAtTest, TellsDurationsIntegersRealsAndTheRest) {
  const Scenario s = TwoVariants();
  EXPECT_EQ(*ScalarKindAt(s, "platform.lock_handoff.value", "--fit"), ScalarKind::kDuration);
  EXPECT_EQ(*ScalarKindAt(s, "workload.lockbench.think.exponential.mean", "--fit"), ScalarKind::kDuration);
  EXPECT_EQ(*ScalarKindAt(s, "workload.lockbench.threads", "--fit"), ScalarKind::kInteger);
  EXPECT_EQ(*ScalarKindAt(s, "variant[1].overlay.workload.lockbench.threads", "--fit"), ScalarKind::kInteger);
  EXPECT_EQ(*ScalarKindAt(s, "published[0].tolerance_pct", "--fit"), ScalarKind::kReal);
  EXPECT_EQ(*ScalarKindAt(s, "stack.lock.kind", "--fit"), ScalarKind::kOther);
  EXPECT_EQ(*ScalarKindAt(s, "name", "--fit"), ScalarKind::kOther);
}

TEST(ScalarKindAtTest, RefusesWhatApplyOverrideRefusesNamingTheFlag) {
  const Scenario s = TwoVariants();
  absl::StatusOr<ScalarKind> k = ScalarKindAt(s, "run.durashun", "--fit");
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(k.status().message()), StartsWith("--fit 'run.durashun': field 'run.durashun': "));
  EXPECT_THAT(std::string(ScalarKindAt(s, "platform.lock_handoff", "--fit").status().message()),
              HasSubstr("not a scalar"));
  EXPECT_THAT(std::string(ScalarKindAt(s, "variant[9].name", "--fit").status().message()),
              HasSubstr("out of range"));
}

TEST(ApplyOverridesTest, ReportsEveryFailure) {
  Scenario s = TwoVariants();
  absl::Status status =
      ApplyOverrides(&s, {"run.seed=x", "run.batches=4", "platform.cpus=0"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> lines = absl::StrSplit(status.message(), '\n');
  ASSERT_THAT(lines, SizeIs(2));
  EXPECT_THAT(lines[0], StartsWith("--set 'run.seed=x'"));
  EXPECT_THAT(lines[1], StartsWith("--set 'platform.cpus=0'"));
  EXPECT_EQ(s.run().batches(), 4);
}

// --- Baselines ------------------------------------------------------------

TEST(BaselineTest, RoundTripsThroughText) {
  Baseline b;
  Baseline::Cell* cell = b.add_cell();
  cell->set_scenario("lockbench");
  cell->set_variant("n4");
  cell->set_metric("throughput_per_s");
  cell->set_modeled(0.1 + 0.2);
  b.add_cell()->set_metric("second");
  const std::string text = BaselineToText(b);
  EXPECT_EQ(text, BaselineToText(b));
  EXPECT_THAT(text, StartsWith("# proto-message: viosim.Baseline\n"));
  EXPECT_THAT(text, HasSubstr("\ncell {\n"));
  absl::StatusOr<Baseline> read = LoadBaselineFile(WriteTemp("baseline.textproto", text));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*read, b));
  EXPECT_EQ(read->cell(0).modeled(), 0.1 + 0.2) << "doubles read back exactly";
}

TEST(BaselineTest, ErrorsNameFileLineColumnAndField) {
  absl::StatusOr<Baseline> read = LoadBaselineFile(
      WriteTemp("bad-baseline.textproto", "cell {\n  modeled: high\n}\n"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(read.status().message()),
              StartsWith(At("bad-baseline.textproto", 2, 12, "cell[0].modeled")));
  EXPECT_EQ(LoadBaselineFile(::testing::TempDir() + "missing.textproto").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace viosim

namespace viosim {
namespace {

TEST(VariantMatrixTest, RowsTimesColumnsBecomeVariantsInOrder) {
  absl::StatusOr<ScenarioFile> f = ParseScenarioText("m.textproto", R"(
variant { name: "plain" }
matrix {
  row { name: "a" overlay { run { seed: 7 } } }
  row { name: "b" overlay { run { seed: 8 batches: 5 } } }
  column { name: "x" overlay { run { batches: 3 } } }
  column { name: "y" }
}
workload { lockbench { threads: 2 } }
published { variant: "b-x" metric: "lock_acquisitions_per_s" value: 1 role: PREDICTION tolerance_pct: 1 }
)");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(VariantNames(*f), (std::vector<std::string>{"plain", "a-x", "a-y", "b-x", "b-y"}));
  absl::StatusOr<Scenario> bx = ResolveVariant(*f, "b-x", {});
  ASSERT_TRUE(bx.ok()) << bx.status();
  EXPECT_EQ(bx->run().seed(), 8u);
  EXPECT_EQ(bx->run().batches(), 3) << "the column's set fields win";
  absl::StatusOr<Scenario> by = ResolveVariant(*f, "b-y", {});
  ASSERT_TRUE(by.ok());
  EXPECT_EQ(by->run().batches(), 5);
  EXPECT_FALSE(bx->has_matrix());
}

TEST(VariantMatrixTest, BadMatricesAreReportedWithThePlace) {
  absl::StatusOr<ScenarioFile> empty = ParseScenarioText("e.textproto", "matrix { row { name: \"a\" } }\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("e.textproto:1:1: field 'matrix'"));
  absl::StatusOr<ScenarioFile> dup = ParseScenarioText(
      "d.textproto", "matrix { row { name: \"a\" } row { name: \"a\" } column { name: \"x\" } }\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("matrix.row[1].name': duplicate name 'a'"));
  absl::StatusOr<ScenarioFile> clash = ParseScenarioText(
      "c.textproto", "variant { name: \"a-x\" }\nmatrix { row { name: \"a\" } column { name: \"x\" } }\n");
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(std::string(clash.status().message()), HasSubstr("duplicate variant name 'a-x'"));
}

}  // namespace
}  // namespace viosim
