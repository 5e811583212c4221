// Loading: a scenario or baseline file read, parsed and checked, and a
// baseline written back as text. The rest of loader.h is defined in
// variants.cc, field_path.cc (--set) and text_errors.cc (its test hook);
// what the loader's files share is in loader_internal.h.
#include "scenarios/loader.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"
#include "scenarios/input_file.h"
#include "scenarios/loader_internal.h"
#include "scenarios/scenario.pb.h"

namespace viosim {

using google::protobuf::TextFormat;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;
using internal::CheckScenarioRules;
using internal::CheckValues;
using internal::Diagnostics;
using internal::ExpandMatrix;
using internal::Loc;
using internal::LocationIn;
using internal::ParseMessageText;

namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     absl::string_view what) {
  return ReadInputFile(path, what);
}

}  // namespace

absl::StatusOr<ScenarioFile> LoadScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, "scenario file");
  if (!text.ok()) return text.status();
  return ParseScenarioText(path, *text);
}

absl::StatusOr<ScenarioFile> ParseScenarioText(const std::string& path,
                                               const std::string& text) {
  ScenarioFile file;
  file.path = path;
  file.text = text;
  auto tree = std::make_shared<ParseInfoTree>();
  Diagnostics d(path);
  const bool complete = ParseMessageText(text, &file.scenario, tree.get(), &d);
  // Values are checked even after a parse error (those read are complete);
  // the cross-field rules only on a complete message.
  CheckValues(file.scenario, tree.get(), "", Loc{}, &d);
  // A file that sets nothing (empty, or only comments) has nothing to run;
  // it is most likely the wrong file, or one not yet written.
  if (complete && d.empty() && file.scenario.ByteSizeLong() == 0) {
    d.Add(Loc{0, 0}, "workload",
          "the file sets no field (it is empty or holds only comments): a scenario needs a workload, or a "
          "stack for `viosim fio --stack`");
  }
  if (complete) {
    const Loc matrix_at = LocationIn(
        tree.get(), Scenario::descriptor()->FindFieldByNumber(Scenario::kMatrixFieldNumber), -1, Loc{});
    ExpandMatrix(&file.scenario, tree.get(), &d);
    CheckScenarioRules(file.scenario, tree.get(), &d, matrix_at);
  }
  if (!d.empty()) return d.ToStatus();
  file.locations = std::move(tree);
  return file;
}

absl::StatusOr<Baseline> LoadBaselineFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, "baseline file");
  if (!text.ok()) return text.status();
  Baseline baseline;
  Diagnostics d(path);
  ParseInfoTree tree;
  ParseMessageText(*text, &baseline, &tree, &d);
  CheckValues(baseline, &tree, "", Loc{}, &d);
  if (!d.empty()) return d.ToStatus();
  return baseline;
}

std::string BaselineToText(const Baseline& baseline) {
  TextFormat::Printer printer;
  std::string text =
      "# proto-message: viosim.Baseline\n"
      "# Modeled values `viosim gate` compares with. Written by\n"
      "# `viosim gate --update-baseline`; commit it with the change that moved them.\n";
  std::string body;
  printer.PrintToString(baseline, &body);
  return text + body;
}

}  // namespace viosim
