#include "scenarios/loader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "scenarios/builder.h"
#include "scenarios/checks.h"
#include "scenarios/input_file.h"
#include "scenarios/units.h"
#include "sim/time.h"

namespace viosim {

const char kBaseVariant[] = "base";

namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

// ---------------------------------------------------------------------------
// Diagnostics

// A place in the text, 0-based as protobuf reports it; line < 0 if unknown.
struct Loc {
  int line = -1;
  int column = -1;

  bool known() const { return line >= 0; }
};

bool Before(const Loc& a, const Loc& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

// Collects error messages about one input and turns them into a Status.
class Diagnostics {
 public:
  // `where` starts every message: a file name, or a file name with context.
  explicit Diagnostics(std::string where) : where_(std::move(where)) {}

  // Records "WHERE:LINE:COL: field 'FIELD': WHAT"; the place is left out if
  // `loc` is unknown and the field part if `field` is empty.
  void Add(const Loc& loc, absl::string_view field, absl::string_view what) {
    std::string text = where_;
    if (loc.known()) absl::StrAppend(&text, ":", loc.line + 1, ":", loc.column + 1);
    if (!field.empty()) absl::StrAppend(&text, ": field '", field, "'");
    absl::StrAppend(&text, ": ", what);
    if (!seen_.insert(text).second) return;
    entries_.push_back({loc, std::move(text)});
  }

  bool empty() const { return entries_.empty(); }

  // OK if nothing was recorded; otherwise InvalidArgument with one message
  // per line, in the order of their places in the text (messages without a
  // place last, in the order recorded).
  absl::Status ToStatus() const {
    if (entries_.empty()) return absl::OkStatus();
    std::vector<Entry> sorted = entries_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Entry& a, const Entry& b) {
                       if (a.loc.known() != b.loc.known()) return a.loc.known();
                       return a.loc.known() && Before(a.loc, b.loc);
                     });
    std::vector<std::string> lines;
    lines.reserve(sorted.size());
    for (const Entry& e : sorted) lines.push_back(e.text);
    return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
  }

 private:
  struct Entry {
    Loc loc;
    std::string text;
  };

  std::string where_;
  std::vector<Entry> entries_;
  absl::flat_hash_set<std::string> seen_;  // the texts of entries_
};

