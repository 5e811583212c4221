#include "bench/line_topology.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace linebench {
namespace {

// The whole of a small sysfs file, or NotFound naming it.
absl::StatusOr<std::string> ReadSmall(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::ostringstream s;
  s << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(s.str()));
}

absl::StatusOr<int> ReadInt(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmall(path);
  if (!text.ok()) return text.status();
  int v = 0;
  if (!absl::SimpleAtoi(*text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": \"", *text, "\" is not an integer"));
  }
  return v;
}

absl::StatusOr<std::vector<int>> ReadCpuList(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmall(path);
  if (!text.ok()) return text.status();
  return ParseCpuList(*text, path);
}

// The L3's shared_cpu_list of `cpu_dir`, or an empty list if no cache/index*
// entry has level 3 (or the folder is missing, as in some VMs).
absl::StatusOr<std::vector<int>> ReadL3(const std::string& cpu_dir) {
  const std::filesystem::path cache = std::filesystem::path(cpu_dir) / "cache";
  std::error_code ec;
  if (!std::filesystem::is_directory(cache, ec)) return std::vector<int>{};
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(cache, ec)) {
    if (absl::StartsWith(e.path().filename().string(), "index")) entries.push_back(e.path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& index : entries) {
    absl::StatusOr<int> level = ReadInt((index / "level").string());
    if (!level.ok()) return level.status();
    if (*level != 3) continue;
    return ReadCpuList((index / "shared_cpu_list").string());
  }
  return std::vector<int>{};
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view l = line;
    if (!absl::ConsumePrefix(&l, "model name")) continue;
    const size_t colon = l.find(':');
    if (colon == absl::string_view::npos) continue;
    return std::string(absl::StripAsciiWhitespace(l.substr(colon + 1)));
  }
  return "unknown CPU";
}

}  // namespace

const char* DistanceName(Distance d) {
  switch (d) {
    case Distance::kSameCpu: return "same_cpu";
    case Distance::kSameCore: return "same_core";
    case Distance::kSameLlc: return "same_llc";
    case Distance::kSameSocket: return "same_socket";
    case Distance::kOtherSocket: return "other_socket";
    case Distance::kSameSocketLlcUnknown: return "llc_unknown";
  }
  return "?";
}

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text, absl::string_view what) {
  std::set<int> cpus;
  auto bad = [&](absl::string_view part, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", part, "\" ", why, " (expected a CPU list such as 0-3,8)"));
  };
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return bad(text, "is empty");
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    const std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int lo = 0, hi = 0;
    if (!absl::SimpleAtoi(ends[0], &lo) || lo < 0) return bad(part, "is not a CPU number or range");
    hi = lo;
    if (ends.size() == 2 && (!absl::SimpleAtoi(ends[1], &hi) || hi < lo)) return bad(part, "is not a range lo-hi");
    if (hi > 65535) return bad(part, "is beyond CPU 65535");
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

const CpuInfo& Topology::Of(int cpu) const {
  return *std::lower_bound(cpus.begin(), cpus.end(), cpu, [](const CpuInfo& c, int n) { return c.cpu < n; });
}

Distance Topology::Between(int a, int b) const {
  if (a == b) return Distance::kSameCpu;
  const CpuInfo& x = Of(a);
  const CpuInfo& y = Of(b);
  if (x.socket != y.socket) return Distance::kOtherSocket;
  if (std::find(x.siblings.begin(), x.siblings.end(), b) != x.siblings.end()) return Distance::kSameCore;
  if (x.llc < 0 || y.llc < 0) return Distance::kSameSocketLlcUnknown;
  return x.llc == y.llc ? Distance::kSameLlc : Distance::kSameSocket;
}

int Topology::Sockets() const {
  std::set<int> s;
  for (const CpuInfo& c : cpus) s.insert(c.socket);
  return static_cast<int>(s.size());
}

int Topology::Llcs() const {
  std::set<int> s;
  for (const CpuInfo& c : cpus) {
    if (c.llc >= 0) s.insert(c.llc);
  }
  return static_cast<int>(s.size());
}

bool Topology::LlcKnown() const {
  return std::all_of(cpus.begin(), cpus.end(), [](const CpuInfo& c) { return c.llc >= 0; });
}

bool Topology::Smt() const {
  return std::any_of(cpus.begin(), cpus.end(), [](const CpuInfo& c) { return c.siblings.size() > 1; });
}

