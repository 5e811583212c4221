// What the output formats (format.cc, format_cells.cc, format_list.cc,
// format_sweep.cc) share beyond format.h: numbers, confidence half-widths
// and metric values as text, JSON and CSV. Defined in format.cc.
#ifndef VIOSIM_ANALYSIS_FORMAT_INTERNAL_H_
#define VIOSIM_ANALYSIS_FORMAT_INTERNAL_H_

#include <optional>
#include <string>

#include "analysis/json.h"
#include "sim/measurement.h"

namespace analysis {

std::string Sig(double v);
std::string Ci(const std::optional<double>& ci);
std::string Value(const sim::MetricEstimate& m);
void CiJson(const std::optional<double>& ci, JsonWriter& j);
std::string CiCsv(const std::optional<double>& ci);
std::optional<double> MeasuredValue(const sim::MetricEstimate& m);

}  // namespace analysis

#endif  // VIOSIM_ANALYSIS_FORMAT_INTERNAL_H_
