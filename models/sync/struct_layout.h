// A C struct as the kernel lays it out: each field's offset and size on
// x86_64, and the 64-byte cache line of one allocated instance that each
// field sits on. Models name the fields they touch; the field's line is the
// CacheLine that moves.
//
// An instance is allocated at `align` (its kmalloc size class: kmalloc-64
// and up return objects aligned to their size class's power of two, so a
// line index is the offset / 64 from the instance's start).
#ifndef VIOSIM_MODELS_SYNC_STRUCT_LAYOUT_H_
#define VIOSIM_MODELS_SYNC_STRUCT_LAYOUT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/sync/cache_line.h"
#include "sim/simulator.h"

namespace models {

inline constexpr uint32_t kCacheLineBytes = 64;

struct FieldLayout {
  std::string_view name;  // as the C source spells it ("nr_pending", "wait_barrier.lock")
  uint32_t offset;        // bytes from the struct's start
  uint32_t size;
};

struct StructLayout {
  std::string_view name;    // "struct r10conf"
  std::string_view source;  // where the offsets come from
  uint32_t align;           // the allocation's alignment (>= 64)
  std::span<const FieldLayout> fields;

  // The field called `name`; null if there is none.
  constexpr const FieldLayout* Find(std::string_view name) const {
    for (const FieldLayout& f : fields) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
  static constexpr uint32_t LineOf(const FieldLayout& f) { return f.offset / kCacheLineBytes; }
  // The offset of the field called `name`, and its line; -1 if there is
  // none (usable in static_asserts).
  // (No pointer is compared: under -fsanitize=undefined GCC 12 does not
  // fold a comparison of a pointer into a constexpr array.)
  constexpr int OffsetOf(std::string_view name) const {
    for (const FieldLayout& f : fields) {
      if (f.name == name) return static_cast<int>(f.offset);
    }
    return -1;
  }
  constexpr int LineOfField(std::string_view name) const {
    const int offset = OffsetOf(name);
    return offset < 0 ? -1 : offset / static_cast<int>(kCacheLineBytes);
  }
  // Whether the field lies within one line.
  static constexpr bool OnOneLine(const FieldLayout& f) {
    return f.size > 0 && LineOf(f) == (f.offset + f.size - 1) / kCacheLineBytes;
  }
};

// One allocated instance of a struct: its lines, each made on the first
// access to a field on it, named "INSTANCE+OFFSET" (the line's first byte)
// with the fields reached through it listed.
class StructLines {
 public:
  StructLines(sim::Simulator& sim, std::string instance, const StructLayout& layout, const LineCosts& costs)
      : sim_(&sim), instance_(std::move(instance)), layout_(&layout), costs_(costs) {}
  StructLines(const StructLines&) = delete;
  StructLines& operator=(const StructLines&) = delete;

  // The line `field` sits on. REQUIRES: the layout has the field, on one
  // line (a model names only fields of its own struct; tests pin both).
  CacheLine& Line(std::string_view field);

  const std::string& instance() const { return instance_; }
  const StructLayout& layout() const { return *layout_; }
  // The lines made so far, by offset.
  std::vector<CacheLine*> lines() const;

 private:
  sim::Simulator* sim_;
  std::string instance_;
  const StructLayout* layout_;
  LineCosts costs_;
  std::map<uint32_t, std::unique_ptr<CacheLine>> lines_;  // by line index
};

}  // namespace models

#endif  // VIOSIM_MODELS_SYNC_STRUCT_LAYOUT_H_
