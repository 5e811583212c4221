#include "scenarios/params.h"

#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "scenarios/units.h"

namespace viosim {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string Join(const std::string& path, absl::string_view name) {
  return path.empty() ? std::string(name) : absl::StrCat(path, ".", name);
}

absl::StatusOr<sim::Time> TimeField(const std::string& text, const std::string& field) {
  absl::StatusOr<sim::Time> t = ParseDuration(text);
  if (!t.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", t.status().message()));
  }
  return *t;
}

// Records every scalar of `m` below `path` that a reader of the whole
// message reads: each singular scalar, each element of a repeated field,
// the members of the oneof case it holds (not the others), and not its
// `source` (what the number is, not the number).
void RecordLeaves(const Message& m, const std::string& path, ReadSet* reads) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->message_type() == Source::descriptor()) continue;
    if (const google::protobuf::OneofDescriptor* o = f->containing_oneof();
        o != nullptr && r->GetOneofFieldDescriptor(m, o) != f) {
      continue;
    }
    const std::string here = Join(path, f->name());
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(m, f); ++k) {
        const std::string at = absl::StrCat(here, "[", k, "]");
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          RecordLeaves(r->GetRepeatedMessage(m, f, k), at, reads);
        } else {
          reads->Add(at);
        }
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      RecordLeaves(r->GetMessage(m, f), here, reads);
    } else {
      reads->Add(here);
    }
  }
}

void SchemaPaths(const Descriptor* d, const std::string& prefix, int depth, std::vector<std::string>* out) {
  if (depth > 12) return;  // Scenario holds Scenario (variant overlays): not walked into
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    const std::string here = Join(prefix, f->name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->message_type() == Scenario::descriptor()) continue;
      SchemaPaths(f->message_type(), here, depth + 1, out);
    } else {
      out->push_back(here);
    }
  }
}

}  // namespace

Params::Params(const Scenario& root, ReadSet* reads) : msg_(&root), reads_(reads) {}

const FieldDescriptor* Params::Field(absl::string_view name) const {
  const FieldDescriptor* f = msg_->GetDescriptor()->FindFieldByName(std::string(name));
  if (f == nullptr) {
    ABSL_RAW_LOG(FATAL, "Params: %s has no field '%s' (at '%s')", msg_->GetDescriptor()->full_name().c_str(),
                 std::string(name).c_str(), path_.c_str());
  }
  if (f->is_repeated()) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is repeated", PathOf(name).c_str());
  }
  return f;
}

const FieldDescriptor* Params::Scalar(absl::string_view name) const {
  const FieldDescriptor* f = Field(name);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is a message, not a scalar", PathOf(name).c_str());
  }
  Record(PathOf(name));
  return f;
}

void Params::Record(std::string path) const {
  if (reads_ != nullptr) reads_->Add(std::move(path));
}

std::string Params::PathOf(absl::string_view name) const { return Join(path_, name); }

Params Params::operator[](absl::string_view name) const {
  const FieldDescriptor* f = Field(name);
  if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is a scalar, not a message", PathOf(name).c_str());
  }
  return Params(&msg_->GetReflection()->GetMessage(*msg_, f), reads_, PathOf(name));
}

bool Params::Has(absl::string_view name) const { return msg_->GetReflection()->HasField(*msg_, Scalar(name)); }

int64_t Params::Int(absl::string_view name) const {
  const FieldDescriptor* f = Scalar(name);
  const Reflection* r = msg_->GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(*msg_, f);
    case FieldDescriptor::CPPTYPE_INT64: return r->GetInt64(*msg_, f);
    case FieldDescriptor::CPPTYPE_UINT32: return r->GetUInt32(*msg_, f);
    case FieldDescriptor::CPPTYPE_UINT64: return static_cast<int64_t>(r->GetUInt64(*msg_, f));
    default: ABSL_RAW_LOG(FATAL, "Params: field '%s' is not an integer", PathOf(name).c_str());
  }
  return 0;
}

double Params::Real(absl::string_view name) const {
  const FieldDescriptor* f = Scalar(name);
  const Reflection* r = msg_->GetReflection();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) return r->GetDouble(*msg_, f);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) return r->GetFloat(*msg_, f);
  ABSL_RAW_LOG(FATAL, "Params: field '%s' is not a real number", PathOf(name).c_str());
  return 0;
}

bool Params::Bool(absl::string_view name) const {
  const FieldDescriptor* f = Scalar(name);
  if (f->cpp_type() != FieldDescriptor::CPPTYPE_BOOL) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is not a bool", PathOf(name).c_str());
  }
  return msg_->GetReflection()->GetBool(*msg_, f);
}

std::string Params::Str(absl::string_view name) const {
  const FieldDescriptor* f = Scalar(name);
  if (f->cpp_type() != FieldDescriptor::CPPTYPE_STRING) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is not a string", PathOf(name).c_str());
  }
  return msg_->GetReflection()->GetString(*msg_, f);
}

int Params::Enum(absl::string_view name) const {
  const FieldDescriptor* f = Scalar(name);
  if (f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is not an enum", PathOf(name).c_str());
  }
  return msg_->GetReflection()->GetEnumValue(*msg_, f);
}

absl::StatusOr<sim::Time> Params::Time(absl::string_view name) const {
  return TimeField(Str(name), PathOf(name));
}

bool Params::HasCost(absl::string_view name) const {
  const FieldDescriptor* f = Field(name);
  if (f->message_type() != Cost::descriptor()) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is not a Cost", PathOf(name).c_str());
  }
  Record(absl::StrCat(PathOf(name), ".value"));
  return msg_->GetReflection()->HasField(*msg_, f);
}