// Joins error messages (each possibly several lines) into one status.
absl::Status JoinErrors(const std::vector<std::string>& messages) {
  if (messages.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
}

// ---------------------------------------------------------------------------
// Field options and the checks of single values

bool IsTimeField(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
         f->options().GetExtension(viosim::unit) == viosim::TIME;
}

// "cpus, lock_handoff, ..." in declaration order.
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

// What a value of field `f` looks like, for hints in messages.
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

// Empty if `text` is acceptable for the TIME field `f`, else what is wrong.
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

// Empty if `value` (written `shown`) is acceptable for the numeric field
// `f`: finite and within the field's (min) and (max), if any.
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

// ---------------------------------------------------------------------------
// Walking a message

// "parent.name" or "parent.name[3]".
std::string JoinPath(absl::string_view parent, absl::string_view name, int index) {
  std::string path = parent.empty() ? std::string(name) : absl::StrCat(parent, ".", name);
  if (index >= 0) absl::StrAppend(&path, "[", index, "]");
  return path;
}

// Where `f` (element `index`, -1 if singular) was written, or `fallback`.
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

// Checks every set field of `m` (at `path`, written at `here`) and of its
// sub-messages against the field's unit and bounds options.
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

std::vector<std::string> VariantNamesOf(const Scenario& s) {
  std::vector<std::string> names;
  for (const Variant& v : s.variant()) names.push_back(v.name());
  if (names.empty()) names.push_back(kBaseVariant);
  return names;
}

// Turns `matrix` into variants ("<row>-<column>", the row's overlay merged
// with the column's) appended after the listed ones, then clears it. Axis
// names must be non-empty and unique; overlays may not nest variants,
// published cells or matrices (CheckScenarioRules checks the first two on
// the generated variants).
void ExpandMatrix(Scenario* s, const ParseInfoTree* tree, Diagnostics* d) {
  if (!s->has_matrix()) return;
  const FieldDescriptor* matrix_f = Scenario::descriptor()->FindFieldByNumber(Scenario::kMatrixFieldNumber);
  const Loc where = LocationIn(tree, matrix_f, -1, Loc{});
  const VariantMatrix& m = s->matrix();
  bool ok = true;
  for (const auto* axis : {&m.row(), &m.column()}) {
    const std::string which = axis == &m.row() ? "matrix.row" : "matrix.column";
    absl::flat_hash_set<std::string> seen;
    for (int i = 0; i < axis->size(); ++i) {
      const VariantMatrix::Axis& a = axis->Get(i);
      const std::string path = absl::StrCat(which, "[", i, "]");
      if (a.name().empty()) {
        d->Add(where, path + ".name", "a matrix row or column needs a non-empty name");
        ok = false;
      } else if (!seen.insert(a.name()).second) {
        d->Add(where, path + ".name", absl::StrCat("duplicate name '", a.name(), "'"));
        ok = false;
      }
      if (a.overlay().has_matrix()) {
        d->Add(where, path + ".overlay.matrix", "an overlay may not contain a matrix");
        ok = false;
      }
    }
  }
  if (m.row_size() == 0 || m.column_size() == 0) {
    d->Add(where, "matrix", "a matrix needs at least one row and one column");
    ok = false;
  } else if (const int64_t made = int64_t{m.row_size()} * m.column_size(); s->variant_size() + made > kMaxVariants) {
    d->Add(where, "matrix",
           absl::StrCat("the matrix makes ", m.row_size(), " x ", m.column_size(), " = ", made, " variants",
                        s->variant_size() > 0 ? absl::StrCat(" beside ", s->variant_size(), " listed") : "",
                        "; a scenario may have at most ", kMaxVariants, " (use `viosim sweep` for a wider table)"));
    ok = false;
  }
  if (!ok) return;
  for (const VariantMatrix::Axis& r : m.row()) {
    for (const VariantMatrix::Axis& c : m.column()) {
      Variant* v = s->add_variant();
      v->set_name(absl::StrCat(r.name(), "-", c.name()));
      v->set_description(absl::StrCat(r.description(), r.description().empty() || c.description().empty() ? "" : ", ",
                                       c.description()));
      *v->mutable_overlay() = r.overlay();
      v->mutable_overlay()->MergeFrom(c.overlay());
    }
  }
  s->clear_matrix();
}

// The scenario variant `name` runs before --set: the base with its
// variants and published cells left out, the overlay merged over it ("" and
// kBaseVariant: none). What MetricNames needs to know, without the checks
// ResolveVariant makes.
Scenario Overlaid(const Scenario& s, absl::string_view name) {
  Scenario out = s;
  out.clear_variant();
  out.clear_published();
  for (const Variant& v : s.variant()) {
    if (!name.empty() && name != kBaseVariant && v.name() == name) {
      out.MergeFrom(v.overlay());
      break;
    }
  }
  return out;
}

// The rules that involve more than one field: variant names, overlays and
// published cells (each names a metric its variant reports).
void CheckScenarioRules(const Scenario& s, const ParseInfoTree* tree,
                        Diagnostics* d, const Loc& generated_at = Loc{}) {
  const FieldDescriptor* variant_f =
      Scenario::descriptor()->FindFieldByNumber(Scenario::kVariantFieldNumber);
  const FieldDescriptor* published_f =
      Scenario::descriptor()->FindFieldByNumber(Scenario::kPublishedFieldNumber);
  const Descriptor* variant_d = Variant::descriptor();
  const Descriptor* published_d = Published::descriptor();

  if (s.variant_size() > kMaxVariants) {
    const Loc loc = LocationIn(tree, variant_f, kMaxVariants, generated_at);
    d->Add(loc, JoinPath("", "variant", kMaxVariants),
           absl::StrCat(s.variant_size(), " variants; a scenario may have at most ", kMaxVariants,
                        " (use `viosim sweep` for a wider table)"));
    return;
  }
  std::map<std::string, int> first_use;
  for (int i = 0; i < s.variant_size(); ++i) {
    const Variant& v = s.variant(i);
    const std::string path = JoinPath("", "variant", i);
    // Variants the matrix made have no place of their own: the matrix's.
    const Loc loc = LocationIn(tree, variant_f, i, generated_at);
    const ParseInfoTree* vtree = NestedTree(tree, variant_f, i);
    const Loc name_loc = LocationIn(
        vtree, variant_d->FindFieldByNumber(Variant::kNameFieldNumber), -1, loc);
    if (v.name().empty()) {
      d->Add(name_loc, path + ".name", "a variant needs a non-empty name");
    } else if (v.name() == kBaseVariant) {
      d->Add(name_loc, path + ".name",
             absl::StrCat("the name '", kBaseVariant,
                          "' is reserved for the base scenario"));
    } else {
      const auto [it, inserted] = first_use.emplace(v.name(), i);
      if (!inserted) {
        d->Add(name_loc, path + ".name",
               absl::StrCat("duplicate variant name '", v.name(),
                            "' (also used by variant[", it->second, "])"));
      }
    }
    if (!v.has_overlay()) continue;
    const FieldDescriptor* overlay_f =
        variant_d->FindFieldByNumber(Variant::kOverlayFieldNumber);
    const Loc overlay_loc = LocationIn(vtree, overlay_f, -1, loc);
    const ParseInfoTree* otree = NestedTree(vtree, overlay_f, -1);
    for (const FieldDescriptor* banned : {variant_f, published_f}) {
      const int n = v.overlay().GetReflection()->FieldSize(v.overlay(), banned);
      for (int k = 0; k < n; ++k) {
        d->Add(LocationIn(otree, banned, k, overlay_loc),
               JoinPath(path + ".overlay", banned->name(), k),
               absl::StrCat("a variant overlay must not contain '",
                            banned->name(), "'"));
      }
    }
  }

  // Alternatives: named once each, overlays of a scenario's own fields.
  const FieldDescriptor* alternative_f = Scenario::descriptor()->FindFieldByName("alternative");
  std::map<std::string, int> alt_use;
  for (int i = 0; i < s.alternative_size(); ++i) {
    const Alternative& a = s.alternative(i);
    const std::string path = JoinPath("", "alternative", i);
    const Loc loc = LocationIn(tree, alternative_f, i, generated_at);
    if (a.name().empty()) {
      d->Add(loc, path + ".name", "an alternative needs a non-empty name");
    } else if (const auto [it, inserted] = alt_use.emplace(a.name(), i); !inserted) {
      d->Add(loc, path + ".name",
             absl::StrCat("duplicate alternative name '", a.name(), "' (also used by alternative[", it->second, "])"));
    }
    for (const FieldDescriptor* banned : {variant_f, published_f, alternative_f}) {
      if (a.overlay().GetReflection()->FieldSize(a.overlay(), banned) > 0) {
        d->Add(loc, JoinPath(path + ".overlay", banned->name(), 0),
               absl::StrCat("an alternative's overlay must not contain '", banned->name(), "'"));
      }
    }
    if (a.overlay().has_matrix()) d->Add(loc, path + ".overlay.matrix", "an alternative's overlay may not contain a matrix");
  }

  std::vector<std::string> variant_names;
  for (const Variant& v : s.variant()) {
    if (!v.name().empty()) variant_names.push_back(v.name());
  }
  // The metrics each variant named by a cell reports, found once per variant.
  std::map<std::string, std::vector<std::string>> metrics_of;
  for (int j = 0; j < s.published_size(); ++j) {
    const Published& p = s.published(j);
    const std::string path = JoinPath("", "published", j);
    const Loc loc = LocationIn(tree, published_f, j, Loc{});
    const ParseInfoTree* ptree = NestedTree(tree, published_f, j);
    auto loc_of = [&](int field_number) {
      return LocationIn(ptree, published_d->FindFieldByNumber(field_number), -1, loc);
    };
    if (!p.variant().empty() && p.variant() != kBaseVariant &&
        std::find(variant_names.begin(), variant_names.end(), p.variant()) ==
            variant_names.end()) {
      d->Add(loc_of(Published::kVariantFieldNumber), path + ".variant",
             absl::StrCat("unknown variant '", p.variant(), "' (",
                          variant_names.empty()
                              ? std::string("the file defines no variants")
                              : absl::StrCat("variants: ", absl::StrJoin(variant_names, ", ")),
                          "; leave it empty for the base scenario)"));
    }
    if (p.metric().empty()) {
      d->Add(loc_of(Published::kMetricFieldNumber), path + ".metric",
             "a published cell needs a metric");
    } else if (p.variant().empty() || p.variant() == kBaseVariant ||
               std::find(variant_names.begin(), variant_names.end(), p.variant()) != variant_names.end()) {
      const std::string shown = p.variant().empty() ? std::string(kBaseVariant) : p.variant();
      auto [it, inserted] = metrics_of.try_emplace(shown);
      if (inserted) it->second = MetricNames(Overlaid(s, p.variant()));
      const std::vector<std::string>& known = it->second;
      if (std::find(known.begin(), known.end(), p.metric()) == known.end()) {
        d->Add(loc_of(Published::kMetricFieldNumber), path + ".metric",
               absl::StrCat("'", p.metric(), "' is not a metric of variant '", shown, "' (",
                            known.empty() ? std::string("it has no workload, so no metrics")
                                          : absl::StrCat("metrics: ", absl::StrJoin(known, ", ")),
                            ")"));
      }
    }
    if (p.reference_case() == Published::REFERENCE_NOT_SET) {
      d->Add(loc, path, "a published cell needs a reference: set 'value' or 'analytic'");
    } else if (p.reference_case() == Published::kAnalytic &&
               p.analytic() == Published::ANALYTIC_UNSPECIFIED) {
      d->Add(loc_of(Published::kAnalyticFieldNumber), path + ".analytic",
             absl::StrCat("must name an analytic model: ",
                          EnumNames(Published::Analytic_descriptor(), true)));
    }
    if (p.role() == Published::ROLE_UNSPECIFIED) {
      d->Add(loc_of(Published::kRoleFieldNumber), path + ".role",
             absl::StrCat("a published cell needs a role: ",
                          EnumNames(Published::Role_descriptor(), true)));
    }
    if (p.has_effect_tolerance_pct() && p.role() != Published::PREDICTION) {
      d->Add(loc_of(Published::kEffectTolerancePctFieldNumber), path + ".effect_tolerance_pct",
             "only a PREDICTION cell has an effect (its value over a CALIBRATION cell's) to hold");
    }
  }
}

// ---------------------------------------------------------------------------
// Naming the field of a protobuf parse error
//
// Protobuf reports a parse error at a line and column, and its message does
// not always name the field ("Expected integer, got: abc"). To name it, the
// text before the error is scanned again with a small tokenizer that follows
// the nesting of `name { ... }` blocks and the last `name:` seen, resolving
// names against the message descriptors so repeated fields get an index.

struct Token {
  enum Kind { kIdent, kNumber, kString, kSymbol };
  Kind kind;
  absl::string_view text;  // a part of the text being scanned
  Loc start;
  Loc end;  // just past the last character; end of line if unterminated
};

bool IsSymbol(const Token& t, char c) {
  return t.kind == Token::kSymbol && t.text.size() == 1 && t.text[0] == c;
}

// Splits text format into tokens, one at a time and only as far as asked,
// counting lines and columns as protobuf's tokenizer does (0-based; a tab
// advances to the next multiple of 8). The text must outlive the tokens.
class Tokenizer {
 public:
  explicit Tokenizer(absl::string_view text) : text_(text) {}

  // The next token, or nothing at the end of the text.
  std::optional<Token> Next() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') Advance();
        continue;
      }
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        Advance();
        continue;
      }
      return Scan(c);
    }
    return std::nullopt;
  }

  // The place just past the end of the text, once Next has returned nothing.
  Loc end() const { return Loc{line_, column_}; }

 private:
  static bool IsIdentChar(char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  void Advance() {
    const char c = text_[i_++];
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else if (c == '\t') {
      column_ += 8 - column_ % 8;
    } else {
      ++column_;
    }
  }

  // The token that starts with `c`, at the current place.
  Token Scan(char c) {
    Token t;
    t.start = Loc{line_, column_};
    const size_t begin = i_;
    const bool starts_number =
        absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i_ + 1 < text_.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(text_[i_ + 1])));
    if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::kIdent;
      while (i_ < text_.size() && IsIdentChar(text_[i_])) Advance();
    } else if (starts_number) {
      t.kind = Token::kNumber;
      while (i_ < text_.size()) {
        const char n = text_[i_];
        const bool sign_of_exponent =
            (n == '-' || n == '+') && (text_[i_ - 1] == 'e' || text_[i_ - 1] == 'E');
        if (!IsIdentChar(n) && n != '.' && !sign_of_exponent) break;
        Advance();
      }
    } else if (c == '"' || c == '\'') {
      t.kind = Token::kString;
      Advance();
      bool closed = false;
      while (i_ < text_.size() && text_[i_] != '\n' && !closed) {
        if (text_[i_] == '\\' && i_ + 1 < text_.size() && text_[i_ + 1] != '\n') {
          Advance();
          Advance();
          continue;
        }
        closed = text_[i_] == c;
        Advance();
      }
      if (!closed) {
        // Protobuf reports the error somewhere inside; make sure the token
        // is seen as reaching past it.
        t.text = text_.substr(begin, i_ - begin);
        t.end = Loc{line_, std::numeric_limits<int>::max()};
        return t;
      }
    } else {
      t.kind = Token::kSymbol;
      Advance();
    }
    t.text = text_.substr(begin, i_ - begin);
    t.end = Loc{line_, column_};
    return t;
  }

  absl::string_view text_;
  size_t i_ = 0;
  int line_ = 0;
  int column_ = 0;
};