absl::StatusOr<Topology> ReadTopology(const std::string& root, const std::vector<int>& only) {
  absl::StatusOr<std::vector<int>> online = ReadCpuList(root + "/online");
  if (!online.ok()) return online.status();
  std::vector<int> chosen = *online;
  if (!only.empty()) {
    for (int c : only) {
      if (!std::binary_search(online->begin(), online->end(), c)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--cpus: CPU ", c, " is not online (", root, "/online lists the online CPUs)"));
      }
    }
    chosen = only;
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  }
  Topology topo;
  topo.model = CpuModel();
  for (int c : chosen) {
    const std::string dir = absl::StrCat(root, "/cpu", c);
    CpuInfo info;
    info.cpu = c;
    absl::StatusOr<int> socket = ReadInt(dir + "/topology/physical_package_id");
    if (!socket.ok()) return socket.status();
    absl::StatusOr<int> core = ReadInt(dir + "/topology/core_id");
    if (!core.ok()) return core.status();
    absl::StatusOr<std::vector<int>> siblings = ReadCpuList(dir + "/topology/thread_siblings_list");
    if (!siblings.ok()) return siblings.status();
    absl::StatusOr<std::vector<int>> l3 = ReadL3(dir);
    if (!l3.ok()) return l3.status();
    info.socket = *socket;
    info.core = *core;
    for (int s : *siblings) {
      if (std::binary_search(chosen.begin(), chosen.end(), s)) info.siblings.push_back(s);
    }
    if (std::find(info.siblings.begin(), info.siblings.end(), c) == info.siblings.end()) {
      info.siblings.push_back(c);
      std::sort(info.siblings.begin(), info.siblings.end());
    }
    info.llc = l3->empty() ? -1 : l3->front();
    topo.cpus.push_back(std::move(info));
  }
  return topo;
}

std::array<std::vector<std::pair<int, int>>, kDistances> PairsByDistance(const Topology& topo) {
  std::array<std::vector<std::pair<int, int>>, kDistances> pairs;
  for (size_t i = 0; i < topo.cpus.size(); ++i) {
    for (size_t j = i + 1; j < topo.cpus.size(); ++j) {
      const int a = topo.cpus[i].cpu, b = topo.cpus[j].cpu;
      pairs[static_cast<int>(topo.Between(a, b))].emplace_back(a, b);
    }
  }
  return pairs;
}

std::vector<int> PlacementOrder(const Topology& topo, absl::string_view placement) {
  // LLC domains by socket; a CPU without a reported L3 counts as its socket's.
  std::map<int, std::map<int, std::vector<const CpuInfo*>>> groups;  // socket -> llc -> CPUs
  for (const CpuInfo& c : topo.cpus) groups[c.socket][c.llc].push_back(&c);
  auto rank = [](const CpuInfo* c) {  // 0: a core's first thread, 1: its second, ...
    return std::find(c->siblings.begin(), c->siblings.end(), c->cpu) - c->siblings.begin();
  };
  std::vector<std::vector<std::vector<int>>> per_socket;  // socket -> domain -> CPUs
  for (auto& [socket, llcs] : groups) {
    per_socket.emplace_back();
    for (auto& [llc, members] : llcs) {
      // One CPU per core first, then the second thread of each core, ...
      std::stable_sort(members.begin(), members.end(), [&](const CpuInfo* a, const CpuInfo* b) {
        return std::tuple(rank(a), a->cpu) < std::tuple(rank(b), b->cpu);
      });
      std::vector<int>& d = per_socket.back().emplace_back();
      for (const CpuInfo* c : members) d.push_back(c->cpu);
    }
  }
  std::vector<int> order;
  if (placement == "llc-local") {
    for (const auto& s : per_socket) {
      for (const auto& d : s) order.insert(order.end(), d.begin(), d.end());
    }
    return order;
  }
  // spread: the domains with sockets alternating (domain i of socket 0, of
  // socket 1, ..., then domain i+1), then a CPU of each domain in turn.
  std::vector<const std::vector<int>*> interleaved;
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& s : per_socket) {
      if (i < s.size()) interleaved.push_back(&s[i]), any = true;
    }
    if (!any) break;
  }
  for (size_t r = 0;; ++r) {
    bool any = false;
    for (const std::vector<int>* d : interleaved) {
      if (r < d->size()) order.push_back((*d)[r]), any = true;
    }
    if (!any) break;
  }
  return order;
}

}  // namespace linebench
