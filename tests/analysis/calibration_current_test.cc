// Every FITTED value of every scenario file is still the fit: rerunning
// `viosim calibrate` on today's model lands next to the value the scenario
// carries. The fits are found in the files themselves (every Source of kind
// FITTED, with the cell and range its `fit` names), so a new fit cannot be
// left out. "Next to" is as tight as the gate: the band on the value is the
// cell's drift tolerance divided by the metric's elasticity to the value, so
// a value that the band lets through moves its cell no more than the gate
// lets a cell move.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis/calibrate.h"
#include "analysis/gate.h"
#include "analysis/runner.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

struct FoundFit {
  std::string scenario;  // the file
  std::string source;    // where the Source sits, for messages
  viosim::Source::Fit fit;
};

// Every FITTED Source under `m` (at field path `path`), with each of its
// fits' field made explicit (a Cost's own value when not named).
void FindFits(const Message& m, const std::string& path, const std::string& file, std::vector<FoundFit>* out,
              std::vector<std::string>* without_fit) {
  if (m.GetDescriptor()->full_name() == "viosim.Source") {
    const auto& s = static_cast<const viosim::Source&>(m);
    if (s.kind() != viosim::Source::FITTED) return;
    if (s.fit().empty()) without_fit->push_back(absl::StrCat(file, ": ", path));
    const std::string parent = path.substr(0, path.rfind('.'));
    for (viosim::Source::Fit f : s.fit()) {
      if (f.field().empty()) f.set_field(absl::StrCat(parent, ".value"));
      out->push_back({file, path, f});
    }
    return;
  }
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* fd : fields) {
    if (fd->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || fd->is_repeated()) continue;
    // Variants and the matrix are overlays of the base: fits live in the base.
    if (fd->name() == "variant" || fd->name() == "matrix") continue;
    FindFits(m.GetReflection()->GetMessage(m, fd), path.empty() ? fd->name() : absl::StrCat(path, ".", fd->name()),
             file, out, without_fit);
  }
}

// The scalar at `path` (a --set path) as a number: seconds for a duration.
absl::StatusOr<double> NumberAt(const viosim::Scenario& s, const std::string& path) {
  const Message* m = &s;
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* fd = m->GetDescriptor()->FindFieldByName(parts[i]);
    if (fd == nullptr || fd->is_repeated()) return absl::NotFoundError(absl::StrCat("no field ", path));
    if (i + 1 < parts.size()) {
      m = &m->GetReflection()->GetMessage(*m, fd);
      continue;
    }
    switch (fd->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        absl::StatusOr<sim::Time> t = viosim::ParseDuration(m->GetReflection()->GetString(*m, fd));
        if (!t.ok()) return t.status();
        return t->ToSeconds();
      }
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return m->GetReflection()->GetDouble(*m, fd);
      default:
        return absl::InvalidArgumentError(absl::StrCat(path, ": not a duration or a real"));
    }
  }
  return absl::NotFoundError(path);
}

// The value as --set takes it: picoseconds for a duration, else the number.
std::string SetValue(const viosim::Scenario& s, const std::string& path, double x) {
  absl::StatusOr<viosim::ScalarKind> kind = viosim::ScalarKindAt(s, path, "--set");
  if (kind.ok() && *kind == viosim::ScalarKind::kDuration) return absl::StrCat(std::llround(x * 1e12), "ps");
  return absl::StrFormat("%.9g", x);
}

std::vector<FoundFit> AllFits(std::vector<std::string>* without_fit) {
  std::vector<FoundFit> fits;
  absl::StatusOr<std::vector<std::string>> files = ScenarioFiles("scenarios");
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok()) return fits;
  for (const std::string& path : *files) {
    absl::StatusOr<viosim::ScenarioFile> f = viosim::LoadScenarioFile(path);
    EXPECT_TRUE(f.ok()) << f.status();
    if (f.ok()) FindFits(f->scenario, "", path, &fits, without_fit);
  }
  return fits;
}