// What the scan found out about an error.
struct ErrorSite {
  std::string field;                       // dotted path; empty if unknown
  Loc loc;                                 // where to report it
  const FieldDescriptor* fd = nullptr;     // the field, if it exists
  const Descriptor* enclosing = nullptr;   // the message the field is in
  bool at_end = false;                     // the error is at the end of input
  int open_blocks = 0;                     // unclosed { or < at the error
  // What the scan was reading where the error is, so the wording can be
  // chosen from the text's structure, never from protobuf's English:
  bool unknown_field = false;  // a field name its message does not have
  bool at_value = false;       // the value of `fd` (or where it belongs)
  // At the end of input: what the text still lacked there, in words.
  std::string missing;
};

class ErrorLocator {
 public:
  ErrorLocator(absl::string_view text, const Descriptor* root)
      : text_(text), root_(root), tokens_(text) {
    Restart();
  }

  // Scans the tokens that end at or before `error` and says which field
  // the error concerns, from the text alone: protobuf's message is only
  // ever shown, never read. Errors come in the order of the text, so the
  // scan goes on from where the previous one stopped (the tokens before an
  // error are those before any later one); an earlier error starts over.
  ErrorSite Locate(const Loc& error) {
    if (Before(error, last_error_)) Restart();
    last_error_ = error;
    for (;;) {
      if (!lookahead_) {
        lookahead_ = tokens_.Next();
        if (!lookahead_) return Conclude(error, nullptr);
      }
      if (Before(error, lookahead_->end)) return Conclude(error, &*lookahead_);
      Step(*lookahead_);
      lookahead_.reset();
    }
  }

 private:
  enum State { kName, kAfterName, kValue, kList, kBracketName };

  // A field name as written, resolved against its message if possible.
  struct Field {
    std::string name;
    const FieldDescriptor* fd = nullptr;
    Loc loc;
  };

  struct Frame {
    const Descriptor* desc;  // null if the field is unknown
    std::string path;        // path of this message
    bool is_list = false;    // a [ ... ] list of values of `list_field`
    Field list_field;
    Field opener;            // the field whose value this block is
    std::string opener_path;
    std::map<std::string, int> seen;  // elements so far, per repeated field
    Field last;              // the last field whose value was completed
    std::string last_path;
  };

  // The message frame that holds the fields being read.
  Frame& Owner() {
    return frames_.back().is_list ? frames_[frames_.size() - 2] : frames_.back();
  }

  Field Resolve(absl::string_view name, const Loc& loc) {
    const Descriptor* desc = Owner().desc;
    std::string n(name);
    const FieldDescriptor* fd = desc == nullptr ? nullptr : desc->FindFieldByName(n);
    return Field{std::move(n), fd, loc};
  }

  // The path of the next value of `f` in `owner`; `consume` counts it.
  static std::string PathOf(Frame& owner, const Field& f, bool consume) {
    int index = -1;
    if (f.fd != nullptr && f.fd->is_repeated()) {
      index = consume ? owner.seen[f.name]++ : owner.seen[f.name];
    }
    return JoinPath(owner.path, f.name, index);
  }

  void CompleteScalar(const Field& f) {
    after_value_ = true;
    Frame& owner = Owner();
    owner.last_path = PathOf(owner, f, /*consume=*/true);
    owner.last = f;
  }

  void OpenBlock(const Field& f) {
    Frame block{nullptr, PathOf(Owner(), f, /*consume=*/true)};
    if (f.fd != nullptr) block.desc = f.fd->message_type();
    block.opener = f;
    block.opener_path = block.path;
    frames_.push_back(std::move(block));
    state_ = kName;
  }

  void OpenList(const Field& f) {
    Frame list{nullptr, Owner().path};
    list.is_list = true;
    list.list_field = f;
    frames_.push_back(std::move(list));
    state_ = kList;
  }

