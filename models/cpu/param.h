// A model parameter together with where its value comes from.
//
// Every cost or device figure a model is built with should say whether it
// was measured (and where), read off a vendor specification, derived by
// arithmetic from other sourced numbers, fitted to a published cell, or is
// an estimate. The same kinds as scenario.proto's Source, plus a vendor
// specification.
#ifndef VIOSIM_MODELS_CPU_PARAM_H_
#define VIOSIM_MODELS_CPU_PARAM_H_

#include <cstdint>
#include <string_view>

namespace models {

enum class SourceKind : uint8_t {
  kMeasured,   // someone measured it and published it: ref is the citation
  kSpec,       // a vendor's specification sheet
  kDerived,    // arithmetic on sourced numbers: ref shows the formula
  kFitted,     // fitted to a published cell: ref names the cell
  kEstimated,  // an estimate with its reasoning in ref: calibrate before trusting
  kDefined,    // a parameter of the experiment, not of a machine
};

inline const char* SourceKindName(SourceKind k) {
  switch (k) {
    case SourceKind::kMeasured: return "measured";
    case SourceKind::kSpec: return "spec";
    case SourceKind::kDerived: return "derived";
    case SourceKind::kFitted: return "fitted";
    case SourceKind::kEstimated: return "estimated";
    case SourceKind::kDefined: return "defined";
  }
  return "?";
}

struct Source {
  SourceKind kind = SourceKind::kEstimated;
  std::string_view ref;  // citation, formula or reasoning; static storage
};

// A value and its source. Models read `.value`; reports print `.source`.
template <class T>
struct Param {
  T value{};
  Source source{};
};

}  // namespace models

#endif  // VIOSIM_MODELS_CPU_PARAM_H_
