// The names in a folder, for tests that check what a server left on disk.
#ifndef RESIDENT_TESTS_SUPPORT_DIR_LISTING_H_
#define RESIDENT_TESTS_SUPPORT_DIR_LISTING_H_

#include <dirent.h>

#include <string>
#include <vector>

namespace resident::testing_support {

// Every entry of `dir` but "." and ".." (none if it cannot be opened).
inline std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

}  // namespace resident::testing_support

#endif  // RESIDENT_TESTS_SUPPORT_DIR_LISTING_H_