  void Step(const Token& t) {
    after_value_ = false;
    const bool opens = IsSymbol(t, '{') || IsSymbol(t, '<');
    const bool is_value = t.kind != Token::kSymbol;
    switch (state_) {
      case kName:
        if (t.kind == Token::kIdent) {
          pending_ = Resolve(t.text, t.start);
          state_ = kAfterName;
        } else if (IsSymbol(t, '[')) {
          pending_ = Field{"[", nullptr, t.start};
          state_ = kBracketName;
        } else if ((IsSymbol(t, '}') || IsSymbol(t, '>')) && frames_.size() > 1 &&
                   !frames_.back().is_list) {
          Frame done = std::move(frames_.back());
          frames_.pop_back();
          Frame& owner = Owner();
          owner.last = done.opener;
          owner.last_path = done.opener_path;
          state_ = frames_.back().is_list ? kList : kName;
        }
        break;  // separators and stray tokens change nothing
      case kBracketName:
        absl::StrAppend(&pending_.name, t.text);
        if (IsSymbol(t, ']')) state_ = kAfterName;
        break;
      case kAfterName:
      case kValue:
        if (opens) {
          OpenBlock(pending_);
        } else if (IsSymbol(t, '[')) {
          OpenList(pending_);
        } else if (IsSymbol(t, ':') && state_ == kAfterName) {
          state_ = kValue;
        } else if (IsSymbol(t, '-') && state_ == kValue) {
          // the sign of a number
        } else if (is_value && state_ == kValue) {
          CompleteScalar(pending_);
          state_ = kName;
        } else {
          state_ = kName;
        }
        break;
      case kList:
        if (opens) {
          OpenBlock(frames_.back().list_field);
        } else if (IsSymbol(t, ']')) {
          frames_.pop_back();
          state_ = kName;
        } else if (is_value) {
          CompleteScalar(frames_.back().list_field);
        }
        break;
    }
  }

  ErrorSite Conclude(const Loc& error, const Token* stop) {
    ErrorSite site;
    site.loc = error;
    site.at_end = stop == nullptr && !Before(error, tokens_.end());
    for (const Frame& f : frames_) {
      if (!f.is_list && &f != &frames_.front()) ++site.open_blocks;
    }
    Frame& owner = Owner();
    site.enclosing = owner.desc;

    auto at_field = [&](const Field& f, const std::string& path) {
      site.field = path;
      site.fd = f.fd;
    };
    // Protobuf reports a problem with a field's name (unknown, set twice,
    // a second member of a oneof) at the ':' or '{' after it, and an
    // unknown enum value at the token after the value: the scan stops
    // just past what the error is about, and points at it.
    const bool continues = stop == nullptr || stop->kind == Token::kIdent || IsSymbol(*stop, '}') ||
                           IsSymbol(*stop, '>') || IsSymbol(*stop, ',') || IsSymbol(*stop, ';');
    switch (state_) {
      case kName:
        if (after_value_ && continues && !site.at_end && owner.last.loc.known()) {
          at_field(owner.last, owner.last_path);
          site.loc = owner.last.loc;
          site.at_value = true;
        } else if (stop != nullptr && stop->kind == Token::kIdent) {
          const Field f = Resolve(stop->text, stop->start);
          at_field(f, PathOf(owner, f, false));
        } else {
          site.field = owner.path;
          site.fd = owner.opener.fd;
        }
        if (site.at_end && site.open_blocks > 0) site.missing = "a closing '}'";
        break;
      case kAfterName:
        at_field(pending_, PathOf(owner, pending_, false));
        if (stop != nullptr && (IsSymbol(*stop, ':') || IsSymbol(*stop, '{') || IsSymbol(*stop, '<'))) {
          if (pending_.loc.known()) site.loc = pending_.loc;
          site.unknown_field = pending_.fd == nullptr && owner.desc != nullptr && !absl::StartsWith(pending_.name, "[");
        }
        if (site.at_end) site.missing = absl::StrCat("':' and a value after '", pending_.name, "'");
        break;
      case kValue:
        at_field(pending_, PathOf(owner, pending_, false));
        // (A string left open is the lexer's error, not the field's type.)
        site.at_value = stop == nullptr || stop->kind != Token::kString ||
                        stop->end.column != std::numeric_limits<int>::max();
        if (site.at_end) site.missing = absl::StrCat("the value of '", pending_.name, "'");
        break;
      case kList:
        at_field(frames_.back().list_field, PathOf(owner, frames_.back().list_field, false));
        site.at_value = true;
        if (site.at_end) site.missing = "a closing ']'";
        break;
      case kBracketName:
        site.field = owner.path;
        if (site.at_end) site.missing = "a closing ']'";
        break;
    }
    return site;
  }

  // Back to the start of the text, before any token.
  void Restart() {
    tokens_ = Tokenizer(text_);
    lookahead_.reset();
    last_error_ = Loc{std::numeric_limits<int>::min(), std::numeric_limits<int>::min()};
    frames_.clear();
    frames_.push_back(Frame{root_, ""});
    state_ = kName;
    after_value_ = false;
    pending_ = Field{};
  }

  absl::string_view text_;
  const Descriptor* root_;
  Tokenizer tokens_;
  std::optional<Token> lookahead_;  // read, not yet stepped
  Loc last_error_;                  // the error the scan stopped at
  std::vector<Frame> frames_;
  State state_ = kName;
  Field pending_;
  bool after_value_ = false;  // the last token read ended a field's value
};

// Protobuf's `message` for the error at `site`, with what the text's
// structure says about it (the message is shown as protobuf wrote it and
// never read: its wording may change between protobuf versions).
// A field renamed when the placement switches became viosim.Placement:
// the new spelling, or "" for any other name.
std::string RenamedField(const Descriptor* d, absl::string_view name) {
  struct Rename {
    const Descriptor* message;
    const char* old_name;
    const char* now;
  };
  const Rename renames[] = {
      {Stack::VirtioBlk::descriptor(), "kick_outside_lock",
       "'kick_outside_lock' is now 'notify': AFTER_UNLOCK for true, UNDER_LOCK for false"},
      {Stack::VhostNet::descriptor(), "wake_outside_lock",
       "'wake_outside_lock' is now 'wake_up_process': AFTER_UNLOCK for true, UNDER_LOCK for false"},
      {Stack::Raid10::descriptor(), "unplug_wake_up_barrier",
       "'unplug_wake_up_barrier' is now 'unplug_wake_up': IF_SLEEPER for true, UNDER_LOCK for false"},
      {Stack::Raid1::descriptor(), "wake_up_barrier",
       "'wake_up_barrier' is now 'wake_up': IF_SLEEPER for true, UNDER_LOCK for false"},
  };
  for (const Rename& r : renames) {
    if (r.message == d && name == r.old_name) return r.now;
  }
  return "";
}

std::string ExplainParseError(const ErrorSite& site, const std::string& message) {
  if (site.at_end) {
    std::string what = "unexpected end of file";
    if (site.open_blocks > 0) {
      absl::StrAppend(&what, " with ", site.open_blocks, site.open_blocks == 1 ? " block" : " blocks",
                      " still open");
    }
    if (!site.missing.empty()) absl::StrAppend(&what, "; missing ", site.missing);
    return what;
  }
  absl::string_view plain = absl::StripTrailingAsciiWhitespace(message);
  absl::ConsumeSuffix(&plain, ".");
  if (site.unknown_field) {
    const size_t at = plain.find("no field named \"");
    if (at != absl::string_view::npos) {
      absl::string_view name = plain.substr(at + 16);
      name = name.substr(0, name.find('"'));
      if (std::string now = RenamedField(site.enclosing, name); !now.empty()) return absl::StrCat(plain, "; ", now);
    }
    return absl::StrCat(plain, "; the fields of ", site.enclosing->full_name(), " are: ", FieldNames(site.enclosing));
  }
  if (site.at_value && site.fd != nullptr) {
    return absl::StrCat(plain, "; '", site.fd->name(), "' takes ", DescribeType(site.fd));
  }
  return std::string(plain);
}

