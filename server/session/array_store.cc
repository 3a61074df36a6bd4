#include "server/session/array_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cctype>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "server/base/handle_id.h"
#include "server/base/log.h"
#include "server/base/status_macros.h"

namespace resident {

uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

constexpr char kManifest[] = "MANIFEST";
constexpr char kManifestHeader[] = "resident-manifest 1";
constexpr char kArraysDir[] = "arrays";

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (err) {
    case ENOENT: code = absl::StatusCode::kNotFound; break;
    case EACCES: case EPERM: code = absl::StatusCode::kPermissionDenied; break;
    case ENOSPC: case EDQUOT: code = absl::StatusCode::kResourceExhausted; break;
    default: break;
  }
  return absl::Status(code, absl::StrCat("data dir: cannot ", what, " ", path, ": ",
                                         std::strerror(err)));
}

absl::Status FsyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(err, "fsync", path);
  return absl::OkStatus();
}

// Writes `path` atomically and durably: PATH.tmp, fsync, rename, fsync dir.
absl::Status WriteDurably(const std::string& dir, const std::string& name,
                          absl::string_view contents) {
  const std::string path = absl::StrCat(dir, "/", name);
  const std::string tmp = absl::StrCat(path, ".tmp");
  int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "create", tmp);
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoStatus(err, "write", tmp);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, "fsync", tmp);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, "rename", tmp);
  }
  return FsyncPath(dir, /*directory=*/true);
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "create directory", path);
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data dir: ", path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  ::closedir(d);
  return out;
}

// Tenants may hold any characters: bytes outside [A-Za-z0-9._-] become %XX.
std::string Escape(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out.empty() ? "%" : out;  // "%" alone: the empty tenant
}

bool Unescape(absl::string_view s, std::string* out) {
  out->clear();
  if (s == "%") return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size()) return false;
    if (!absl::SimpleHexAtoi(s.substr(i + 1, 2), &v)) return false;
    out->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ArrayStore>> ArrayStore::Open(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("data dir: empty path");
  RETURN_IF_ERROR(MakeDir(dir));
  RETURN_IF_ERROR(MakeDir(absl::StrCat(dir, "/", kArraysDir)));
  return std::unique_ptr<ArrayStore>(new ArrayStore(dir));
}

std::vector<ArrayStore::Stored> ArrayStore::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Stored> out;
  entries_.clear();
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  // Temporary files are what a crash mid-write leaves: never data.
  for (const std::string& d : {dir_, arrays_dir}) {
    for (const std::string& f : ListDir(d)) {
      if (absl::EndsWith(f, ".tmp")) {
        RESIDENT_LOG(kWarning, "data dir: ignoring and deleting ", d, "/", f,
                     ", a temporary file left by an interrupted write");
        ::unlink(absl::StrCat(d, "/", f).c_str());
      }
    }
  }
  const std::string manifest_path = absl::StrCat(dir_, "/", kManifest);
  absl::StatusOr<std::string> manifest = ReadWhole(manifest_path);
  std::set<std::string> referenced;
  bool dropped = false;
  if (!manifest.ok()) {
    if (manifest.status().code() != absl::StatusCode::kNotFound) {
      RESIDENT_LOG(kError, manifest.status().message(), "; starting with no named arrays");
    }
  } else {
    int line_no = 0;
    for (absl::string_view line : absl::StrSplit(*manifest, '\n', absl::SkipEmpty())) {
      ++line_no;
      if (line_no == 1) {
        if (line != kManifestHeader) {
          RESIDENT_LOG(kError, "data dir: ", manifest_path, " does not start with '",
                       kManifestHeader, "'; starting with no named arrays");
          break;
        }
        continue;
      }
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
      std::string tenant;
      int64_t size = 0;
      uint64_t checksum = 0;
      if (f.size() != 5 || !Unescape(f[0], &tenant) || !absl::SimpleAtoi(f[3], &size) ||
          !absl::SimpleHexAtoi(f[4], &checksum) || f[2].find('/') != absl::string_view::npos) {
        RESIDENT_LOG(kError, "data dir: ", manifest_path, " line ", line_no,
                     " is malformed; ignored");
        dropped = true;
        continue;
      }
      const std::string name(f[1]);
      const std::string file(f[2]);
      referenced.insert(file);
      const std::string path = absl::StrCat(arrays_dir, "/", file);
      auto skip = [&](absl::string_view why) {
        RESIDENT_LOG(kError, "data dir: named array '", name, "' of tenant '", tenant,
                     "': ", path, " ", why, "; ignored, not loaded (renamed to ", file,
                     ".corrupt)");
        ::rename(path.c_str(), absl::StrCat(path, ".corrupt").c_str());
        dropped = true;
      };
      absl::StatusOr<std::string> contents = ReadWhole(path);
      if (!contents.ok()) {
        skip(contents.status().message());
        continue;
      }
      if (static_cast<int64_t>(contents->size()) != size) {
        skip(absl::StrCat("has ", contents->size(), " bytes, the manifest says ", size,
                          " (truncated by a crash?)"));
        continue;
      }
      if (Fnv1a64(*contents) != checksum) {
        skip("fails its checksum");
        continue;
      }
      absl::StatusOr<HostArray> parsed = ParseNpy(*contents);
      if (!parsed.ok()) {
        skip(absl::StrCat("is not a valid .npy file: ", parsed.status().message()));
        continue;
      }
      if (entries_.count({tenant, name}) != 0) {
        RESIDENT_LOG(kError, "data dir: ", manifest_path, " line ", line_no,
                     " names '", name, "' of tenant '", tenant, "' again; ignored");
        dropped = true;
        continue;
      }
      entries_[{tenant, name}] = Entry{file, size, checksum};
      out.push_back(Stored{tenant, name, *std::move(parsed)});
    }
  }
  // Data files no entry names were written by a keep that never finished
  // (the manifest was not updated): never acknowledged, so removed.
  for (const std::string& f : ListDir(arrays_dir)) {
    if (absl::EndsWith(f, ".npy") && referenced.count(f) == 0) {
      RESIDENT_LOG(kWarning, "data dir: deleting ", arrays_dir, "/", f,
                   ", which no manifest entry names (an unfinished keep)");
      ::unlink(absl::StrCat(arrays_dir, "/", f).c_str());
    }
  }
  if (dropped) {
    absl::Status s = WriteManifest();
    if (!s.ok()) RESIDENT_LOG(kError, s.message());
  }
  RESIDENT_LOG(kInfo, "data dir ", dir_, ": ", out.size(), " named arrays loaded");
  return out;
}

