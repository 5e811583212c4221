// Variants: the names that select them, the matrix that makes them, the
// rules between a file's variants, alternatives and published cells, a file
// under one of its alternatives, and the scenario a variant resolves to.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "scenarios/checks.h"
#include "scenarios/loader.h"
#include "scenarios/loader_internal.h"
#include "scenarios/scenario.pb.h"

namespace viosim {

const char kBaseVariant[] = "base";

using internal::ApplyFileLevel;
using internal::CheckValues;
using internal::Diagnostics;
using internal::Loc;

namespace {

std::vector<std::string> VariantNamesOf(const Scenario& s) {
  std::vector<std::string> names;
  for (const Variant& v : s.variant()) names.push_back(v.name());
  if (names.empty()) names.push_back(kBaseVariant);
  return names;
}

}  // namespace

namespace internal {

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

void CheckScenarioRules(const Scenario& s, const ParseInfoTree* tree,
                        Diagnostics* d, const Loc& generated_at) {
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
      const std::string what = CheckPublishedMetric(s, p, &metrics_of);
      if (!what.empty()) d->Add(loc_of(Published::kMetricFieldNumber), path + ".metric", what);
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

}  // namespace internal

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

}  // namespace viosim