// The deepest nesting of messages a text may have: a scenario nests about 6
// deep (variant { overlay { stack { ... } } }); 100 leaves room and keeps
// the parser's recursion, and every recursive walk after it, shallow.
constexpr int kMaxNesting = 100;

// Gathers everything protobuf's parser reports. Warnings count as errors:
// the parser is told to accept unknown fields only so that it goes on and
// reports all of them (as warnings) rather than stopping at the first.
class GatheringErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  struct Error {
    Loc loc;
    std::string message;
  };

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back({Loc{line, column}, message});
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    errors_.push_back({Loc{line, column}, message});
  }

  const std::vector<Error>& errors() const { return errors_; }

 private:
  std::vector<Error> errors_;
};

// Parses `text` into `*out` (recording locations in `*tree` if not null)
// and adds every problem to `*d`. Returns false if the parser stopped early,
// so that `*out` holds only what came before the error.
bool ParseMessageText(const std::string& text, Message* out, ParseInfoTree* tree,
                      Diagnostics* d) {
  GatheringErrorCollector collector;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  // Nesting deeper than any scenario needs is an error at the place it
  // happens, not a stack overflow.
  parser.SetRecursionLimit(kMaxNesting);
  parser.AllowUnknownField(true);
  if (tree != nullptr) parser.WriteLocationsTo(tree);
  const bool complete = parser.ParseFromString(text, out);
  if (!collector.errors().empty()) {
    ErrorLocator locator(text, out->GetDescriptor());
    for (const GatheringErrorCollector::Error& e : collector.errors()) {
      const ErrorSite site = locator.Locate(e.loc);
      d->Add(site.loc, site.field, ExplainParseError(site, e.message));
    }
  } else if (!complete) {
    d->Add(Loc{}, "", "the text could not be parsed");
  }
  return complete;
}

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     absl::string_view what) {
  return ReadInputFile(path, what);
}

// ---------------------------------------------------------------------------
// --set

// One step of a field path: a field name and, for repeated fields, an index.
struct PathStep {
  std::string name;
  int index = -1;  // -1: none given
};

absl::StatusOr<std::vector<PathStep>> SplitFieldPath(absl::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError("the field path is empty");
  std::vector<PathStep> steps;
  for (absl::string_view piece : absl::StrSplit(path, '.')) {
    PathStep step;
    absl::string_view name = piece;
    const size_t bracket = piece.find('[');
    if (bracket != absl::string_view::npos) {
      name = piece.substr(0, bracket);
      absl::string_view index = piece.substr(bracket + 1);
      if (!absl::ConsumeSuffix(&index, "]") || index.empty() ||
          !std::all_of(index.begin(), index.end(), [](char c) {
            return absl::ascii_isdigit(static_cast<unsigned char>(c));
          }) ||
          !absl::SimpleAtoi(index, &step.index)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "malformed index in '", piece, "'; write name[N] with N >= 0"));
      }
    }
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", piece, "' is not a field name"));
    }
    step.name = std::string(name);
    steps.push_back(std::move(step));
  }
  return steps;
}

// Parses `text` as an integer of type T for field `f` and checks bounds.
template <typename T>
std::string ParseInteger(const FieldDescriptor* f, absl::string_view text, T* out) {
  if (!absl::SimpleAtoi(text, out)) {
    return absl::StrCat("expected ", DescribeType(f), ", got '", text, "'");
  }
  return CheckNumber(f, static_cast<double>(*out), text);
}

// A string value as given, or, written in the quotes of a scenario file
// ("fair" or 'fair', as a shell that keeps quotes passes it), read by the
// tokenizer that reads the file: the quotes dropped, escapes such as \"
// undone. Returns what is wrong, or "" on success.
std::string UnquoteString(absl::string_view text, std::string* out) {
  const char q = text.empty() ? '\0' : text.front();
  if (text.size() < 2 || (q != '"' && q != '\'') || text.back() != q) {
    *out = std::string(text);
    return "";
  }
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  GatheringErrorCollector errors;
  google::protobuf::io::Tokenizer tokens(&input, &errors);
  tokens.Next();
  const std::string literal = tokens.current().text;
  // An error inside the literal (a bad escape, a line break), reported as
  // it was read, says more than the tokens found after it.
  if (errors.errors().empty() && tokens.Next()) {
    return absl::StrCat("a quoted string has an unescaped ", std::string(1, q), " inside: ", text);
  }
  if (!errors.errors().empty()) {
    return absl::StrCat("a quoted string does not read as in a scenario file (",
                        errors.errors().front().message, "): ", text);
  }
  out->clear();
  google::protobuf::io::Tokenizer::ParseStringAppend(literal, out);
  return "";
}

