// `viosim list`: one scenario's variants, metrics and published values, or
// without a scenario the index of scenario files, stack parts and
// schedulers.
#include "analysis/format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/format_internal.h"
#include "analysis/json.h"
#include "models/cpu/sched.h"
#include "scenarios/stack.h"

namespace analysis {

std::string FormatList(const viosim::ScenarioFile& file, const std::vector<std::string>& metrics,
                       const std::vector<double>& references, Format f) {
  const viosim::Scenario& s = file.scenario;
  const std::vector<std::string> variants = viosim::VariantNames(file);
  switch (f) {
    case Format::kText: {
      std::string out = absl::StrCat("scenario ", s.name(), s.description().empty() ? "" : ": ", s.description(),
                                     "\n\nvariants:\n");
      std::vector<std::vector<std::string>> rows;
      for (const std::string& v : variants) rows.push_back({v, viosim::VariantDescription(file, v)});
      absl::StrAppend(&out, Table(rows, "  ", "ll"), "\nmetrics:\n");
      for (const std::string& m : metrics) absl::StrAppend(&out, "  ", m, "\n");
      absl::StrAppend(&out, "\npublished:\n");
      std::vector<std::vector<std::string>> prow = {
          {"variant", "metric", "value", "tolerance", "role", "from", "source"}};
      for (int i = 0; i < s.published_size(); ++i) {
        const viosim::Published& p = s.published(i);
        prow.push_back({p.variant(), p.metric(), Sig(references[i]), absl::StrFormat("%g%%", p.tolerance_pct()),
                        p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction",
                        p.has_value() ? "typed in" : viosim::Published::Analytic_Name(p.analytic()),
                        p.source()});
      }
      absl::StrAppend(&out, Table(prow, "  ", "llrrlll"));
      return out;
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenario").String(s.name()).Key("variants").BeginArray();
      for (const std::string& v : variants) {
        j.BeginObject().Key("name").String(v).Key("description").String(viosim::VariantDescription(file, v));
        j.EndObject();
      }
      j.EndArray().Key("metrics").BeginArray();
      for (const std::string& m : metrics) j.String(m);
      j.EndArray().Key("published").BeginArray();
      for (int i = 0; i < s.published_size(); ++i) {
        const viosim::Published& p = s.published(i);
        j.BeginObject().Key("variant").String(p.variant()).Key("metric").String(p.metric());
        j.Key("value").Number(references[i]);
        if (p.has_analytic()) j.Key("analytic").String(viosim::Published::Analytic_Name(p.analytic()));
        j.Key("role").String(p.role() == viosim::Published::CALIBRATION ? "calibration" : "prediction");
        j.Key("tolerance_pct").Number(p.tolerance_pct()).Key("source").String(p.source()).EndObject();
      }
      j.EndArray().EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "kind,name,detail\n";
      for (const std::string& v : variants) {
        absl::StrAppend(&out, "variant,", CsvField(v), ",", CsvField(viosim::VariantDescription(file, v)), "\n");
      }
      for (const std::string& m : metrics) absl::StrAppend(&out, "metric,", CsvField(m), ",\n");
      return out;
    }
  }
  return "";
}

std::string FormatScenarioIndex(const std::vector<std::string>& paths,
                                const std::vector<viosim::ScenarioFile>& files, Format f) {
  switch (f) {
    case Format::kText: {
      std::vector<std::vector<std::string>> rows = {{"file", "scenario", "variants", "published", "description"}};
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        rows.push_back({paths[i], s.name(), absl::StrCat(viosim::VariantNames(files[i]).size()),
                        absl::StrCat(s.published_size()), s.description()});
      }
      std::vector<std::vector<std::string>> parts = {{"stack part", "CPUs", "what it is", "metrics beyond fio's"}};
      for (const viosim::StackPart& p : viosim::StackParts()) {
        if (!p.on_stack) continue;  // lockbench, which a scenario names by its workload
        parts.push_back({absl::StrCat("stack { ", p.name, " {...} }"), p.vcpus ? "vCPUs" : "host CPUs", p.summary,
                         absl::StrJoin(p.metric_names(), " ")});
      }
      return absl::StrCat(Table(rows, "", "llrrl"), "\nRegistered stack parts (a scenario sets one):\n",
                          Table(parts, "", "llll"), "Schedulers (platform.scheduler): ",
                          absl::StrJoin(models::SchedulerNames(), ", "),
                          "\n\n`viosim list FILE` shows one scenario's variants, metrics and published values.\n");
    }
    case Format::kJson: {
      JsonWriter j;
      j.BeginObject().Key("scenarios").BeginArray();
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        j.BeginObject().Key("file").String(paths[i]).Key("scenario").String(s.name());
        j.Key("variants").Number(static_cast<double>(viosim::VariantNames(files[i]).size()));
        j.Key("published").Number(s.published_size()).Key("description").String(s.description()).EndObject();
      }
      j.EndArray().EndObject();
      return j.str();
    }
    case Format::kCsv: {
      std::string out = "file,scenario,variants,published,description\n";
      for (size_t i = 0; i < files.size(); ++i) {
        const viosim::Scenario& s = files[i].scenario;
        absl::StrAppend(&out, CsvField(paths[i]), ",", CsvField(s.name()), ",",
                        viosim::VariantNames(files[i]).size(), ",", s.published_size(), ",",
                        CsvField(s.description()), "\n");
      }
      return out;
    }
  }
  return "";
}

}  // namespace analysis
