// --set paths and assignments: a path such as `stack.raid10.flush_wake_up`
// or `variant[0].overlay.run.duration` split into steps and walked down a
// scenario to the scalar it names, the value read for that field (absolute
// or relative to what it holds) and the assignment applied; whether the
// field a path names is set in a message (field_walk.h), and where it was
// written in the file.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
#include "google/protobuf/text_format.h"
#include "scenarios/field_walk.h"
#include "scenarios/input_file.h"
#include "scenarios/loader.h"
#include "scenarios/loader_internal.h"
#include "scenarios/scenario.pb.h"
#include "scenarios/units.h"
#include "sim/time.h"

namespace viosim {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;
using internal::ApplyFileLevel;
using internal::CheckNumber;
using internal::CheckTimeText;
using internal::DescribeType;
using internal::FieldNames;
using internal::GatheringErrorCollector;
using internal::IsTimeField;
using internal::JoinErrors;
using internal::JoinPath;
using internal::Loc;
using internal::LocationIn;
using internal::RenamedField;

using internal::PathStep;
using internal::SplitFieldPath;
using internal::StepField;

namespace internal {

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

const FieldDescriptor* StepField(const Descriptor* d, const PathStep& step) {
  const FieldDescriptor* f = d->FindFieldByName(step.name);
  if (f == nullptr || f->is_repeated() != (step.index >= 0)) return nullptr;
  return f;
}

bool HasPath(const Message& m, absl::string_view path) {
  absl::StatusOr<std::vector<PathStep>> steps = SplitFieldPath(path);
  if (!steps.ok()) return false;
  const Message* at = &m;
  for (size_t k = 0; k < steps->size(); ++k) {
    const PathStep& step = (*steps)[k];
    const FieldDescriptor* f = StepField(at->GetDescriptor(), step);
    if (f == nullptr) return false;
    const Reflection* r = at->GetReflection();
    if (f->is_repeated() ? step.index >= r->FieldSize(*at, f) : !r->HasField(*at, f)) return false;
    if (k + 1 == steps->size()) return true;
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
    at = f->is_repeated() ? &r->GetRepeatedMessage(*at, f, step.index) : &r->GetMessage(*at, f);
  }
  return false;
}

}  // namespace internal

namespace {

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

}  // namespace

namespace internal {

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

}  // namespace internal

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

std::string FieldLocation(const ScenarioFile& file, absl::string_view field_path) {
  absl::StatusOr<std::vector<PathStep>> steps = SplitFieldPath(field_path);
  if (!steps.ok()) return file.path;
  const ParseInfoTree* tree = file.locations.get();
  const Descriptor* desc = Scenario::descriptor();
  for (size_t k = 0; k < steps->size() && tree != nullptr; ++k) {
    const PathStep& step = (*steps)[k];
    const FieldDescriptor* f = StepField(desc, step);
    if (f == nullptr) break;
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

}  // namespace viosim
