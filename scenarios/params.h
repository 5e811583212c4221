// Reading a scenario's parameters by path, recording every read.
//
// Every stack part, workload and run control reads the fields of its
// resolved scenario through one Params reader. Each scalar read (a value,
// or whether the field is set, which decides the same way) is recorded in
// a ReadSet as the path `--set` names it ("stack.raid10.plug.value",
// "platform.cpus", "workload.lockbench.think.exponential.mean"), so after a
// variant is built the set of paths it reads is known: what a what-if may
// change (analysis/reads.h refuses a `--set` no variant reads), what
// `viosim list --params` prints, and what explain and the bands vary.
//
// A read of a field whose value is not read, only whether it is set, is a
// read all the same: a stack that takes platform.lock_handoff when given
// reads platform.lock_handoff.value whether or not the scenario gives it.
// A field read only on one branch (kvm.mmio_exit_kernel, when ioeventfd is
// on) is recorded only when that branch is taken.
//
// Field names are the schema's; a name the message does not have is a
// programming error and stops the program with the name.
#ifndef VIOSIM_SCENARIOS_PARAMS_H_
#define VIOSIM_SCENARIOS_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "models/cpu/param.h"
#include "scenarios/scenario.pb.h"
#include "sim/distribution.h"
#include "sim/time.h"

namespace viosim {

// The scalar paths a build read, as `--set` names them, sorted.
class ReadSet {
 public:
  void Add(std::string path) { paths_.insert(std::move(path)); }
  bool Contains(absl::string_view path) const { return paths_.contains(path); }
  const absl::btree_set<std::string>& paths() const { return paths_; }
  void Merge(const ReadSet& other) { paths_.insert(other.paths_.begin(), other.paths_.end()); }

 private:
  absl::btree_set<std::string> paths_;
};

// A reader of one message of a scenario, at its path from the root. Cheap
// to copy; it refers to the message and the ReadSet, which must outlive it.
class Params {
 public:
  // The whole scenario, recording into `*reads` (null: record nothing).
  Params(const Scenario& root, ReadSet* reads);

  // The message field `name` of this one (its default when unset); records
  // nothing by itself.
  Params operator[](absl::string_view name) const;
  // The path of this message, "" at the root.
  const std::string& path() const { return path_; }
  // The path of the field `name` of this message.
  std::string PathOf(absl::string_view name) const;
  // The message itself, for a typed look that is not a read (a name to
  // print, a oneof case); every parameter must be read through the
  // functions below.
  const google::protobuf::Message& message() const { return *msg_; }

  // Records a read of `name` below this message that is not a schema field
  // (a path the loader maps elsewhere: workload.fio.OPTION).
  void RecordRead(absl::string_view name) const { Record(PathOf(name)); }

  // Whether the scalar field `name` is set (recorded as a read of it).
  bool Has(absl::string_view name) const;
  // The scalar field's value, or its default when unset (recorded).
  int64_t Int(absl::string_view name) const;
  double Real(absl::string_view name) const;
  bool Bool(absl::string_view name) const;
  std::string Str(absl::string_view name) const;
  // An enum field's value number.
  int Enum(absl::string_view name) const;
  // A TIME field as a duration; InvalidArgument naming the field when it
  // does not parse.
  absl::StatusOr<sim::Time> Time(absl::string_view name) const;

  // The Cost field `name`: whether it is set, and its value with its
  // source kind. Each records the read of `name.value`.
  bool HasCost(absl::string_view name) const;
  // InvalidArgument "field 'P' is required" when unset.
  absl::StatusOr<models::Param<sim::Time>> RequiredCost(absl::string_view name) const;
  // Replaces `*out` by the scenario's value when it gives one.
  absl::Status OptionalCost(absl::string_view name, models::Param<sim::Time>* out) const;
  // A cost read as a duration when set, else `fallback`.
  absl::StatusOr<sim::Time> CostOr(absl::string_view name, sim::Time fallback) const;

  // The Distribution field `name` (required): records every parameter of
  // the kind it holds.
  absl::StatusOr<sim::Distribution> Distribution(absl::string_view name) const;

 private:
  Params(const google::protobuf::Message* msg, ReadSet* reads, std::string path)
      : msg_(msg), reads_(reads), path_(std::move(path)) {}
  const google::protobuf::FieldDescriptor* Field(absl::string_view name) const;
  const google::protobuf::FieldDescriptor* Scalar(absl::string_view name) const;
  void Record(std::string path) const;

  const google::protobuf::Message* msg_;
  ReadSet* reads_;
  std::string path_;
};

// A Distribution message as the simulator's distribution; InvalidArgument
// naming `field` (its --set path) when a duration does not parse or the
// parameters do not make a distribution.
absl::StatusOr<sim::Distribution> ToDistribution(const viosim::Distribution& d, const std::string& field);

// Every scalar path of `descriptor`'s schema below `prefix`, depth first in
// field-number order: singular fields only (a repeated field has no path
// without an index), message fields walked into, a field of type
// viosim.Source walked into too. For tests and for `list --params`.
std::vector<std::string> SchemaScalarPaths(const google::protobuf::Descriptor* descriptor,
                                           const std::string& prefix = "");

}  // namespace viosim

#endif  // VIOSIM_SCENARIOS_PARAMS_H_