// Sets the scalar field `f` of `*m` (element `index`, or -1 if singular)
// from `text`. Returns what is wrong, or "" on success; on failure `*m` is
// unchanged. With `m` null, only says what would be wrong.
std::string SetScalar(Message* m, const FieldDescriptor* f, int index,
                      absl::string_view text) {
  const Reflection* r = m == nullptr ? nullptr : m->GetReflection();
  const bool rep = index >= 0;
  std::string what;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if ((what = ParseInteger(f, text, &v)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedInt32(m, f, index, v) : r->SetInt32(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if ((what = ParseInteger(f, text, &v)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedInt64(m, f, index, v) : r->SetInt64(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if ((what = ParseInteger(f, text, &v)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedUInt32(m, f, index, v) : r->SetUInt32(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if ((what = ParseInteger(f, text, &v)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedUInt64(m, f, index, v) : r->SetUInt64(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!absl::SimpleAtod(text, &v)) {
        return absl::StrCat("expected ", DescribeType(f), ", got '", text, "'");
      }
      if ((what = CheckNumber(f, v, text)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedDouble(m, f, index, v) : r->SetDouble(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      float v;
      if (!absl::SimpleAtof(text, &v)) {
        return absl::StrCat("expected ", DescribeType(f), ", got '", text, "'");
      }
      if ((what = CheckNumber(f, v, text)).empty()) {
        if (m != nullptr) rep ? r->SetRepeatedFloat(m, f, index, v) : r->SetFloat(m, f, v);
      }
      return what;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (text == "true" || text == "1") {
        v = true;
      } else if (text == "false" || text == "0") {
        v = false;
      } else {
        return absl::StrCat("expected true, false, 1 or 0, got '", text, "'");
      }
      if (m != nullptr) rep ? r->SetRepeatedBool(m, f, index, v) : r->SetBool(m, f, v);
      return "";
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumValueDescriptor* v = f->enum_type()->FindValueByName(std::string(text));
      if (v == nullptr) {
        return absl::StrCat("expected ", DescribeType(f), ", got '", text, "'");
      }
      if (m != nullptr) rep ? r->SetRepeatedEnum(m, f, index, v) : r->SetEnum(m, f, v);
      return "";
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string value;
      if (!(what = UnquoteString(text, &value)).empty()) return what;
      if (f->type() == FieldDescriptor::TYPE_STRING && !(what = Utf8Problem(value)).empty()) return what;
      if (IsTimeField(f) && !(what = CheckTimeText(f, value)).empty()) return what;
      if (m == nullptr) return "";
      rep ? r->SetRepeatedString(m, f, index, value) : r->SetString(m, f, value);
      return "";
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "is not a scalar field";
}

// The scalar field a --set path ends at: the message holding it (inside the
// tree that was walked), the field, and the element index (-1: singular).
// M is Message, or const Message for a walk that changes nothing.
template <typename M>
struct ScalarSite {
  M* message = nullptr;
  const FieldDescriptor* field = nullptr;
  int index = -1;
  std::string path;  // as written, with indices
};

// The element `index` of the message field `f` of `*m` (its only value if
// `index` is -1): created if need be, or, in a const message, the default.
Message* SubMessage(Message* m, const FieldDescriptor* f, int index) {
  const Reflection* r = m->GetReflection();
  return index >= 0 ? r->MutableRepeatedMessage(m, f, index) : r->MutableMessage(m, f);
}
const Message* SubMessage(const Message* m, const FieldDescriptor* f, int index) {
  const Reflection* r = m->GetReflection();
  return index >= 0 ? &r->GetRepeatedMessage(*m, f, index) : &r->GetMessage(*m, f);
}

// The members of a oneof, comma-separated, in field order.
std::string OneofMembers(const google::protobuf::OneofDescriptor* oneof) {
  std::vector<std::string> names;
  for (int i = 0; i < oneof->field_count(); ++i) names.push_back(oneof->field(i)->name());
  return absl::StrJoin(names, ", ");
}

// The value text a relative assignment gives the scalar at `site`, read
// against the value it holds now: "*F" multiplies by F, "+P%" and "-P%"
// add or take P percent, and on a duration "+D" and "-D" add or take the
// duration D. Returns nullopt when `text` is not relative (it is then an
// absolute value: "-1" on an integer field is minus one), else the new
// value's text or what is wrong.
std::optional<absl::StatusOr<std::string>> RelativeValue(const Message& m, const FieldDescriptor* f, int index,
                                                         absl::string_view text) {
  const bool duration = IsTimeField(f);
  const bool numeric = f->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                       f->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                       f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 ||
                       f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64 ||
                       f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ||
                       f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT;
  const bool star = absl::StartsWith(text, "*");
  const bool signed_text = absl::StartsWith(text, "+") || absl::StartsWith(text, "-");
  const bool pct = signed_text && absl::EndsWith(text, "%");
  if (!star && !pct && !(duration && signed_text)) return std::nullopt;
  auto bad = [&](absl::string_view what) -> absl::StatusOr<std::string> {
    return absl::InvalidArgumentError(std::string(what));
  };
  if (!duration && !numeric) {
    return bad(absl::StrCat("'", text, "' is a relative value, which only a number or a duration takes; this field is ",
                            DescribeType(f)));
  }
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  // The factor, or for "+D"/"-D" the duration added.
  double factor = 1;
  std::optional<sim::Time> delta;
  if (star) {
    if (!absl::SimpleAtod(text.substr(1), &factor) || !std::isfinite(factor) || factor < 0) {
      return bad(absl::StrCat("'", text, "': expected *F with F a finite number >= 0, e.g. *0.5"));
    }
  } else if (pct) {
    double p = 0;
    if (!absl::SimpleAtod(text.substr(1, text.size() - 2), &p) || !std::isfinite(p) || p < 0) {
      return bad(absl::StrCat("'", text, "': expected +P% or -P% with P a finite number >= 0, e.g. +10%"));
    }
    factor = text[0] == '+' ? 1 + p / 100 : 1 - p / 100;
    if (factor < 0) return bad(absl::StrCat("'", text, "' takes more than the whole value"));
  } else {
    absl::StatusOr<sim::Time> d = ParseDuration(text.substr(1));
    if (!d.ok()) return bad(absl::StrCat("'", text, "': ", d.status().message()));
    delta = text[0] == '+' ? *d : sim::Time::Zero() - *d;
  }
  constexpr double kInt64Limit = 9.2e18;  // beyond 2^63 no int64 holds it
  if (duration) {
    const std::string now = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    if (now.empty()) {
      return bad(absl::StrCat("'", text, "' is relative to the value the field holds, and it holds none here; ",
                              "give an absolute duration, e.g. 2us"));
    }
    absl::StatusOr<sim::Time> t = ParseDuration(now);
    if (!t.ok()) return bad(absl::StrCat("its value '", now, "': ", t.status().message()));
    double ps = static_cast<double>(t->ps());
    ps = delta ? ps + static_cast<double>(delta->ps()) : std::round(ps * factor);
    if (ps < 0) return bad(absl::StrCat("'", text, "' of ", now, " is below zero"));
    if (ps >= kInt64Limit) return bad(absl::StrCat("'", text, "' of ", now, " does not fit in picoseconds"));
    return absl::StrCat(static_cast<int64_t>(ps), "ps");
  }
  double now = 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      now = rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      now = static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      now = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      now = static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      now = rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      break;
    default:
      now = rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      break;
  }
  const double v = now * factor;
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE || f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
    return absl::StrFormat("%.17g", v);
  }
  const double n = std::round(v);
  if (std::fabs(n) >= kInt64Limit) return bad(absl::StrCat("'", text, "' of ", now, " is out of range"));
  return absl::StrCat(static_cast<int64_t>(n));
}

// Walks `path` down from `*root` to the scalar it names. In a mutable
// message it creates intermediate singular messages as it goes (and so
// may change `*root` even when it fails); in a const one it reads their
// defaults, which gives the same site and the same errors. The error says
// "field 'a.b': what is wrong".
template <typename M>
absl::StatusOr<ScalarSite<M>> WalkToScalar(M* root, absl::string_view path) {
  auto fail = [](absl::string_view field, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", what));
  };
  absl::StatusOr<std::vector<PathStep>> steps = SplitFieldPath(path);
  if (!steps.ok()) return fail(path, steps.status().message());
  M* m = root;
  std::string walked;
  for (size_t k = 0; k < steps->size(); ++k) {
    const PathStep& step = (*steps)[k];
    const Descriptor* desc = m->GetDescriptor();
    const Reflection* r = m->GetReflection();
    const std::string here = JoinPath(walked, step.name, -1);
    const std::string here_indexed = JoinPath(walked, step.name, step.index);
    const FieldDescriptor* f = desc->FindFieldByName(step.name);
    if (f == nullptr) {
      if (std::string now = RenamedField(desc, step.name); !now.empty()) {
        return fail(here, absl::StrCat("no such field in ", desc->full_name(), "; ", now));
      }
      return fail(here, absl::StrCat("no such field in ", desc->full_name(),
                                     "; its fields are: ", FieldNames(desc)));
    }
    if (f->is_repeated()) {
      const int size = r->FieldSize(*m, f);
      if (step.index < 0) {
        return fail(here, absl::StrCat("is a repeated field; give an index, e.g. '",
                                       step.name, "[0]' (it has ", size,
                                       size == 1 ? " element)" : " elements)"));
      }
      if (step.index >= size) {
        return fail(here_indexed,
                    absl::StrCat("index ", step.index, " is out of range (it has ",
                                 size, size == 1 ? " element)" : " elements)"));
      }
    } else if (step.index >= 0) {
      return fail(here_indexed, "is not a repeated field; remove the index");
    }
    // A path into a oneof member other than the one the scenario has would
    // clear that member: another stack or another workload kind, whose
    // parameters the user never named, is refused. (A distribution's or an
    // uncertainty's kind is one quantity written another way: the path
    // names the new kind, which replaces the old as the user asks.)
    if (const google::protobuf::OneofDescriptor* oneof = f->containing_oneof();
        oneof != nullptr && (oneof == Stack::descriptor()->FindOneofByName("device") ||
                             oneof == Workload::descriptor()->FindOneofByName("kind"))) {
      const FieldDescriptor* set = r->GetOneofFieldDescriptor(*m, oneof);
      if (set != nullptr && set != f) {
        return fail(here, absl::StrCat("the scenario's ", walked.empty() ? oneof->name() : walked, " is '",
                                       set->name(), "' (one of ", OneofMembers(oneof), "); a path into '",
                                       f->name(), "' would replace it, so it is refused: set a field of '",
                                       JoinPath(walked, set->name(), -1), "' instead"));
      }
    }
    const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (k + 1 < steps->size()) {
      if (!is_message) {
        return fail(here_indexed,
                    absl::StrCat("is a scalar, so it has no field '",
                                 (*steps)[k + 1].name, "'"));
      }
      m = SubMessage(m, f, f->is_repeated() ? step.index : -1);
      walked = here_indexed;
      continue;
    }
    if (is_message) {
      return fail(here_indexed,
                  absl::StrCat("is a message (", f->message_type()->full_name(),
                               "), not a scalar; set one of its fields: ",
                               FieldNames(f->message_type())));
    }
    return ScalarSite<M>{m, f, step.index, here_indexed};
  }
  return fail(path, "the field path is empty");
}

// ApplyOverride for any message type; `flag` names the flag in messages.
absl::Status ApplyAssignment(Message* root, absl::string_view assignment,
                             absl::string_view flag) {
  const std::string prefix = absl::StrCat(flag, " '", assignment, "'");
  const size_t eq = assignment.find('=');
  if (eq == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, ": expected FIELD.PATH=VALUE, e.g. run.duration=2s"));
  }
  const absl::string_view path = absl::StripAsciiWhitespace(assignment.substr(0, eq));
  const absl::string_view value = assignment.substr(eq + 1);

  // fio's own options by name: workload.fio.OPTION (every job) and
  // workload.fio.job.SECTION.OPTION (one job), kept as workload.fio.option
  // entries that the job file's reader applies by its own rules.
  if (root->GetDescriptor() == Scenario::descriptor() && absl::StartsWith(path, "workload.fio.")) {
    const absl::string_view rest = path.substr(std::string_view("workload.fio.").size());
    const absl::string_view first = rest.substr(0, std::min(rest.find('.'), rest.find('[')));
    if (Workload::Fio::descriptor()->FindFieldByName(std::string(first)) == nullptr) {
      // Into the scenario's fio workload only (not another workload kind).
      const Message* view = root;
      if (absl::StatusOr<ScalarSite<const Message>> fio = WalkToScalar(view, "workload.fio.job_file"); !fio.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, ": ", fio.status().message()));
      }
      std::string section;
      absl::string_view key = rest;
      if (absl::StartsWith(rest, "job.")) {
        const absl::string_view sk = rest.substr(4);
        const size_t dot = sk.rfind('.');
        if (dot == absl::string_view::npos || dot == 0 || dot + 1 == sk.size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              prefix, ": field '", path, "': one job's option is workload.fio.job.SECTION.OPTION, e.g. "
              "workload.fio.job.randread.iodepth=8"));
        }
        section = std::string(sk.substr(0, dot));
        key = sk.substr(dot + 1);
      }
      if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
            return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
          })) {
        return absl::InvalidArgumentError(absl::StrCat(
            prefix, ": field '", path, "': not a field of viosim.Workload.Fio (its fields are: ",
            FieldNames(Workload::Fio::descriptor()), "), nor an fio option name (workload.fio.OPTION, ",
            "workload.fio.job.SECTION.OPTION)"));
      }
      std::string v;
      if (std::string what = UnquoteString(value, &v); !what.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, ": field '", path, "': ", what));
      }
      if (std::string what = Utf8Problem(v); !what.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, ": field '", path, "': ", what));
      }
      Workload::Fio::JobOption* o =
          static_cast<Scenario*>(root)->mutable_workload()->mutable_fio()->add_option();
      o->set_section(section);
      o->set_key(std::string(key));
      o->set_value(v);
      return absl::OkStatus();
    }
  }
  // Find the field and check the value without changing anything, so that
  // a failure leaves `*root` as it was; then walk again, creating what the
  // path needs, and store the value.
  const Message* view = root;
  absl::StatusOr<ScalarSite<const Message>> found = WalkToScalar(view, path);
  if (!found.ok()) return absl::InvalidArgumentError(absl::StrCat(prefix, ": ", found.status().message()));
  std::string absolute(value);
  if (std::optional<absl::StatusOr<std::string>> rel =
          RelativeValue(*found->message, found->field, found->index, absl::StripAsciiWhitespace(value))) {
    if (!rel->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, ": field '", found->path, "': ", rel->status().message()));
    }
    absolute = **rel;
  }
  const std::string what = SetScalar(nullptr, found->field, found->index, absolute);
  if (!what.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ": field '", found->path, "': ", what));
  }
  absl::StatusOr<ScalarSite<Message>> site = WalkToScalar(root, path);
  if (!site.ok()) return absl::InternalError(absl::StrCat(prefix, ": ", site.status().message()));
  SetScalar(site->message, site->field, site->index, absolute);
  return absl::OkStatus();
}

