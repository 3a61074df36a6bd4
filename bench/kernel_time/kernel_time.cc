// resident_kernel_time: a CUPTI injection library that records when each
// kernel, copy and memset ran on the GPU, for hosts without nsys or ncu.
//
//   CUDA_INJECTION64_PATH=/path/libresident_kernel_time.so
//   RESIDENT_KERNEL_TIME_OUT=/tmp/kernels.rkt (a "%p" in it becomes the process id)
//   some-cuda-program ...
//
// The CUDA driver loads the library named by CUDA_INJECTION64_PATH while it
// initialises and calls InitializeInjection, the way nsys injects itself.
// Only activity records are collected (no API callbacks), so the cost is
// CUPTI's kernel timestamps and one buffer walk per 8 MiB of records.
//
// Timestamps are CLOCK_MONOTONIC nanoseconds (a CUPTI timestamp callback), so
// they compare with time.monotonic_ns() in another process on the same host.
// bench/kernel_time.py reads the file beside windows of that clock.
//
// The file, all integers little-endian:
//   header  "RKTIME01", u32 clock (1: CLOCK_MONOTONIC through the callback;
//           0: CUPTI's own clock), i64 offset to add to every timestamp to get
//           CLOCK_MONOTONIC (0 when clock is 1)
//   then entries, appended as CUPTI hands buffers back (every 200 ms and at exit):
//   'N' u32 id, u32 length, the name's bytes        a name, before its first use
//   'R' u32 n, n x {u64 start, u64 end, u32 name, u32 kind}   records
//   'D' u64 n                                        records CUPTI dropped so far
// kind: 0 kernel, 1 memcpy, 2 memset, 3 whole graph (RESIDENT_KERNEL_TIME_GRAPHS=1).
// A process killed mid-write leaves at most one truncated entry at the end.

#include <cupti.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlign = 8;
constexpr auto kFlushPeriod = std::chrono::milliseconds(200);

enum RecordKind : uint32_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kGraph = 3 };

#pragma pack(push, 1)
struct Record {
  uint64_t start;
  uint64_t end;
  uint32_t name;
  uint32_t kind;
};
#pragma pack(pop)
static_assert(sizeof(Record) == 24);

// Everything the callbacks share. The driver calls InitializeInjection once
// per process and CUPTI's callbacks are plain functions, so the state is one
// process-wide object; it is never destroyed, so that no static destructor
// runs before the atexit handler's last flush.
struct Tracer {
  std::mutex mu;  // guards out, names and dropped
  FILE* out = nullptr;
  std::unordered_map<std::string, uint32_t> names;
  uint64_t dropped = 0;
  pid_t pid = 0;  // a forked child inherits the state but not the flusher

  std::mutex flush_mu;
  std::condition_variable flush_cv;
  bool stopping = false;  // guarded by flush_mu
  std::thread flusher;
};

Tracer* tracer = nullptr;

void Report(const char* what, CUptiResult result) {
  const char* text = "unknown error";
  cuptiGetResultString(result, &text);
  std::fprintf(stderr, "resident_kernel_time: %s: %s\n", what, text);
}

bool Ok(const char* what, CUptiResult result) {
  if (result == CUPTI_SUCCESS) return true;
  Report(what, result);
  return false;
}

uint64_t CUPTIAPI MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void Write(const void* data, size_t bytes) { std::fwrite(data, 1, bytes, tracer->out); }

template <typename T>
void WriteValue(T value) {
  Write(&value, sizeof value);
}

// The name's id, writing an 'N' entry the first time it is seen. Holds mu.
uint32_t Intern(const char* name) {
  if (name == nullptr) name = "[unnamed]";
  auto [it, added] = tracer->names.try_emplace(name, static_cast<uint32_t>(tracer->names.size()));
  if (added) {
    WriteValue('N');
    WriteValue(it->second);
    WriteValue(static_cast<uint32_t>(it->first.size()));
    Write(it->first.data(), it->first.size());
  }
  return it->second;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer == nullptr ? 0 : kBufferBytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                              size_t valid) {
  std::lock_guard<std::mutex> lock(tracer->mu);
  std::vector<Record> records;
  CUpti_Activity* record = nullptr;
  while (tracer->out != nullptr &&
         cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        records.push_back({k->start, k->end, Intern(k->name), kKernel});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        records.push_back({m->start, m->end, Intern("[memcpy]"), kMemcpy});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        records.push_back({m->start, m->end, Intern("[memset]"), kMemset});
        break;
      }
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
        auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
        std::string name = "[graph " + std::to_string(g->graphId) + "]";
        records.push_back({g->start, g->end, Intern(name.c_str()), kGraph});
        break;
      }
      default:
        break;
    }
  }
  if (tracer->out != nullptr && !records.empty()) {
    WriteValue('R');
    WriteValue(static_cast<uint32_t>(records.size()));
    Write(records.data(), records.size() * sizeof(Record));
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    tracer->dropped += dropped;
    std::fprintf(stderr, "resident_kernel_time: CUPTI dropped %zu records\n", dropped);
    if (tracer->out != nullptr) {
      WriteValue('D');
      WriteValue(tracer->dropped);
    }
  }
  if (tracer->out != nullptr) std::fflush(tracer->out);
  std::free(buffer);
}