absl::StatusOr<models::Param<sim::Time>> Params::RequiredCost(absl::string_view name) const {
  if (!HasCost(name)) return absl::InvalidArgumentError(absl::StrCat("field '", PathOf(name), "' is required"));
  models::Param<sim::Time> p;
  if (absl::Status s = OptionalCost(name, &p); !s.ok()) return s;
  return p;
}

absl::Status Params::OptionalCost(absl::string_view name, models::Param<sim::Time>* out) const {
  if (!HasCost(name)) return absl::OkStatus();
  const Cost& c = static_cast<const Cost&>(msg_->GetReflection()->GetMessage(*msg_, Field(name)));
  absl::StatusOr<sim::Time> t = TimeOf(c.value());
  if (!t.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field '", PathOf(name), ".value': ", t.status().message()));
  }
  out->value = *t;
  switch (c.source().kind()) {
    case Source::MEASURED: out->source.kind = models::SourceKind::kMeasured; break;
    case Source::DERIVED: out->source.kind = models::SourceKind::kDerived; break;
    case Source::FITTED: out->source.kind = models::SourceKind::kFitted; break;
    default: out->source.kind = models::SourceKind::kEstimated; break;
  }
  out->source.ref = "set by the scenario";
  return absl::OkStatus();
}

absl::StatusOr<sim::Time> Params::CostOr(absl::string_view name, sim::Time fallback) const {
  models::Param<sim::Time> p{fallback, {}};
  if (absl::Status s = OptionalCost(name, &p); !s.ok()) return s;
  return p.value;
}

absl::StatusOr<sim::Distribution> Params::Distribution(absl::string_view name) const {
  const FieldDescriptor* f = Field(name);
  if (f->message_type() != viosim::Distribution::descriptor()) {
    ABSL_RAW_LOG(FATAL, "Params: field '%s' is not a Distribution", PathOf(name).c_str());
  }
  const auto& d = static_cast<const viosim::Distribution&>(msg_->GetReflection()->GetMessage(*msg_, f));
  if (reads_ != nullptr) RecordLeaves(d, PathOf(name), reads_);
  if (!msg_->GetReflection()->HasField(*msg_, f)) {
    return absl::InvalidArgumentError(absl::StrCat("field '", PathOf(name), "' is required"));
  }
  return ToDistribution(d, PathOf(name));
}

std::vector<std::string> SchemaScalarPaths(const Descriptor* descriptor, const std::string& prefix) {
  std::vector<std::string> out;
  SchemaPaths(descriptor, prefix, 0, &out);
  return out;
}

absl::StatusOr<sim::Distribution> ToDistribution(const viosim::Distribution& d, const std::string& field) {
  auto t = [&field](const std::string& text, const char* sub) {
    return TimeField(text, absl::StrCat(field, ".", sub));
  };
  absl::StatusOr<sim::Distribution> out = absl::InvalidArgumentError(
      absl::StrCat("field '", field, "': no distribution given (exponential, constant, uniform, normal, ",
                   "lognormal or empirical)"));
  switch (d.kind_case()) {
    case viosim::Distribution::kExponential: {
      absl::StatusOr<sim::Time> mean = t(d.exponential().mean(), "exponential.mean");
      if (!mean.ok()) return mean.status();
      return sim::Distribution::Exponential(*mean);
    }
    case viosim::Distribution::kConstant: {
      absl::StatusOr<sim::Time> v = t(d.constant().value(), "constant.value");
      if (!v.ok()) return v.status();
      return sim::Distribution::Constant(*v);
    }
    case viosim::Distribution::kUniform: {
      absl::StatusOr<sim::Time> lo = t(d.uniform().low(), "uniform.low");
      if (!lo.ok()) return lo.status();
      absl::StatusOr<sim::Time> hi = t(d.uniform().high(), "uniform.high");
      if (!hi.ok()) return hi.status();
      out = sim::Distribution::Uniform(*lo, *hi);
      break;
    }
    case viosim::Distribution::kNormal: {
      absl::StatusOr<sim::Time> m = t(d.normal().mean(), "normal.mean");
      if (!m.ok()) return m.status();
      absl::StatusOr<sim::Time> sd = t(d.normal().stddev(), "normal.stddev");
      if (!sd.ok()) return sd.status();
      out = sim::Distribution::Normal(*m, *sd);
      break;
    }
    case viosim::Distribution::kLognormal: {
      absl::StatusOr<sim::Time> m = t(d.lognormal().mean(), "lognormal.mean");
      if (!m.ok()) return m.status();
      absl::StatusOr<sim::Time> sd = t(d.lognormal().stddev(), "lognormal.stddev");
      if (!sd.ok()) return sd.status();
      out = sim::Distribution::Lognormal(*m, *sd);
      break;
    }
    case viosim::Distribution::kEmpirical: {
      std::vector<sim::Distribution::Point> points;
      for (int i = 0; i < d.empirical().point_size(); ++i) {
        const auto& pt = d.empirical().point(i);
        absl::StatusOr<sim::Time> v = TimeField(pt.value(), absl::StrCat(field, ".empirical.point[", i, "].value"));
        if (!v.ok()) return v.status();
        points.push_back({pt.p(), *v});
      }
      out = sim::Distribution::Empirical(points);
      break;
    }
    case viosim::Distribution::KIND_NOT_SET:
      return out;
  }
  if (!out.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", out.status().message()));
  }
  return out;
}

}  // namespace viosim
