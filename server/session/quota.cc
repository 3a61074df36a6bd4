#include "server/session/quota.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/byte_size.h"

namespace resident {

const Quota& QuotaConfig::For(const std::string& tenant) const {
  auto it = tenants.find(tenant);
  return it == tenants.end() ? defaults : it->second;
}

bool ParseQuotaBytes(absl::string_view text, int64_t* out) {
  if (text == "unlimited") {
    *out = Quota::kUnlimited;
    return true;
  }
  return ParseByteSize(text, out);
}

absl::StatusOr<QuotaConfig> ParseQuotaConfig(absl::string_view text, absl::string_view source) {
  QuotaConfig config;
  bool have_default = false;
  // Tenant lines are applied after the whole file is read so that a
  // `default` line below them still supplies their missing keys.
  struct TenantLine {
    std::string tenant;
    int line;
    bool has_bytes = false, has_arrays = false;
    Quota q;
  };
  std::vector<TenantLine> tenant_lines;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    auto error = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(source, " line ", line_no, ": ", why,
                                                     " (line: '", absl::StripAsciiWhitespace(raw),
                                                     "')"));
    };
    absl::string_view line = raw.substr(0, raw.find('#'));
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    size_t first_key = 1;
    TenantLine t;
    t.line = line_no;
    if (words[0] == "default") {
      if (have_default) return error("a second 'default' line");
      have_default = true;
    } else if (words[0] == "tenant") {
      if (words.size() < 2 || words[1].find('=') != absl::string_view::npos) {
        return error("'tenant' needs a tenant name before its limits");
      }
      t.tenant = std::string(words[1]);
      for (const TenantLine& other : tenant_lines) {
        if (other.tenant == t.tenant) {
          return error(
              absl::StrCat("tenant '", t.tenant, "' already has a line (line ", other.line, ")"));
        }
      }
      first_key = 2;
    } else {
      return error(absl::StrCat("unknown keyword '", words[0],
                                "'; lines start with 'default' or 'tenant NAME'"));
    }
    for (size_t i = first_key; i < words.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(words[i], absl::MaxSplits('=', 1));
      int64_t v = 0;
      if (kv.first == "bytes") {
        if (!ParseQuotaBytes(kv.second, &v)) {
          return error(absl::StrCat("bad bytes '", kv.second,
                                    "' (a number with an optional K/M/G/T suffix, or unlimited)"));
        }
        t.q.max_bytes = v;
        t.has_bytes = true;
      } else if (kv.first == "arrays") {
        if (kv.second == "unlimited") {
          v = Quota::kUnlimited;
        } else if (!absl::SimpleAtoi(kv.second, &v) || v < 0) {
          return error(
              absl::StrCat("bad arrays '", kv.second, "' (a non-negative number, or unlimited)"));
        }
        t.q.max_arrays = v;
        t.has_arrays = true;
      } else {
        return error(absl::StrCat("unknown key '", kv.first, "'; keys are bytes= and arrays="));
      }
    }
    if (first_key == 1) {
      config.defaults = t.q;
    } else {
      tenant_lines.push_back(std::move(t));
    }
  }
  for (TenantLine& t : tenant_lines) {
    if (!t.has_bytes) t.q.max_bytes = config.defaults.max_bytes;
    if (!t.has_arrays) t.q.max_arrays = config.defaults.max_arrays;
    config.tenants[t.tenant] = t.q;
  }
  return config;
}

absl::StatusOr<QuotaConfig> LoadQuotaConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    return absl::Status(
        err == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kFailedPrecondition,
        absl::StrCat("cannot read quota config ", path, ": ", std::strerror(err)));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseQuotaConfig(text.str(), path);
}

}  // namespace resident
