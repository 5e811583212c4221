// Every FITTED cost of the reproduced cases is still the fit: rerunning
// `viosim calibrate` on today's model lands next to the value the scenario
// carries. A model change that moves a calibration cell fails here until
// the cost is refitted (and its source text updated), instead of leaving a
// stale number that the gate's tolerance would still let through.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/calibrate.h"
#include "analysis/runner.h"
#include "gtest/gtest.h"
#include "scenarios/loader.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

struct Fit {
  const char* scenario;
  const char* field;  // a duration field (a Cost's value), or a count
  const char* cell;
  const char* range;
  std::string (*carried)(const viosim::Scenario&);  // the field's value in the file, as --set takes it
};

// A field's value in seconds (a duration) or as the number it is.
double ValueOf(const std::string& text) {
  absl::StatusOr<sim::Time> t = viosim::ParseDuration(text);
  return t.ok() ? t->ToSeconds() : std::stod(text);
}

// The fits the scenario files describe in their CALIBRATION comments.
const Fit kFits[] = {
    {"scenarios/virtio_blk_kick_lock.textproto", "platform.kvm.mmio_exit_user.value", "before/iops", "1us,80us",
     [](const viosim::Scenario& s) { return s.platform().kvm().mmio_exit_user().value(); }},
    {"scenarios/virtio_blk_poll.textproto", "stack.virtio_blk_mq.host_irq.value", "randread-4k-hipri0/iops",
     "2us,16us",
     [](const viosim::Scenario& s) { return s.stack().virtio_blk_mq().host_irq().value(); }},
    {"scenarios/raid10_unplug.textproto", "stack.raid10.lock_word_transfers", "before/write_iops", "1,10",
     [](const viosim::Scenario& s) { return absl::StrCat(s.stack().raid10().lock_word_transfers()); }},
};

TEST(CalibrationCurrentTest, EveryFittedCostIsStillTheFit) {
  for (const Fit& f : kFits) {
    SCOPED_TRACE(f.field);
    absl::StatusOr<viosim::ScenarioFile> file = viosim::LoadScenarioFile(f.scenario);
    ASSERT_TRUE(file.ok()) << file.status();
    CalibrateSpec spec;
    spec.field = f.field;
    spec.tolerance_pct = 0.1;
    ASSERT_TRUE(ParseCellAndRange(f.cell, f.range, &spec).ok());
    absl::StatusOr<Calibration> c = Calibrate(*file, spec, RunRequest{});
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ(c->search.outcome, BisectionOutcome::kFitted);
    const std::string& fitted = c->values[static_cast<size_t>(c->search.best)];
    // The search stops within 0.1% of the cell; the cost moves the metric
    // less than one for one, so 2% of the cost is the same fit.
    EXPECT_NEAR(ValueOf(fitted) / ValueOf(f.carried(file->scenario)), 1.0, 0.02)
        << "refit " << f.field << ": the fit is now " << fitted << ", the scenario has " << f.carried(file->scenario);
  }
}

}  // namespace
}  // namespace analysis