TEST(CalibrationCurrentTest, EveryFittedValueNamesItsCell) {
  std::vector<std::string> without_fit;
  const std::vector<FoundFit> fits = AllFits(&without_fit);
  for (const std::string& w : without_fit) ADD_FAILURE() << w << ": FITTED without a `fit` naming its cell";
  // The reproduced cases' fits, at least: a file that lost them is caught.
  EXPECT_GE(fits.size(), 7u);
}

TEST(CalibrationCurrentTest, EveryFittedValueIsStillTheFit) {
  std::vector<std::string> without_fit;
  for (const FoundFit& f : AllFits(&without_fit)) {
    SCOPED_TRACE(absl::StrCat(f.scenario, ": ", f.fit.field(), " to ", f.fit.cell()));
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(f.scenario);
    ASSERT_TRUE(file.ok()) << file.status();
    CalibrateSpec spec;
    spec.field = f.fit.field();
    spec.tolerance_pct = 0.1;
    ASSERT_TRUE(ParseCellAndRange(f.fit.cell(), f.fit.range(), &spec).ok());
    absl::StatusOr<Calibration> c = Calibrate(*file, spec, RunRequest{});
    ASSERT_TRUE(c.ok()) << c.status();
    // A metric that moves in steps (whole segments, whole requests) may not
    // take the cell's exact value anywhere: the search then ends at the
    // step, at its resolution, and that value is the fit.
    ASSERT_TRUE(c->search.outcome == BisectionOutcome::kFitted ||
                (c->search.outcome == BisectionOutcome::kNotConverged && c->search.at_resolution))
        << "the search did not bracket the cell or did not converge";
    const BisectionStep& best = c->search.steps[static_cast<size_t>(c->search.best)];
    absl::StatusOr<double> carried = NumberAt(file->scenario, spec.field);
    ASSERT_TRUE(carried.ok()) << carried.status();

    // The metric's elasticity to the value, by a 10% step each way around
    // the carried value.
    std::vector<double> at;
    for (double k : {0.9, 1.1}) {
      RunRequest req;
      req.overrides = {absl::StrCat(spec.field, "=", SetValue(file->scenario, spec.field, *carried * k))};
      absl::StatusOr<std::vector<viosim::VariantResult>> r = RunVariants(*file, {spec.variant}, req);
      ASSERT_TRUE(r.ok()) << r.status();
      for (const sim::MetricEstimate& e : (*r)[0].metrics) {
        if (e.name == spec.metric) at.push_back(e.value);
      }
    }
    ASSERT_EQ(at.size(), 2u);
    const double elasticity = std::log(at[1] / at[0]) / std::log(1.1 / 0.9);
    ASSERT_GT(std::fabs(elasticity), 0.01) << "the cell hardly depends on the value: nothing was fitted";
    Cell cell;
    cell.modeled = best.eval.value;
    cell.ci95 = best.eval.ci95;
    const double band_pct = DriftTolerancePct(cell) / std::fabs(elasticity);
    const std::string& fitted = c->values[static_cast<size_t>(c->search.best)];
    double now = 0;
    if (absl::StatusOr<sim::Time> t = viosim::ParseDuration(fitted); t.ok()) {
      now = t->ToSeconds();
    } else {
      ASSERT_TRUE(absl::SimpleAtod(fitted, &now)) << fitted;
    }
    std::printf("%s to %s: carried %s, fit %s (%+.2f%%), elasticity %.3f, band %.2f%%\n", spec.field.c_str(),
                f.fit.cell().c_str(), SetValue(file->scenario, spec.field, *carried).c_str(), fitted.c_str(),
                100 * (now / *carried - 1), elasticity, band_pct);
    EXPECT_LE(100 * std::fabs(now / *carried - 1), band_pct)
        << "refit " << spec.field << ": the fit is now " << fitted
        << ", the scenario has " << SetValue(file->scenario, spec.field, *carried) << " (elasticity " << elasticity
        << ", band " << band_pct << "%)";
  }
}

}  // namespace
}  // namespace analysis
