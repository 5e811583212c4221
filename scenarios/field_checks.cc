// The checks of single values against their field's unit and bounds
// options, and the walk that applies them to every field of a message,
// reporting each problem at the place the field was written.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "scenarios/checks.h"
#include "scenarios/input_file.h"
#include "scenarios/loader_internal.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/units.h"
#include "sim/time.h"

namespace viosim::internal {

using google::protobuf::Reflection;
using google::protobuf::TextFormat;

// ---------------------------------------------------------------------------
// Field options and the checks of single values

bool IsTimeField(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
         f->options().GetExtension(viosim::unit) == viosim::TIME;
}

std::string FieldNames(const Descriptor* d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i) names.push_back(d->field(i)->name());
  return absl::StrJoin(names, ", ");
}

std::string EnumNames(const EnumDescriptor* e, bool skip_zero) {
  std::vector<std::string> names;
  for (int i = 0; i < e->value_count(); ++i) {
    if (skip_zero && e->value(i)->number() == 0) continue;
    names.push_back(e->value(i)->name());
  }
  return absl::StrJoin(names, ", ");
}

std::string DescribeType(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return absl::StrCat("a ", f->message_type()->full_name(),
                          " message, written ", f->name(), " { ... }");
    case FieldDescriptor::CPPTYPE_ENUM:
      return absl::StrCat("one of ", EnumNames(f->enum_type(), false));
    case FieldDescriptor::CPPTYPE_STRING:
      return IsTimeField(f)
                 ? absl::StrCat("a quoted duration such as \"35us\" (units: ",
                                kDurationUnits, ")")
                 : std::string("a quoted string");
    case FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    default:
      return absl::StrCat("a number of type ", f->type_name());
  }
}

std::string CheckTimeText(const FieldDescriptor* f, absl::string_view text) {
  absl::StatusOr<sim::Time> t = ParseDuration(text);
  if (!t.ok()) return std::string(t.status().message());
  if (*t < sim::Time::Zero()) {
    return absl::StrCat("duration must not be negative, got \"", text, "\"");
  }
  if (*t == sim::Time::Zero() && !f->options().GetExtension(viosim::allow_zero)) {
    return absl::StrCat("duration must be greater than zero, got \"", text, "\"");
  }
  if (*t > kMaxSimulatedTime) {
    return absl::StrCat("duration must be at most ", FormatDurationForInput(kMaxSimulatedTime),
                        " (the most simulated time viosim runs), got \"", text, "\"");
  }
  return "";
}

std::string CheckNumber(const FieldDescriptor* f, double value,
                        absl::string_view shown) {
  if (!std::isfinite(value)) {
    return absl::StrCat("must be a finite number, got ", shown);
  }
  const auto& options = f->options();
  const bool has_min = options.HasExtension(viosim::min);
  const bool has_max = options.HasExtension(viosim::max);
  const double lo = options.GetExtension(viosim::min);
  const double hi = options.GetExtension(viosim::max);
  if ((has_min && value < lo) || (has_max && value > hi)) {
    if (has_min && has_max) {
      return absl::StrCat("must be between ", lo, " and ", hi, ", got ", shown);
    }
    return has_min ? absl::StrCat("must be at least ", lo, ", got ", shown)
                   : absl::StrCat("must be at most ", hi, ", got ", shown);
  }
  return "";
}

namespace {

// Empty if the value of the scalar field `f` in `m` (element `index` if
// repeated, else index is -1) is acceptable, else what is wrong.
std::string CheckStoredValue(const Message& m, const FieldDescriptor* f,
                             int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string v = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() == FieldDescriptor::TYPE_STRING) {
        if (std::string what = Utf8Problem(v); !what.empty()) return what;
      }
      return IsTimeField(f) ? CheckTimeText(f, v) : "";
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      const int32_t v = rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      return CheckNumber(f, v, absl::StrCat(v));
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
      return CheckNumber(f, static_cast<double>(v), absl::StrCat(v));
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t v = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      return CheckNumber(f, v, absl::StrCat(v));
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      return CheckNumber(f, static_cast<double>(v), absl::StrCat(v));
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      return CheckNumber(f, v, absl::StrCat(v));
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const float v = rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      return CheckNumber(f, v, absl::StrCat(v));
    }
    default:
      return "";
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Walking a message

