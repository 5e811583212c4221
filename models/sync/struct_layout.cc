#include "models/sync/struct_layout.h"

#include <cstdlib>
#include <iostream>

#include "sim/check.h"
#include "absl/strings/str_cat.h"

namespace models {

CacheLine& StructLines::Line(std::string_view field) {
  const FieldLayout* f = layout_->Find(field);
  // A model's own mistake, not an input's: the layout tests pin both.
  if (f == nullptr || !StructLayout::OnOneLine(*f)) std::cerr << layout_->name << ": field '" << field << "'\n";
  VIOSIM_CHECK(f != nullptr && StructLayout::OnOneLine(*f), "the struct has the field, on one line");
  const uint32_t index = StructLayout::LineOf(*f);
  std::unique_ptr<CacheLine>& l = lines_[index];
  if (l == nullptr) {
    l = std::make_unique<CacheLine>(*sim_, absl::StrCat(instance_, "+", index * kCacheLineBytes), costs_);
  }
  const std::string& have = l->fields();
  const std::string name(field);
  if (have.empty()) {
    l->set_fields(name);
  } else if (absl::StrCat(", ", have, ", ").find(absl::StrCat(", ", name, ", ")) == std::string::npos) {
    l->set_fields(absl::StrCat(have, ", ", name));
  }
  return *l;
}

std::vector<CacheLine*> StructLines::lines() const {
  std::vector<CacheLine*> out;
  for (const auto& [index, l] : lines_) out.push_back(l.get());
  return out;
}

}  // namespace models
