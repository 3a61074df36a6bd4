// The CPU backend: adapts DeviceArrays to the kernels in kernels/cpu/, checks
// every argument against its buffer, and runs ops synchronously (a CPU stream
// is only a token). Owns its thread pool and host allocator; nothing global.
#include "server/device/cpu/cpu_backend.h"
#include "server/device/cpu/fused_loop.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/transpose.h"
#include "core/status_macros.h"
#include "server/device/cpu/host_allocator.h"

namespace resident {
namespace {

class CpuStream final : public Stream {};

int64_t PhysicalBytes(int name) {
  const long pages = sysconf(name);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
}

// OK when `array` is well formed and its buffer holds all its bytes.
absl::Status CheckArray(const DeviceArray& array, absl::string_view role) {
  absl::StatusOr<int64_t> n = CheckedNumElements(array.shape);
  if (!n.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(role, ": ", n.status().message()));
  }
  absl::StatusOr<int64_t> bytes = CheckedNumBytes(*n, ItemSize(array.dtype));
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(role, ": ", bytes.status().message()));
  }
  const int64_t have = array.buffer ? array.buffer->size() : 0;
  if (*bytes > have) {
    return absl::InvalidArgumentError(absl::StrCat(
        role, ": ", cpu::NameOf(array.dtype), ShapeString(array.shape),
        " needs ", *bytes, " bytes but its buffer holds ", have));
  }
  return absl::OkStatus();
}

cpu::ConstView View(const DeviceArray& a) {
  return {a.data(), a.dtype, a.shape};
}
cpu::MutView MutableView(DeviceArray& a) { return {a.data(), a.dtype, a.shape}; }

// Whether the bytes of x and y overlap.
bool Overlaps(const DeviceArray& x, const DeviceArray& y) {
  const auto* xs = static_cast<const char*>(x.data());
  const auto* ys = static_cast<const char*>(y.data());
  const int64_t xn = x.nbytes(), yn = y.nbytes();
  if (xs == nullptr || ys == nullptr || xn == 0 || yn == 0) return false;
  return xs < ys + yn && ys < xs + xn;
}

// Elementwise ops may write over an input that starts where out starts and
// has out's element count and item size: each element is read before the
// same element is written.
bool SafeAlias(const DeviceArray& in, const DeviceArray& out) {
  return in.data() == out.data() && in.num_elements() == out.num_elements() &&
         ItemSize(in.dtype) == ItemSize(out.dtype);
}

