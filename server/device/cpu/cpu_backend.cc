// The CPU backend: adapts DeviceArrays to the kernels in kernels/cpu/, checks
// every argument against its buffer, and runs ops synchronously (a CPU stream
// only copies). Owns its thread pool and host allocator; nothing global.
#include "server/device/cpu/cpu_backend.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cpu/array_view.h"
#include "kernels/cpu/blas_core.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fft.h"
#include "kernels/cpu/linalg.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/random.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/transpose.h"
#include "server/device/cpu/cpu_shape_ops.h"
#include "server/device/cpu/cpu_sort_ops.h"
#include "server/device/cpu/fused_loop.h"
#include "server/device/cpu/host_allocator.h"
#include "server/device/cpu/views.h"
#include "server/device/interrupt.h"
#include "server/device/random_params.h"

namespace resident {
namespace {

// Host memory is the device's: a copy is a memcpy, complete on return.
class CpuStream final : public Stream {
 public:
  absl::Status CopyToDevice(const void* src, Buffer& dst, int64_t offset, int64_t bytes) override {
    RETURN_IF_ERROR(CheckCopy("CopyToDevice", dst, offset, bytes, src));
    if (bytes > 0) {
      std::memcpy(static_cast<char*>(dst.data()) + offset, src, static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }
  absl::Status CopyToHost(const Buffer& src, int64_t offset, void* dst, int64_t bytes) override {
    RETURN_IF_ERROR(CheckCopy("CopyToHost", src, offset, bytes, dst));
    if (bytes > 0) {
      std::memcpy(dst, static_cast<const char*>(src.data()) + offset, static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }
  // Every CPU "device" is host memory (a list like cpu,cpu makes several
  // instances), so a peer copy is a memcpy. The server never mixes cpu and
  // cuda devices, so src is host memory too.
  absl::Status CopyFromPeer(const Buffer& src, Buffer& dst, int64_t bytes) override {
    RETURN_IF_ERROR(CheckCopy("CopyFromPeer source", src, 0, bytes, dst.data()));
    RETURN_IF_ERROR(CheckCopy("CopyFromPeer destination", dst, 0, bytes, src.data()));
    if (bytes > 0) std::memcpy(dst.data(), src.data(), static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
};

int64_t PhysicalBytes(int name) {
  const long pages = sysconf(name);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
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
absl::Status WithOutput(std::initializer_list<const DeviceArray*> inputs, bool elementwise,
                        const DeviceArray& out, Kernel&& kernel) {
  bool scratch = false;
  for (const DeviceArray* in : inputs) {
    if (in != nullptr && Overlaps(*in, out) && !(elementwise && SafeAlias(*in, out))) {
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
    return absl::StrCat("CPU (", pool_.num_threads(), " threads, ", total_ >> 20,
                        " MiB RAM, OpenBLAS)");
  }
  MemoryInfo memory() const override {
    MemoryInfo info;
    info.total = total_;
    info.free = PhysicalBytes(_SC_AVPHYS_PAGES);
    info.in_use = allocator_->in_use();
    info.cached = allocator_->cached();
    return info;
  }
  bool poisoned() const override { return false; }
  bool Supports(DeviceOpKind kind, DType dtype) const override {
    // Fused loops run each block's whole chain in L1-sized tiles
    // (fused_loop.cc), so a long chain is one pass over memory.
    return DefinedFor(kind, dtype);
  }

  std::unique_ptr<Stream> NewStream() override { return std::make_unique<CpuStream>(); }
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(int64_t bytes, Stream&) override {
    return allocator_->Allocate(bytes);
  }
  void Trim() override { allocator_->Trim(); }
  void SetMemoryLimit(int64_t bytes) override { allocator_->SetBudget(bytes); }

  // The one dispatch point: common checks, then one Do() per op struct.
  absl::Status Run(Stream&, const DeviceOp& op) override {
    RETURN_IF_ERROR(CheckOperands(op));
    return std::visit([this](const auto& o) { return Do(o); }, op);
  }

 private:
  absl::Status Do(const FillOp& op) { return cpu::Fill(&pool_, op.value, MutableView(*op.out)); }
  absl::Status Do(const ArangeOp& op) {
    return cpu::Arange(&pool_, op.start, op.delta, op.second, MutableView(*op.out));
  }
  absl::Status Do(const ElementwiseOp& op) {
    const int arity = Arity(op.kind);
    const cpu::ConstView in[2] = {View(*op.in[0]), arity == 2 ? View(*op.in[1]) : cpu::ConstView{}};
    return WithOutput({op.in[0], arity == 2 ? op.in[1] : nullptr}, true, *op.out,
                      [&](const cpu::MutView& o) {
                        return cpu::Elementwise(&pool_, op.kind, absl::MakeConstSpan(in, arity), o);
                      });
  }
  absl::Status Do(const CastOp& op) {
    return WithOutput({op.in}, true, *op.out,
                      [&](const cpu::MutView& o) { return cpu::Cast(&pool_, View(*op.in), o); });
  }
  absl::Status Do(const MatmulOp& op) {
    const DeviceArray &a = *op.a, &b = *op.b, &out = *op.out;
    const MatmulShape& shape = op.shape;
    if (a.dtype != out.dtype || b.dtype != out.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("matmul needs one dtype, got ", cpu::NameOf(a.dtype), " @ ",
                       cpu::NameOf(b.dtype), " -> ", cpu::NameOf(out.dtype)));
    }
    const cpu::MatmulDims dims{shape.batch,         shape.m, shape.k, shape.n, shape.a_batch_stride,
                               shape.b_batch_stride};
    cpu::MatmulExtent extent;
    RETURN_IF_ERROR(cpu::CheckMatmulDims(dims, &extent));
    if (a.num_elements() < extent.a || b.num_elements() < extent.b ||
        out.num_elements() != extent.out) {
      return absl::InvalidArgumentError(absl::StrCat(
          "matmul batch=", shape.batch, " m=", shape.m, " k=", shape.k, " n=", shape.n,
          " strides=", shape.a_batch_stride, ",", shape.b_batch_stride, " needs a >= ", extent.a,
          ", b >= ", extent.b, ", out == ", extent.out, " elements; got ", a.num_elements(), ", ",
          b.num_elements(), ", ", out.num_elements()));
    }
    return WithOutput({&a, &b}, false, out, [&](const cpu::MutView& o) {
      // Polls the program's interrupt check between blocks of rows.
      const absl::Status s = cpu::Matmul(&pool_, out.dtype, dims, a.data(), b.data(), o.data,
                                         [] { return InterruptRequested(); });
      return s.code() == absl::StatusCode::kCancelled ? Interrupted() : s;
    });
  }
  absl::Status Do(const ReduceOp& op) {
    if (op.kind != ReduceKind::kSum) {
      return absl::InvalidArgumentError("ReduceOp is for sums; use ReduceAxesOp");
    }
    return WithOutput({op.in}, false, *op.out, [&](const cpu::MutView& o) {
      return cpu::Sum(&pool_, View(*op.in), op.axis, o);
    });
  }
  // Reductions over axis sets, slicing and concatenation: cpu_shape_ops.cc.
  absl::Status Do(const ReduceAxesOp& op) { return RunReduceAxes(&pool_, op); }
  absl::Status Do(const SliceOp& op) { return RunSlice(&pool_, op); }
  absl::Status Do(const ConcatOp& op) { return RunConcat(&pool_, op); }
  // Sorting, gathers along an axis and scans: cpu_sort_ops.cc.
  absl::Status Do(const ArgsortOp& op) { return RunArgsort(&pool_, op); }
  absl::Status Do(const TakeAlongAxisOp& op) { return RunTakeAlongAxis(&pool_, op); }
  absl::Status Do(const ExtractOp& op) { return RunExtract(&pool_, op); }
  absl::Status Do(const LinalgOp& op) {
    RETURN_IF_ERROR(CheckLinalgOp(op));
    static_assert(static_cast<int>(cpu::LinalgRoutine::kSlogdet) ==
                  static_cast<int>(LinalgKind::kSlogdet));
    // A stack of matrices stops between them once the program must stop.
    const std::function<bool()> stop = CurrentInterruptCheck();
    auto interrupted = [](absl::Status s) {
      return s.code() == absl::StatusCode::kCancelled ? Interrupted() : s;
    };
    if (LinalgResults(op.kind) > 1) {
      std::vector<cpu::MutView> outs = {MutableView(*op.out), MutableView(*op.out2)};
      if (op.out3 != nullptr) outs.push_back(MutableView(*op.out3));
      return interrupted(cpu::Decompose(&pool_, static_cast<cpu::LinalgRoutine>(op.kind), op.full,
                                        View(*op.a), outs, stop));
    }
    const cpu::ConstView b = op.b != nullptr ? View(*op.b) : cpu::ConstView{};
    return interrupted(cpu::Linalg(&pool_, static_cast<cpu::LinalgRoutine>(op.kind), View(*op.a),
                                   op.kind == LinalgKind::kSolve ? &b : nullptr,
                                   MutableView(*op.out), stop));
  }
  absl::Status Do(const RandomOp& op) {
    RETURN_IF_ERROR(CheckRandomOp(op));
    cpu::RandomFill(RandomParamsOf(op), static_cast<const uint64_t*>(op.state->data()),
                    static_cast<uint64_t*>(op.next_state->data()), op.out->data(),
                    op.out->num_elements(), pool_);
    return absl::OkStatus();
  }
  absl::Status Do(const FftOp& op) {
    RETURN_IF_ERROR(CheckFftOp(op));
    const DeviceArray &in = *op.in, &out = *op.out;
    const bool f32 = in.dtype == DType::kComplex64 || in.dtype == DType::kFloat32;
    // The transformed dimensions, the real side's.
    const Shape& logical = op.kind == FftKind::kRealInverse ? out.shape : in.shape;
    const absl::Span<const int64_t> dims =
        absl::MakeConstSpan(logical).subspan(logical.size() - op.axes);
    int64_t points = 1;
    for (int64_t d : dims) points *= d;
    static_assert(static_cast<int>(cpu::FftDirection::kRealInverse) ==
                  static_cast<int>(FftKind::kRealInverse));
    return cpu::Fft(&pool_, static_cast<cpu::FftDirection>(op.kind), f32, in.data(), out.data(),
                    points == 0 ? 0 : NumElements(logical) / points, dims);
  }
  absl::Status Do(const ScanOp& op) { return RunScan(&pool_, op); }
  absl::Status Do(const TransposeOp& op) {
    return WithOutput({op.in}, false, *op.out, [&](const cpu::MutView& o) {
      return cpu::Transpose(&pool_, View(*op.in), op.perm, o);
    });
  }
  absl::Status Do(const FusedLoopOp& op) { return cpu::RunFusedLoop(&pool_, op); }

  cpu::ThreadPool pool_;
  const int64_t total_;
  // Shared with live buffers, which may outlive the backend.
  std::shared_ptr<HostAllocator> allocator_;
};

}  // namespace

std::unique_ptr<Backend> NewCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

void PrepareCpuLibraries(char** argv) { cpu::ReexecWithBetterBlasCore(argv); }

}  // namespace resident