// The first field name of the path in `assignment`.
absl::string_view FirstFieldName(absl::string_view assignment) {
  absl::string_view path =
      absl::StripLeadingAsciiWhitespace(assignment.substr(0, assignment.find('=')));
  return path.substr(0, std::min(path.find('.'), path.find('[')));
}

// Applies the file-level assignments among `assignments` to `*s` and checks
// the cross-field rules again. `path` names the file in messages.
absl::Status ApplyFileLevel(const std::string& path, Scenario* s,
                            const std::vector<std::string>& assignments) {
  std::vector<std::string> file_level;
  for (const std::string& a : assignments) {
    if (IsFileLevelOverride(a)) file_level.push_back(a);
  }
  if (file_level.empty()) return absl::OkStatus();
  absl::Status status = ApplyOverrides(s, file_level);
  if (!status.ok()) return status;
  Diagnostics d(absl::StrCat(path, " (after --set)"));
  CheckValues(*s, nullptr, "", Loc{}, &d);
  CheckScenarioRules(*s, nullptr, &d);
  return d.ToStatus();
}

}  // namespace

namespace internal {

std::string ExplainTextError(const std::string& text, int line, int column, const std::string& message,
                             const google::protobuf::Descriptor* root) {
  ErrorLocator locator(text, root);
  const ErrorSite site = locator.Locate(Loc{line, column});
  Diagnostics d("");
  d.Add(site.loc, site.field, ExplainParseError(site, message));
  return std::string(d.ToStatus().message());
}

}  // namespace internal

// ---------------------------------------------------------------------------
// Public functions

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

bool SameVariant(absl::string_view a, absl::string_view b) {
  auto norm = [](absl::string_view v) { return v.empty() ? absl::string_view(kBaseVariant) : v; };
  return norm(a) == norm(b);
}

std::string VariantDescription(const ScenarioFile& file, absl::string_view variant_name) {
  for (const Variant& v : file.scenario.variant()) {
    if (v.name() == variant_name) return v.description();
  }
  return SameVariant(variant_name, kBaseVariant) ? file.scenario.description() : "";
}

