// RETURN_IF_ERROR / ASSIGN_OR_RETURN, after tensorstore's and Abseil's own.
#ifndef RESIDENT_CORE_STATUS_MACROS_H_
#define RESIDENT_CORE_STATUS_MACROS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace resident {

// The same status with "context: " before its message.
inline absl::Status Annotate(const absl::Status& s, std::string_view context) {
  if (s.ok() || context.empty()) return s;
  return absl::Status(
      s.code(), absl::StrCat(absl::string_view(context.data(), context.size()), ": ", s.message()));
}

}  // namespace resident

#define RESIDENT_CONCAT_INNER_(a, b) a##b
#define RESIDENT_CONCAT_(a, b) RESIDENT_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function unless it is OK.
#define RETURN_IF_ERROR(expr)                               \
  do {                                                      \
    if (::absl::Status _st = (expr); !_st.ok()) return _st; \
  } while (0)

// `lhs = value of expr`, or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(RESIDENT_CONCAT_(_statusor_, __LINE__), lhs, expr)
// `tmp` names a variable and `lhs` may be a declaration: neither can take
// the parentheses bugprone-macro-parentheses asks for.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // RESIDENT_CORE_STATUS_MACROS_H_