std::string JoinPath(absl::string_view parent, absl::string_view name, int index) {
  std::string path = parent.empty() ? std::string(name) : absl::StrCat(parent, ".", name);
  if (index >= 0) absl::StrAppend(&path, "[", index, "]");
  return path;
}

Loc LocationIn(const ParseInfoTree* tree, const FieldDescriptor* f, int index,
               const Loc& fallback) {
  if (tree == nullptr) return fallback;
  const TextFormat::ParseLocation l = tree->GetLocation(f, index);
  if (l.line < 0) return fallback;
  return Loc{l.line, l.column};
}

const ParseInfoTree* NestedTree(const ParseInfoTree* tree,
                                const FieldDescriptor* f, int index) {
  return tree == nullptr ? nullptr : tree->GetTreeForNested(f, index);
}

namespace {

// A range bound as a number: seconds for a duration ("8us"), else the
// number itself ("2.3e9"); `duration` says which it was.
std::optional<double> RangeBound(const std::string& text, bool* duration) {
  if (absl::StatusOr<sim::Time> t = ParseDuration(text); t.ok()) {
    *duration = true;
    return t->ToSeconds();
  }
  double v = 0;
  if (absl::SimpleAtod(text, &v) && std::isfinite(v)) {
    *duration = false;
    return v;
  }
  return std::nullopt;
}

// The rules of an Uncertainty (scenario.proto) that bounds options cannot
// say: one spread, a reason, and a range's bounds in order.
void CheckUncertainty(const Uncertainty& u, const std::string& path, const Loc& here, Diagnostics* d) {
  if (u.spread_case() == Uncertainty::SPREAD_NOT_SET) {
    d->Add(here, path, "give one of relative_pct, factor or range");
  }
  if (u.reason().empty()) d->Add(here, path + ".reason", "an uncertainty needs its reason (what brackets the value)");
  if (!u.has_range()) return;
  bool lo_duration = false;
  bool hi_duration = false;
  const std::optional<double> lo = RangeBound(u.range().lo(), &lo_duration);
  const std::optional<double> hi = RangeBound(u.range().hi(), &hi_duration);
  if (!lo) d->Add(here, path + ".range.lo", absl::StrCat("'", u.range().lo(), "' is neither a duration nor a number"));
  if (!hi) d->Add(here, path + ".range.hi", absl::StrCat("'", u.range().hi(), "' is neither a duration nor a number"));
  if (!lo || !hi) return;
  if (lo_duration != hi_duration) {
    d->Add(here, path + ".range", "lo and hi must both be durations or both numbers");
  } else if (!(*lo < *hi)) {
    d->Add(here, path + ".range", absl::StrCat("lo (", u.range().lo(), ") must be below hi (", u.range().hi(), ")"));
  } else if (*lo < 0 || (u.range().log_scale() && *lo <= 0)) {
    d->Add(here, path + ".range.lo", u.range().log_scale() ? "must be above zero on a log scale" : "must not be negative");
  }
}

}  // namespace

void CheckValues(const Message& m, const ParseInfoTree* tree,
                 const std::string& path, const Loc& here, Diagnostics* d) {
  const Reflection* r = m.GetReflection();
  if (const auto* u = google::protobuf::DynamicCastToGenerated<Uncertainty>(&m)) {
    CheckUncertainty(*u, path, here, d);
  }
  if (const auto* s = google::protobuf::DynamicCastToGenerated<Source>(&m);
      s != nullptr && s->has_uncertainty() && (s->kind() == Source::FITTED || s->kind() == Source::DEFINED)) {
    const FieldDescriptor* uf = Source::descriptor()->FindFieldByNumber(Source::kUncertaintyFieldNumber);
    d->Add(LocationIn(tree, uf, -1, here), JoinPath(path, "uncertainty", -1),
           s->kind() == Source::FITTED ? "a FITTED value is refitted at every point of a band, not drawn: remove its uncertainty"
                                       : "a DEFINED value is a parameter of the experiment, exact: remove its uncertainty");
  }
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < count; ++i) {
      const int index = f->is_repeated() ? i : -1;
      const std::string field_path = JoinPath(path, f->name(), index);
      const Loc loc = LocationIn(tree, f, index, here);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& sub =
            f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
        CheckValues(sub, NestedTree(tree, f, index), field_path, loc, d);
        continue;
      }
      const std::string what = CheckStoredValue(m, f, index);
      if (!what.empty()) d->Add(loc, field_path, what);
    }
  }
}

}  // namespace viosim::internal