absl::StatusOr<ScenarioFile> UnderAlternative(const ScenarioFile& file, absl::string_view name) {
  const Alternative* chosen = nullptr;
  std::vector<std::string> names;
  for (const Alternative& a : file.scenario.alternative()) {
    names.push_back(a.name());
    if (a.name() == name) chosen = &a;
  }
  if (chosen == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(file.path, ": no alternative '", name, "' (alternatives: ",
                                                   names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }
  ScenarioFile out = file;
  Scenario& s = out.scenario;
  const Scenario overlay = chosen->overlay();
  s.clear_alternative();
  std::vector<Variant> variants(s.variant().begin(), s.variant().end());
  s.clear_variant();
  s.MergeFrom(overlay);
  for (Variant& v : variants) {
    if (v.has_overlay()) v.mutable_overlay()->MergeFrom(overlay);
    *s.add_variant() = std::move(v);
  }
  return out;
}

std::vector<std::string> VariantNames(const ScenarioFile& file) {
  return VariantNamesOf(file.scenario);
}

std::string ValueAsRead(absl::string_view text) {
  std::string value;
  if (!UnquoteString(text, &value).empty()) return std::string(text);
  return value;
}

absl::Status ApplyOverride(Scenario* scenario, absl::string_view assignment,
                           absl::string_view flag) {
  return ApplyAssignment(scenario, assignment, flag);
}

absl::StatusOr<ScalarKind> ScalarKindAt(const Scenario& scenario, absl::string_view path,
                                        absl::string_view flag) {
  // An fio option by name (workload.fio.OPTION, workload.fio.job.S.OPTION)
  // holds fio's own text.
  if (const absl::string_view p = absl::StripAsciiWhitespace(path); absl::StartsWith(p, "workload.fio.")) {
    const absl::string_view rest = p.substr(std::string_view("workload.fio.").size());
    const absl::string_view first = rest.substr(0, std::min(rest.find('.'), rest.find('[')));
    if (!first.empty() && Workload::Fio::descriptor()->FindFieldByName(std::string(first)) == nullptr) {
      return ScalarKind::kOther;
    }
  }
  absl::StatusOr<ScalarSite<const Message>> site =
      WalkToScalar(static_cast<const Message*>(&scenario), absl::StripAsciiWhitespace(path));
  if (!site.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", path, "': ", site.status().message()));
  }
  switch (site->field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return ScalarKind::kInteger;
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return ScalarKind::kReal;
    case FieldDescriptor::CPPTYPE_STRING:
      return IsTimeField(site->field) ? ScalarKind::kDuration : ScalarKind::kOther;
    default:
      return ScalarKind::kOther;
  }
}

std::string AssignmentPath(absl::string_view assignment) {
  return std::string(absl::StripAsciiWhitespace(assignment.substr(0, assignment.find('='))));
}

std::optional<std::string> OneofMemberHeld(const Scenario& scenario, absl::string_view path) {
  absl::StatusOr<std::vector<PathStep>> steps = SplitFieldPath(absl::StripAsciiWhitespace(path));
  if (!steps.ok()) return std::nullopt;
  const Message* m = &scenario;
  std::string walked;
  for (const PathStep& step : *steps) {
    const FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(step.name);
    if (f == nullptr || f->is_repeated()) return std::nullopt;
    if (const google::protobuf::OneofDescriptor* oneof = f->containing_oneof(); oneof != nullptr) {
      const FieldDescriptor* set = m->GetReflection()->GetOneofFieldDescriptor(*m, oneof);
      if (set != nullptr && set != f &&
          (oneof == Stack::descriptor()->FindOneofByName("device") ||
           oneof == Workload::descriptor()->FindOneofByName("kind"))) {
        return JoinPath(walked, set->name(), -1);
      }
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return std::nullopt;
    m = &m->GetReflection()->GetMessage(*m, f);
    walked = JoinPath(walked, step.name, -1);
  }
  return std::nullopt;
}

absl::Status ApplyOverrides(Scenario* scenario,
                            const std::vector<std::string>& assignments) {
  std::vector<std::string> errors;
  for (const std::string& a : assignments) {
    absl::Status status = ApplyOverride(scenario, a);
    if (!status.ok()) errors.emplace_back(status.message());
  }
  return JoinErrors(errors);
}

bool IsFileLevelOverride(absl::string_view assignment) {
  const absl::string_view name = FirstFieldName(assignment);
  return name == "variant" || name == "published";
}

absl::Status ApplyFileOverrides(ScenarioFile* file,
                                const std::vector<std::string>& assignments) {
  return ApplyFileLevel(file->path, &file->scenario, assignments);
}

absl::StatusOr<Scenario> ResolveVariant(const ScenarioFile& file,
                                        absl::string_view variant_name,
                                        const std::vector<std::string>& overrides,
                                        absl::string_view last_flag) {
  // The file as --set edits it: copied only if a file-level assignment
  // changes it.
  std::optional<Scenario> edited_copy;
  if (std::any_of(overrides.begin(), overrides.end(),
                  [](const std::string& o) { return IsFileLevelOverride(o); })) {
    edited_copy = file.scenario;
    absl::Status status = ApplyFileLevel(file.path, &*edited_copy, overrides);
    if (!status.ok()) return status;
  }
  const Scenario& edited = edited_copy ? *edited_copy : file.scenario;

  Scenario resolved = edited;
  std::string where = file.path;
  if (!variant_name.empty() && variant_name != kBaseVariant) {
    const Variant* chosen = nullptr;
    for (const Variant& v : edited.variant()) {
      if (v.name() == variant_name) {
        chosen = &v;
        break;
      }
    }
    if (chosen == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path, ": unknown variant '", variant_name, "' (variants: ",
          absl::StrJoin(VariantNamesOf(edited), ", "), ")"));
    }
    resolved.MergeFrom(chosen->overlay());
    where = absl::StrCat(file.path, " (variant '", variant_name, "')");
  }
  resolved.clear_variant();
  resolved.clear_published();

  std::vector<std::string> run_level;
  for (const std::string& o : overrides) {
    if (!IsFileLevelOverride(o)) run_level.push_back(o);
  }
  absl::Status status = ApplyOverrides(&resolved, run_level);
  if (!status.ok()) return status;

  // Everything was checked on the way in; this guards the contract that a
  // resolved scenario's values are valid.
  Diagnostics d(where);
  CheckValues(resolved, nullptr, "", Loc{}, &d);
  if (!d.empty()) return d.ToStatus();
  status = CheckResolvedScenario(file, variant_name, overrides, last_flag, resolved);
  if (!status.ok()) return status;
  return resolved;
}

std::string FieldLocation(const ScenarioFile& file, absl::string_view field_path) {
  absl::StatusOr<std::vector<PathStep>> steps = SplitFieldPath(field_path);
  if (!steps.ok()) return file.path;
  const ParseInfoTree* tree = file.locations.get();
  const Descriptor* desc = Scenario::descriptor();
  for (size_t k = 0; k < steps->size() && tree != nullptr; ++k) {
    const PathStep& step = (*steps)[k];
    const FieldDescriptor* f = desc->FindFieldByName(step.name);
    if (f == nullptr || f->is_repeated() != (step.index >= 0)) break;
    if (k + 1 == steps->size()) {
      const Loc loc = LocationIn(tree, f, step.index, Loc{});
      if (!loc.known()) break;
      return absl::StrCat(file.path, ":", loc.line + 1, ":", loc.column + 1);
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(f, step.index);
    desc = f->message_type();
  }
  return file.path;
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