// Hands completed buffers to BufferCompleted every kFlushPeriod, so that the
// file holds the records of everything finished so far even if the process is
// killed. The flag is 0, not CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: a forced flush
// also hands over buffers whose newest records are still running, whose
// timestamps are not filled in yet; the forced flush waits for exit.
void FlushLoop() {
  std::unique_lock<std::mutex> lock(tracer->flush_mu);
  while (!tracer->flush_cv.wait_for(lock, kFlushPeriod, [] { return tracer->stopping; })) {
    lock.unlock();
    cuptiActivityFlushAll(0);
    lock.lock();
  }
}

void AtExit() {
  if (getpid() != tracer->pid) return;
  {
    std::lock_guard<std::mutex> lock(tracer->flush_mu);
    tracer->stopping = true;
  }
  tracer->flush_cv.notify_all();
  if (tracer->flusher.joinable()) tracer->flusher.join();
  Ok("cuptiActivityFlushAll", cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(tracer->mu);
  if (tracer->out != nullptr) {
    std::fclose(tracer->out);
    tracer->out = nullptr;
  }
}

bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

}  // namespace

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this
// library. Always returns 1 (the driver goes on either way); problems are
// printed on stderr and leave the process untraced.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* env = std::getenv("RESIDENT_KERNEL_TIME_OUT");
  if (env == nullptr || env[0] == '\0' || tracer != nullptr) return 1;
  // "%p" becomes the process id, so that processes started with the same
  // environment (a server and its benchmark client) write separate files.
  std::string path = env;
  if (const size_t at = path.find("%p"); at != std::string::npos) {
    path.replace(at, 2, std::to_string(getpid()));
  }
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "resident_kernel_time: cannot open %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  tracer = new Tracer;
  tracer->out = out;
  tracer->pid = getpid();

  // The clock goes first: CUPTI applies it only to kinds enabled after it.
  uint32_t clock = 1;
  int64_t offset = 0;
  if (!Ok("cuptiActivityRegisterTimestampCallback",
          cuptiActivityRegisterTimestampCallback(MonotonicNs))) {
    // Fall back on the offset between the two clocks, read side by side.
    uint64_t cupti_now = 0;
    const uint64_t before = MonotonicNs();
    Ok("cuptiGetTimestamp", cuptiGetTimestamp(&cupti_now));
    const uint64_t after = MonotonicNs();
    clock = 0;
    offset = static_cast<int64_t>(before / 2 + after / 2) - static_cast<int64_t>(cupti_now);
  }
  Write("RKTIME01", 8);
  WriteValue(clock);
  WriteValue(offset);
  std::fflush(out);

  if (!Ok("cuptiActivityRegisterCallbacks",
          cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted))) {
    return 1;
  }
  // Kernels in graphs, conditional nodes' bodies among them, come as
  // CONCURRENT_KERNEL records; device graph tracing adds the graphs that
  // kernels launch themselves. CUPTI reads that setting only before CUDA is
  // initialised, as it is here, inside cuInit.
  Ok("cuptiActivityEnableDeviceGraph", cuptiActivityEnableDeviceGraph(1));
  Ok("enable CONCURRENT_KERNEL", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  Ok("enable MEMCPY", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  Ok("enable MEMSET", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  // A whole graph launch as one record, start to end (to check the kernel
  // records of a conditional node's trips against).
  if (EnvFlag("RESIDENT_KERNEL_TIME_GRAPHS")) {
    Ok("enable GRAPH_TRACE", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  }
  tracer->flusher = std::thread(FlushLoop);
  std::atexit(AtExit);
  return 1;
}