// Runs kernel(view of out), through a scratch copy when out overlaps an
// input other than as a SafeAlias (when `elementwise`) — the planner may
// hand out a dead input's buffer, and kernels assume no other overlap.
template <typename Kernel>
absl::Status WithOutput(std::initializer_list<const DeviceArray*> inputs,
                        bool elementwise, DeviceArray& out, Kernel&& kernel) {
  bool scratch = false;
  for (const DeviceArray* in : inputs) {
    if (Overlaps(*in, out) && !(elementwise && SafeAlias(*in, out))) {
      scratch = true;
    }
  }
  cpu::MutView view = MutableView(out);
  if (!scratch) return kernel(view);
  std::vector<std::byte> tmp(static_cast<size_t>(out.nbytes()));
  view.data = tmp.data();
  RETURN_IF_ERROR(kernel(view));
  std::memcpy(out.data(), tmp.data(), tmp.size());
  return absl::OkStatus();
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads)
      : pool_(threads),
        total_(PhysicalBytes(_SC_PHYS_PAGES)),
        allocator_(std::make_shared<HostAllocator>(total_ / 4, total_)) {}

  std::string name() const override { return "cpu"; }
  std::string description() const override {
    return absl::StrCat("CPU (", pool_.num_threads(), " threads, ",
                        total_ >> 20, " MiB RAM, OpenBLAS)");
  }
  MemoryInfo memory() const override {
    MemoryInfo info;
    info.total = total_;
    info.free = PhysicalBytes(_SC_AVPHYS_PAGES);
    info.in_use = allocator_->in_use();
    info.cached = allocator_->cached();
    return info;
  }

  std::unique_ptr<Stream> NewStream() override {
    return std::make_unique<CpuStream>();
  }
  absl::Status Synchronize(Stream&) override { return absl::OkStatus(); }

  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes,
                                                   Stream&) override {
    return allocator_->Allocate(bytes);
  }
  void Trim() override { allocator_->Trim(); }

  absl::Status CopyToDevice(Stream&, const void* src, Buffer& dst,
                            int64_t offset, int64_t bytes) override {
    RETURN_IF_ERROR(CheckRange("copy to device", dst, offset, bytes));
    if (bytes > 0) {
      if (src == nullptr) return absl::InvalidArgumentError("null source");
      std::memcpy(static_cast<char*>(dst.data()) + offset, src,
                  static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }
  absl::Status CopyToHost(Stream&, const Buffer& src, int64_t offset,
                          void* dst, int64_t bytes) override {
    RETURN_IF_ERROR(CheckRange("copy to host", src, offset, bytes));
    if (bytes > 0) {
      if (dst == nullptr) return absl::InvalidArgumentError("null destination");
      std::memcpy(dst, static_cast<const char*>(src.data()) + offset,
                  static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }

  // Implemented (the reference the CUDA fused kernels are checked against)
  // but not preferred: op by op, in place, measured faster on CPUs.
  bool SupportsFusedLoop() const override { return false; }
  absl::Status FusedLoop(Stream&, const FusedLoopSpec& spec,
                         const std::vector<DeviceArray>& params,
                         std::vector<DeviceArray>& outs) override {
    for (const DeviceArray& p : params) RETURN_IF_ERROR(CheckArray(p, "fused loop param"));
    for (DeviceArray& o : outs) RETURN_IF_ERROR(CheckArray(o, "fused loop out"));
    return cpu::RunFusedLoop(&pool_, spec, params, outs);
  }

  absl::Status Fill(Stream&, const Scalar& value, DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(out, "fill out"));
    return cpu::Fill(&pool_, value, MutableView(out));
  }
  absl::Status Arange(Stream&, const Scalar& start, const Scalar& delta,
                      DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(out, "arange out"));
    return cpu::Arange(&pool_, start, delta, MutableView(out));
  }
  absl::Status Binary(Stream&, BinaryOp op, const DeviceArray& a,
                      const DeviceArray& b, DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "binary a"));
    RETURN_IF_ERROR(CheckArray(b, "binary b"));
    RETURN_IF_ERROR(CheckArray(out, "binary out"));
    cpu::ArithOp k = cpu::ArithOp::kAdd;
    switch (op) {
      case BinaryOp::kAdd: k = cpu::ArithOp::kAdd; break;
      case BinaryOp::kSubtract: k = cpu::ArithOp::kSubtract; break;
      case BinaryOp::kMultiply: k = cpu::ArithOp::kMultiply; break;
      case BinaryOp::kDivide: k = cpu::ArithOp::kDivide; break;
    }
    return WithOutput({&a, &b}, true, out, [&](const cpu::MutView& o) {
      return cpu::Binary(&pool_, k, View(a), View(b), o);
    });
  }
  absl::Status Negative(Stream&, const DeviceArray& a,
                        DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "negative a"));
    RETURN_IF_ERROR(CheckArray(out, "negative out"));
    return WithOutput({&a}, true, out, [&](const cpu::MutView& o) {
      return cpu::Negative(&pool_, View(a), o);
    });
  }
  absl::Status Cast(Stream&, const DeviceArray& a, DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "cast a"));
    RETURN_IF_ERROR(CheckArray(out, "cast out"));
    return WithOutput({&a}, true, out, [&](const cpu::MutView& o) {
      return cpu::Cast(&pool_, View(a), o);
    });
  }
  absl::Status Matmul(Stream&, const MatmulShape& shape, const DeviceArray& a,
                      const DeviceArray& b, DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "matmul a"));
    RETURN_IF_ERROR(CheckArray(b, "matmul b"));
    RETURN_IF_ERROR(CheckArray(out, "matmul out"));
    if (a.dtype != out.dtype || b.dtype != out.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul needs one dtype, got ", cpu::NameOf(a.dtype), " @ ",
          cpu::NameOf(b.dtype), " -> ", cpu::NameOf(out.dtype)));
    }
    const cpu::MatmulDims dims{shape.batch,          shape.m,
                               shape.k,              shape.n,
                               shape.a_batch_stride, shape.b_batch_stride};
    cpu::MatmulExtent extent;
    RETURN_IF_ERROR(cpu::CheckMatmulDims(dims, &extent));
    if (a.num_elements() < extent.a || b.num_elements() < extent.b ||
        out.num_elements() != extent.out) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul batch=", shape.batch, " m=", shape.m, " k=", shape.k,
          " n=", shape.n, " strides=", shape.a_batch_stride, ",",
          shape.b_batch_stride, " needs a >= ", extent.a, ", b >= ", extent.b,
          ", out == ", extent.out, " elements; got ", a.num_elements(), ", ",
          b.num_elements(), ", ", out.num_elements()));
    }
    return WithOutput({&a, &b}, false, out, [&](const cpu::MutView& o) {
      return cpu::Matmul(&pool_, out.dtype, dims, a.data(), b.data(), o.data);
    });
  }
  absl::Status Sum(Stream&, const DeviceArray& a, std::optional<int> axis,
                   DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "sum a"));
    RETURN_IF_ERROR(CheckArray(out, "sum out"));
    return WithOutput({&a}, false, out, [&](const cpu::MutView& o) {
      return cpu::Sum(&pool_, View(a), axis, o);
    });
  }
  absl::Status Transpose(Stream&, const DeviceArray& a,
                         absl::Span<const int> perm,
                         DeviceArray& out) override {
    RETURN_IF_ERROR(CheckArray(a, "transpose a"));
    RETURN_IF_ERROR(CheckArray(out, "transpose out"));
    return WithOutput({&a}, false, out, [&](const cpu::MutView& o) {
      return cpu::Transpose(&pool_, View(a), perm, o);
    });
  }

 private:
  static absl::Status CheckRange(absl::string_view what, const Buffer& buffer,
                                 int64_t offset, int64_t bytes) {
    if (offset < 0 || bytes < 0 || offset > buffer.size() ||
        bytes > buffer.size() - offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": range [", offset, ", +", bytes, ") outside buffer of ",
          buffer.size(), " bytes"));
    }
    return absl::OkStatus();
  }

  cpu::ThreadPool pool_;
  const int64_t total_;
  // Shared with live buffers, which may outlive the backend.
  std::shared_ptr<HostAllocator> allocator_;
};

}  // namespace

std::unique_ptr<Backend> NewCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace resident
