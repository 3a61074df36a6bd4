#include "core/proto/split_message.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace resident {
namespace {

// A read position in a sequence of pieces, with the bytes left counted so
// that no length is trusted beyond them.
class Cursor {
 public:
  explicit Cursor(absl::Span<const std::string_view> pieces) : pieces_(pieces) {
    for (std::string_view p : pieces) left_ += p.size();
  }

  size_t left() const { return left_; }
  size_t offset() const { return offset_; }

  // Requires left() > 0.
  uint8_t Byte() {
    SkipEmpty();
    const uint8_t b = static_cast<uint8_t>(pieces_[piece_][at_]);
    Advance(1);
    return b;
  }

  // A varint of at most 10 bytes whose value fits 64 bits (the 10th byte
  // may only be 0 or 1, so no varint runs longer).
  absl::Status Varint(uint64_t* value) {
    uint64_t v = 0;
    for (int i = 0;; ++i) {
      if (left_ == 0) return Error("a varint is cut off by the end of the message");
      const uint8_t b = Byte();
      if (i == 9 && b > 1) return Error("a varint does not fit 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        *value = v;
        return absl::OkStatus();
      }
    }
  }

  // The next n bytes (n <= left()): as views, or appended to `copy`.
  void Take(size_t n, std::vector<std::string_view>* views, std::string* copy) {
    while (n > 0) {
      SkipEmpty();
      const size_t k = std::min(n, pieces_[piece_].size() - at_);
      const std::string_view part = pieces_[piece_].substr(at_, k);
      if (views != nullptr) views->push_back(part);
      if (copy != nullptr) copy->append(part);
      Advance(k);
      n -= k;
    }
  }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, " (at byte ", offset_, ")"));
  }

 private:
  void SkipEmpty() {
    while (at_ == pieces_[piece_].size()) {
      ++piece_;
      at_ = 0;
    }
  }
  void Advance(size_t n) {
    at_ += n;
    offset_ += n;
    left_ -= n;
  }

  absl::Span<const std::string_view> pieces_;
  size_t piece_ = 0;
  size_t at_ = 0;
  size_t offset_ = 0;
  size_t left_ = 0;
};

// Reads one field's tag and, for wire types 1, 2 and 5, its size; a varint
// field's value goes to *varint. Checks the size against the bytes left.
absl::Status ReadField(Cursor& in, WireField* f, uint64_t* size) {
  uint64_t tag = 0;
  if (absl::Status s = in.Varint(&tag); !s.ok()) return s;
  f->number = tag >> 3;
  f->wire_type = static_cast<int>(tag & 7);
  if (f->number == 0 || f->number > 0x1fffffff) {
    return in.Error(absl::StrCat("field number ", f->number, " is out of range"));
  }
  *size = 0;
  switch (f->wire_type) {
    case 0:
      return in.Varint(&f->varint);
    case 1:
      *size = 8;
      break;
    case 5:
      *size = 4;
      break;
    case 2:
      if (absl::Status s = in.Varint(size); !s.ok()) return s;
      break;
    default:
      return in.Error(absl::StrCat("field ", f->number, " has wire type ", f->wire_type,
                                   ", which no resident message uses"));
  }
  if (*size > in.left()) {
    return in.Error(absl::StrCat("field ", f->number, " claims ", *size, " bytes but only ",
                                 in.left(), " are left"));
  }
  return absl::OkStatus();
}

}  // namespace

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

absl::Status ForEachField(std::string_view bytes,
                          absl::FunctionRef<absl::Status(const WireField&)> fn) {
  const std::string_view pieces[1] = {bytes};
  Cursor in(pieces);
  while (in.left() > 0) {
    WireField f;
    uint64_t size = 0;
    if (absl::Status s = ReadField(in, &f, &size); !s.ok()) return s;
    if (f.wire_type != 0) {
      f.bytes = bytes.substr(in.offset(), static_cast<size_t>(size));
      in.Take(static_cast<size_t>(size), nullptr, nullptr);
    }
    if (absl::Status s = fn(f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SplitDataField(absl::Span<const std::string_view> pieces, int data_field,
                            SplitMessage* out) {
  out->rest.clear();
  out->data.clear();
  out->data_size = 0;
  Cursor in(pieces);
  while (in.left() > 0) {
    WireField f;
    uint64_t size = 0;
    if (absl::Status s = ReadField(in, &f, &size); !s.ok()) return s;
    const uint64_t field = f.number;
    const uint64_t tag = (field << 3) | static_cast<uint64_t>(f.wire_type);
    if (static_cast<int64_t>(field) == data_field && f.wire_type != 2) {
      return in.Error(
          absl::StrCat("the data field ", field, " has wire type ", f.wire_type, ", not bytes"));
    }
    if (f.wire_type == 0) {  // re-encoded as read (protobuf reads it again)
      AppendVarint(tag, &out->rest);
      AppendVarint(f.varint, &out->rest);
      continue;
    }
    if (static_cast<int64_t>(field) == data_field) {
      out->data.clear();  // a repeated occurrence replaces the last
      out->data_size = static_cast<size_t>(size);
      in.Take(static_cast<size_t>(size), &out->data, nullptr);
      continue;
    }
    AppendVarint(tag, &out->rest);
    if (f.wire_type == 2) AppendVarint(size, &out->rest);
    in.Take(static_cast<size_t>(size), nullptr, &out->rest);
  }
  return absl::OkStatus();
}

}  // namespace resident
