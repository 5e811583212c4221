// Replays a fuzz target's corpus, and every input that once crashed it,
// under `bazel test`: each file of the folders given as arguments is fed to
// LLVMFuzzerTestOneInput once. The test passes if none crashes, hangs (the
// test's timeout) or trips a sanitizer under --config=asan.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!std::filesystem::exists(argv[i], ec)) continue;  // no crash was ever kept for this target
    for (const auto& e : std::filesystem::directory_iterator(argv[i], ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    if (ec) {
      std::fprintf(stderr, "replay: cannot list %s: %s\n", argv[i], ec.message().c_str());
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, none crashed\n", files.size());
  return 0;
}
