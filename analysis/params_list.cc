#include "analysis/params_list.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "analysis/bands.h"
#include "analysis/cost_fields.h"
#include "analysis/json.h"
#include "analysis/reads.h"
#include "google/protobuf/text_format.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The scalar at `path` ("a.b[2].c") in `m`, as text: strings as they are,
// other scalars as the text format writes them.
std::string ValueAt(const Message& root, const std::string& path) {
  const Message* m = &root;
  std::vector<std::string> steps = absl::StrSplit(path, '.');
  for (size_t k = 0; k < steps.size(); ++k) {
    std::string name = steps[k];
    int index = -1;
    if (const size_t open = name.find('['); open != std::string::npos) {
      if (!absl::SimpleAtoi(name.substr(open + 1, name.size() - open - 2), &index)) return "?";
      name = name.substr(0, open);
    }
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(name);
    if (f == nullptr) return "?";
    const google::protobuf::Reflection* r = m->GetReflection();
    if (k + 1 < steps.size()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return "?";
      m = index >= 0 ? &r->GetRepeatedMessage(*m, f, index) : &r->GetMessage(*m, f);
      continue;
    }
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      return index >= 0 ? r->GetRepeatedString(*m, f, index) : r->GetString(*m, f);
    }
    std::string out;
    google::protobuf::TextFormat::PrintFieldValueToString(*m, f, index, &out);
    return out;
  }
  return "?";
}

// A band bound: the value times `factor`, in the field's unit.
std::string Scaled(const CostField& f, double factor) {
  if (f.value == CostField::Value::kDuration) {
    return sim::FormatTime(sim::Time::Picos(static_cast<int64_t>(static_cast<double>(f.duration.ps()) * factor)));
  }
  return FormatNumber(f.number * factor);
}

}  // namespace

absl::StatusOr<std::vector<VariantParams>> ListParams(const viosim::ScenarioFile& file,
                                                      const std::vector<std::string>& variants,
                                                      const std::vector<std::string>& overrides) {
  std::vector<VariantParams> out;
  for (const std::string& v : variants.empty() ? viosim::VariantNames(file) : variants) {
    absl::StatusOr<viosim::ReadSet> reads = ReadsOf(file, v, overrides);
    if (!reads.ok()) return reads.status();
    absl::StatusOr<viosim::Scenario> resolved = viosim::ResolveVariant(file, v, overrides);
    if (!resolved.ok()) return resolved.status();
    std::map<std::string, CostField> costed;
    for (CostField& f : CostFields(*resolved)) costed.emplace(f.path, std::move(f));
    VariantParams vp;
    vp.variant = v;
    for (const std::string& path : reads->paths()) {
      ParamRow row;
      row.path = path;
      row.value = ValueAt(*resolved, path);
      auto it = costed.find(path);
      if (it == costed.end() && row.value.empty()) {
        row.value = "(default)";
        row.kind = "DEFAULT";
        row.source = "not set: the profile's or the model's own value (models/), which a --set replaces";
      } else if (it == costed.end()) {
        row.kind = "DEFINED";
        row.source = "no Source: a setting of the experiment or the model";
      } else {
        const CostField& f = it->second;
        row.kind = absl::AsciiStrToUpper(SourceKindName(f.kind));
        if (f.kind == viosim::Source::KIND_UNSPECIFIED) row.kind = "ESTIMATED";
        row.source = f.ref;
        if (f.kind == viosim::Source::FITTED) {
          row.band_note = "refitted at each band point";
        } else {
          absl::StatusOr<std::optional<UncertainField>> u = UncertaintyOf(*resolved, f);
          if (!u.ok()) return u.status();
          if (*u) {
            row.band_lo = Scaled(f, (*u)->lo_factor);
            row.band_hi = Scaled(f, (*u)->hi_factor);
            row.band_note = (*u)->origin;
          } else {
            row.band_note = f.kind == viosim::Source::DEFINED ? "exact" : "zero: stays zero";
          }
        }
      }
      vp.rows.push_back(std::move(row));
    }
    out.push_back(std::move(vp));
  }
  return out;
}

std::string FormatParams(const viosim::ScenarioFile& file, const std::vector<VariantParams>& params, Format format) {
  const std::string& name = file.scenario.name();
  if (format == Format::kJson) {
    JsonWriter w;
    w.BeginObject().Key("scenario").String(name).Key("variants").BeginArray();
    for (const VariantParams& vp : params) {
      w.BeginObject().Key("name").String(vp.variant).Key("params").BeginArray();
      for (const ParamRow& r : vp.rows) {
        w.BeginObject().Key("path").String(r.path).Key("value").String(r.value).Key("kind").String(r.kind);
        w.Key("source").String(r.source).Key("band").BeginObject();
        w.Key("lo").String(r.band_lo).Key("hi").String(r.band_hi).Key("note").String(r.band_note).EndObject();
        w.EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndArray().EndObject();
    return w.str();
  }
  if (format == Format::kCsv) {
    auto csv = [](const std::string& s) {
      return s.find_first_of(",\"\n") == std::string::npos ? s
                                                           : absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}}), "\"");
    };
    std::string out = "scenario,variant,path,value,kind,band_lo,band_hi,band_note,source\n";
    for (const VariantParams& vp : params) {
      for (const ParamRow& r : vp.rows) {
        absl::StrAppend(&out, csv(name), ",", csv(vp.variant), ",", csv(r.path), ",", csv(r.value), ",", r.kind, ",",
                        csv(r.band_lo), ",", csv(r.band_hi), ",", csv(r.band_note), ",", csv(r.source), "\n");
      }
    }
    return out;
  }
  std::string out = absl::StrCat("scenario ", name, " (", file.path, "): the parameters each variant reads\n");
  for (const VariantParams& vp : params) {
    size_t width = 4;
    for (const ParamRow& r : vp.rows) width = std::max(width, r.path.size());
    absl::StrAppend(&out, "\n== variant ", vp.variant, ": ", vp.rows.size(), " parameters\n");
    absl::StrAppend(&out, absl::StrFormat("  %-*s  %-14s  %-9s  %-26s  %s\n", static_cast<int>(width), "path", "value",
                                          "kind", "band", "source"));
    for (const ParamRow& r : vp.rows) {
      std::string band = r.band_lo.empty() ? r.band_note : absl::StrCat(r.band_lo, "..", r.band_hi);
      std::string source = r.source;
      if (source.size() > 90) source = absl::StrCat(source.substr(0, 87), "...");
      absl::StrAppend(&out, absl::StrFormat("  %-*s  %-14s  %-9s  %-26s  %s\n", static_cast<int>(width), r.path,
                                            r.value, r.kind, band, source));
    }
  }
  return out;
}

}  // namespace analysis
