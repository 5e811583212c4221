#include "scenarios/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/stubs/common.h"

namespace viosim {

absl::StatusOr<std::string> ReadInputFile(const std::string& path,
                                          absl::string_view what) {
  auto failure = [&](int error) {
    return absl::NotFoundError(absl::StrCat("cannot read ", what, " '", path,
                                            "': ", std::strerror(error)));
  };
  // O_NONBLOCK: opening a FIFO with no writer must not wait for one; the
  // file type is checked before anything is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return failure(errno);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return failure(errno);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read ", what, " '", path, "': not a regular file (",
        S_ISDIR(st.st_mode)    ? "a directory"
        : S_ISFIFO(st.st_mode) ? "a FIFO"
        : S_ISCHR(st.st_mode)  ? "a character device"
        : S_ISBLK(st.st_mode)  ? "a block device"
        : S_ISSOCK(st.st_mode) ? "a socket"
                               : "a special file",
        "); inputs must be regular files"));
  }
  auto too_large = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read ", what, " '", path, "': larger than ", kMaxInputFileBytes,
        " bytes, the most an input file may hold"));
  };
  if (st.st_size > kMaxInputFileBytes) return too_large();
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return failure(errno);
    }
    if (n == 0) break;
    // The file may grow while it is read; the bound holds all the same.
    if (static_cast<int64_t>(data.size()) + n > kMaxInputFileBytes) return too_large();
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

size_t ValidUtf8Prefix(absl::string_view text) {
  return static_cast<size_t>(google::protobuf::internal::UTF8SpnStructurallyValid(
      google::protobuf::StringPiece(text.data(), text.size())));
}

std::string Utf8Problem(absl::string_view text) {
  const size_t valid = ValidUtf8Prefix(text);
  if (valid >= text.size()) return "";
  return absl::StrFormat("not valid UTF-8: byte 0x%02x at byte %d", static_cast<unsigned char>(text[valid]),
                         valid + 1);
}

}  // namespace viosim
