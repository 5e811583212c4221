// Field paths, the syntax of --set ("stack.raid10.flush_wake_up",
// "variant[0].overlay.run.duration"): split into steps and walked down a
// message to the field they name. The loader's --set and field locations
// (field_path.cc, where these are defined) and the cross-field checks
// (checks.cc) walk paths with them.
#ifndef VIOSIM_SCENARIOS_FIELD_WALK_H_
#define VIOSIM_SCENARIOS_FIELD_WALK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace viosim::internal {

// One step of a field path: a field name and, for repeated fields, an index.
struct PathStep {
  std::string name;
  int index = -1;  // -1: none given
};

// `path` split at its dots; InvalidArgument saying what is malformed (an
// empty path, a piece that is not a field name, an index that is not
// N >= 0).
absl::StatusOr<std::vector<PathStep>> SplitFieldPath(absl::string_view path);

// The field of `d` that `step` names, if the step fits it (an index for a
// repeated field, none for a singular one); else null.
const google::protobuf::FieldDescriptor* StepField(const google::protobuf::Descriptor* d, const PathStep& step);

// Whether the field at `path` is set in `m`, and every message on the way
// to it (an indexed element: within its field's size). False for a path
// that does not walk down `m`.
bool HasPath(const google::protobuf::Message& m, absl::string_view path);

}  // namespace viosim::internal

#endif  // VIOSIM_SCENARIOS_FIELD_WALK_H_
