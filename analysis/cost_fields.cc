#include "analysis/cost_fields.h"

#include <cmath>
#include <cstdint>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "scenarios/units.h"

namespace analysis {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr char kSourceSuffix[] = "_source";

bool IsSource(const FieldDescriptor* fd) {
  return fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
         fd->message_type() == viosim::Source::descriptor();
}

bool IsDuration(const FieldDescriptor* fd) {
  return fd->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
         fd->options().GetExtension(viosim::unit) == viosim::TIME;
}

// The Source that covers the fields being walked, and where it sits.
struct Cover {
  const viosim::Source* source = nullptr;
  std::string path;
};

std::string Join(const std::string& path, const std::string& name) {
  return path.empty() ? name : absl::StrCat(path, ".", name);
}

// Adds the scalar `fd` of `m` at `path`, covered by `cover`, when it holds
// a duration (always) or a number (only when `numbers` is true: a field
// named by an `X_source` sibling).
void AddScalar(const Message& m, const FieldDescriptor* fd, const std::string& path, const Cover& cover,
               bool numbers, std::vector<CostField>* out) {
  const Reflection* r = m.GetReflection();
  CostField f;
  f.path = path;
  f.source_path = cover.path;
  f.kind = cover.source->kind();
  f.ref = cover.source->ref();
  if (IsDuration(fd)) {
    absl::StatusOr<sim::Time> t = viosim::ParseDuration(r->GetString(m, fd));
    if (!t.ok()) return;  // excluded by the REQUIRES; never a crash
    f.value = CostField::Value::kDuration;
    f.duration = *t;
  } else if (!numbers) {
    return;
  } else {
    switch (fd->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        f.value = CostField::Value::kInteger, f.number = r->GetInt32(m, fd);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        f.value = CostField::Value::kInteger, f.number = static_cast<double>(r->GetInt64(m, fd));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        f.value = CostField::Value::kInteger, f.number = r->GetUInt32(m, fd);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        f.value = CostField::Value::kInteger, f.number = static_cast<double>(r->GetUInt64(m, fd));
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        f.value = CostField::Value::kReal, f.number = r->GetDouble(m, fd);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        f.value = CostField::Value::kReal, f.number = r->GetFloat(m, fd);
        break;
      default:
        return;
    }
  }
  out->push_back(std::move(f));
}

// The `X_source` sibling that names `name` (X, X_* or *_X), if any.
const Cover* SiblingCover(const std::map<std::string, Cover>& siblings, const std::string& name) {
  for (const auto& [stem, cover] : siblings) {
    if (name == stem || absl::StartsWith(name, absl::StrCat(stem, "_")) ||
        absl::EndsWith(name, absl::StrCat("_", stem))) {
      return &cover;
    }
  }
  return nullptr;
}

void Walk(const Message& m, const std::string& path, const Cover& inherited, bool top,
          std::vector<CostField>* out) {
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // set fields, in field-number order

  Cover here = inherited;
  std::map<std::string, Cover> siblings;  // X of each set `X_source`, ordered by name
  for (const FieldDescriptor* fd : fields) {
    if (!IsSource(fd) || fd->is_repeated()) continue;
    const auto& s = static_cast<const viosim::Source&>(r->GetMessage(m, fd));
    if (fd->name() == "source") {
      here = {&s, Join(path, fd->name())};
    } else if (absl::EndsWith(fd->name(), kSourceSuffix)) {
      const std::string stem = fd->name().substr(0, fd->name().size() - sizeof(kSourceSuffix) + 1);
      siblings[stem] = {&s, Join(path, fd->name())};
    }
  }

  for (const FieldDescriptor* fd : fields) {
    if (IsSource(fd)) continue;
    // A resolved scenario has none of these; a file's own do not run.
    if (top && (fd->name() == "variant" || fd->name() == "published" || fd->name() == "matrix")) continue;
    const std::string sub = Join(path, fd->name());
    if (fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (fd->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, fd); ++i) {
          Walk(r->GetRepeatedMessage(m, fd, i), absl::StrCat(sub, "[", i, "]"), here, false, out);
        }
      } else {
        Walk(r->GetMessage(m, fd), sub, here, false, out);
      }
      continue;
    }
    if (fd->is_repeated()) continue;
    if (const Cover* c = SiblingCover(siblings, fd->name()); c != nullptr) {
      AddScalar(m, fd, sub, *c, /*numbers=*/true, out);
    } else if (here.source != nullptr) {
      AddScalar(m, fd, sub, here, /*numbers=*/false, out);
    }
  }
}

}  // namespace

std::vector<CostField> CostFields(const viosim::Scenario& resolved) {
  std::vector<CostField> out;
  Walk(resolved, "", Cover{}, /*top=*/true, &out);
  return out;
}

std::string SourceKindName(viosim::Source::Kind kind) {
  switch (kind) {
    case viosim::Source::MEASURED:
      return "measured";
    case viosim::Source::DERIVED:
      return "derived";
    case viosim::Source::FITTED:
      return "fitted";
    case viosim::Source::DEFINED:
      return "defined";
    case viosim::Source::ESTIMATED:
      return "estimated";
    default:
      return "unspecified";
  }
}

absl::StatusOr<std::string> ScaledAssignment(const CostField& field, double factor) {
  if (!std::isfinite(factor) || factor < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: scale factor %g must be finite and not negative", field.path, factor));
  }
  // Beyond 2^63 (about 9.22e18) no int64 holds the result.
  constexpr double kInt64Limit = 9.2e18;
  switch (field.value) {
    case CostField::Value::kDuration: {
      const double ps = std::round(static_cast<double>(field.duration.ps()) * factor);
      if (std::fabs(ps) >= kInt64Limit) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: %g times %s does not fit in picoseconds",
                                                          field.path, factor, sim::FormatTime(field.duration)));
      }
      return absl::StrCat(field.path, "=", static_cast<int64_t>(ps), "ps");
    }
    case CostField::Value::kInteger: {
      const double n = std::round(field.number * factor);
      if (std::fabs(n) >= kInt64Limit) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %g times %.17g is out of range", field.path, factor, field.number));
      }
      return absl::StrCat(field.path, "=", static_cast<int64_t>(n));
    }
    case CostField::Value::kReal:
      return absl::StrCat(field.path, "=", absl::StrFormat("%.17g", field.number * factor));
  }
  return absl::InternalError("unknown value kind");
}

}  // namespace analysis