absl::Status ArrayStore::WriteManifest() {
  std::string text = absl::StrCat(kManifestHeader, "\n");
  for (const auto& [key, e] : entries_) {
    absl::StrAppend(&text, Escape(key.first), " ", key.second, " ", e.file, " ", e.size,
                    " ", absl::Hex(e.checksum), "\n");
  }
  return WriteDurably(dir_, kManifest, text);
}

absl::Status ArrayStore::Put(const std::string& tenant, const std::string& name,
                             DType dtype, const Shape& shape, absl::string_view bytes) {
  const std::string file = absl::StrCat(HandleId::Random().ToHex().substr(0, 16), ".npy");
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  std::string contents = SerializeNpy(dtype, shape, std::string_view(bytes.data(), bytes.size()));
  const Entry entry{file, static_cast<int64_t>(contents.size()), Fnv1a64(contents)};
  RETURN_IF_ERROR(WriteDurably(arrays_dir, file, contents));
  contents.clear();
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.insert({{tenant, name}, entry});
  if (!inserted) {
    ::unlink(absl::StrCat(arrays_dir, "/", file).c_str());
    return absl::AlreadyExistsError(absl::StrCat("name '", name, "' is already stored"));
  }
  absl::Status s = WriteManifest();
  if (!s.ok()) {
    entries_.erase(it);
    ::unlink(absl::StrCat(arrays_dir, "/", file).c_str());
  }
  return s;
}

absl::Status ArrayStore::Remove(const std::string& tenant,
                                const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::pair<std::string, std::string>, Entry>> removed;
  for (const std::string& n : names) {
    auto it = entries_.find({tenant, n});
    if (it == entries_.end()) continue;
    removed.emplace_back(it->first, it->second);
    entries_.erase(it);
  }
  if (removed.empty()) return absl::OkStatus();
  if (absl::Status s = WriteManifest(); !s.ok()) {
    for (auto& [k, e] : removed) entries_[k] = e;
    return s;
  }
  const std::string arrays_dir = absl::StrCat(dir_, "/", kArraysDir);
  for (auto& [k, e] : removed) ::unlink(absl::StrCat(arrays_dir, "/", e.file).c_str());
  return FsyncPath(arrays_dir, /*directory=*/true);
}

}  // namespace resident
