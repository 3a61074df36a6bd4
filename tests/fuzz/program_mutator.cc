// Structure-aware mutations for program_fuzzer. Byte-level mutations of a
// serialized RunRequest mostly break its wire format or turn an op name into
// an unknown one, so three times in four the input is parsed, one field of
// one instruction (or an output, or the program's shape) is changed to a
// value the planner has to judge, and the request is serialized again; the
// fourth time, and for bytes that do not parse, libFuzzer's own mutators run.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "resident/v1/resident.pb.h"
#include "tests/fuzz/fuzz_handles.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace resident::fuzz {
namespace {

using Rng = std::minstd_rand;

constexpr const char* kOps[] = {
    "ones",        "zeros",    "full",         "arange",  "add",        "subtract",     "multiply",
    "divide",      "negative", "dot",          "matmul",  "sum",        "reshape",      "transpose",
    "astype",      "loop",     "maximum",      "power",   "remainder",  "floor_divide", "sqrt",
    "less",        "isnan",    "logical_not",  "where",   "clip",       "prod",         "mean",
    "max",         "min",      "argmax",       "argmin",  "any",        "all",          "slice",
    "concatenate", "stack",    "broadcast_to", "squeeze", "expand_dims"};

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
// Dimensions and counts worth trying: small ones and every overflow edge.
constexpr int64_t kEdgeInts[] = {0,
                                 1,
                                 2,
                                 3,
                                 4,
                                 5,
                                 7,
                                 8,
                                 16,
                                 -1,
                                 -2,
                                 255,
                                 256,
                                 65535,
                                 int64_t{1} << 31,
                                 (int64_t{1} << 31) - 1,
                                 int64_t{1} << 32,
                                 int64_t{1} << 59,
                                 int64_t{1} << 61,
                                 int64_t{1} << 62,
                                 int64_t{1} << 30,
                                 kI64Max,
                                 kI64Min,
                                 kI64Max - 1,
                                 kI64Min + 1,
                                 3037000500};
constexpr double kEdgeFloats[] = {0.0,
                                  -0.0,
                                  0.5,
                                  1.0,
                                  -1.0,
                                  2.5,
                                  1e300,
                                  -1e300,
                                  9.3e18,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::denorm_min(),
                                  4294967296.0};

size_t Below(Rng& rng, size_t n) { return n == 0 ? 0 : rng() % n; }

template <typename T, size_t N>
T Pick(Rng& rng, const T (&values)[N]) {
  return values[Below(rng, N)];
}

int64_t SmallOrEdge(Rng& rng) {
  return rng() % 2 ? static_cast<int64_t>(Below(rng, 5)) : Pick(rng, kEdgeInts);
}

void RandomShape(Rng& rng, google::protobuf::RepeatedField<int64_t>* shape) {
  shape->Clear();
  if (rng() % 4 == 0) {
    // 2^55 to 2^62 elements: sizes that fit in int64 bytes for one dtype
    // and overflow once an op widens, broadcasts or adds them up.
    const int bits = 55 + static_cast<int>(Below(rng, 8));
    const int split = static_cast<int>(Below(rng, bits + 1));
    if (split > 0) shape->Add(int64_t{1} << split);
    if (bits - split > 0) shape->Add(int64_t{1} << (bits - split));
    return;
  }
  const size_t rank = rng() % 8 == 0 ? Below(rng, 70) : Below(rng, 4);
  for (size_t i = 0; i < rank; ++i) shape->Add(SmallOrEdge(rng));
}

void RandomScalar(Rng& rng, v1::Scalar* s) {
  switch (rng() % 3) {
    case 0:
      s->set_bool_value(rng() % 2);
      break;
    case 1:
      s->set_int_value(SmallOrEdge(rng));
      break;
    default:
      s->set_float_value(Pick(rng, kEdgeFloats));
      break;
  }
}

std::string RandomHandle(Rng& rng) {
  if (rng() % 8 == 0) return std::string(16, '\x42');  // unknown
  Shape shape(Below(rng, 4));
  for (int64_t& d : shape) d = rng() % 4 == 0 ? Pick(rng, {0, 255, 65535}) : Below(rng, 5);
  return EncodeHandle(kAllDTypes[Below(rng, 5)], shape)->bytes();
}

void RandomOperand(Rng& rng, int defined, v1::Operand* o) {
  if (rng() % 8 == 0) {
    RandomScalar(rng, o->mutable_scalar());  // elementwise, where, clip; refused elsewhere
  } else if (rng() % 3 == 0) {
    o->set_handle(RandomHandle(rng));
  } else {
    o->set_value(
        static_cast<uint32_t>(rng() % 16 == 0 ? Below(rng, 1u << 31) : Below(rng, defined + 2)));
  }
}

// A scope to mutate: the program or, at random depth, a loop body in it.
v1::Program* PickScope(Rng& rng, v1::Program* p) {
  while (rng() % 3 == 0) {
    std::vector<v1::Program*> bodies;
    for (v1::Instruction& ins : *p->mutable_instructions()) {
      if (ins.has_body()) bodies.push_back(ins.mutable_body());
    }
    if (bodies.empty()) break;
    p = bodies[Below(rng, bodies.size())];
  }
  return p;
}

v1::Instruction RandomInstruction(Rng& rng, int defined) {
  v1::Instruction ins;
  ins.set_op(Pick(rng, kOps));
  const size_t n = Below(rng, 4);
  for (size_t j = 0; j < n; ++j) RandomOperand(rng, defined, ins.add_operands());
  if (rng() % 2) RandomShape(rng, ins.mutable_shape());
  if (rng() % 2) ins.set_dtype(static_cast<v1::DType>(Below(rng, 7)));
  if (ins.op() == "loop") {
    ins.set_trip_count(SmallOrEdge(rng));
    v1::Instruction* step = ins.mutable_body()->add_instructions();
    step->set_op(Pick(rng, kOps));
    RandomOperand(rng, static_cast<int>(n), step->add_operands());
    RandomOperand(rng, static_cast<int>(n), step->add_operands());
    ins.mutable_body()->add_yields()->set_value(static_cast<uint32_t>(n));
  }
  return ins;
}

void MutateInstruction(Rng& rng, int defined, v1::Instruction& ins) {
  switch (rng() % 10) {
    case 0:
      ins.set_op(Pick(rng, kOps));
      break;
    case 1:
      if (ins.operands_size() > 0 && rng() % 2) {
        RandomOperand(rng, defined, ins.mutable_operands(Below(rng, ins.operands_size())));
      } else if (rng() % 2) {
        RandomOperand(rng, defined, ins.add_operands());
      } else if (ins.operands_size() > 0) {
        ins.mutable_operands()->RemoveLast();
      }
      break;
    case 2:
      if (ins.shape_size() > 0 && rng() % 2) {
        ins.set_shape(static_cast<int>(Below(rng, ins.shape_size())), SmallOrEdge(rng));
      } else {
        RandomShape(rng, ins.mutable_shape());
      }
      break;
    case 3:
      ins.set_dtype(static_cast<v1::DType>(Below(rng, 7)));
      break;
    case 4:
      RandomScalar(rng, ins.mutable_fill());
      break;
    case 5:
      RandomScalar(rng, rng() % 3 == 0   ? ins.mutable_start()
                        : rng() % 2 == 0 ? ins.mutable_stop()
                                         : ins.mutable_step());
      break;
    case 6:
      ins.set_has_axis(rng() % 4 != 0);
      ins.set_axis(rng() % 2 ? static_cast<int64_t>(Below(rng, 7)) - 3 : SmallOrEdge(rng));
      break;
    case 7:
      ins.clear_axes();
      for (size_t k = Below(rng, 5); k > 0; --k) {
        ins.add_axes(rng() % 4 ? static_cast<int64_t>(Below(rng, 7)) - 3 : SmallOrEdge(rng));
      }
      ins.set_has_axes(rng() % 2);  // reductions, squeeze, expand_dims
      ins.set_keepdims(rng() % 2);
      if (rng() % 3 == 0) {  // slice: start/stop/step, small or at an edge
        ins.clear_slices();
        for (size_t k = Below(rng, 4); k > 0; --k) {
          v1::SliceRange* r = ins.add_slices();
          r->set_has_start(rng() % 2);
          r->set_start(rng() % 2 ? static_cast<int64_t>(Below(rng, 9)) - 4 : SmallOrEdge(rng));
          r->set_has_stop(rng() % 2);
          r->set_stop(rng() % 2 ? static_cast<int64_t>(Below(rng, 9)) - 4 : SmallOrEdge(rng));
          r->set_has_step(rng() % 2);
          r->set_step(rng() % 2 ? static_cast<int64_t>(Below(rng, 7)) - 3 : SmallOrEdge(rng));
        }
      }
      break;
    case 8:
      ins.set_trip_count(SmallOrEdge(rng));
      break;
    default: {
      v1::Program* body = ins.mutable_body();
      if (rng() % 2 && body->instructions_size() < 16) {
        *body->add_instructions() = RandomInstruction(rng, ins.operands_size());
      } else {
        RandomOperand(rng, ins.operands_size() + body->instructions_size(),
                      rng() % 2 || body->yields_size() == 0
                          ? body->add_yields()
                          : body->mutable_yields(Below(rng, body->yields_size())));
      }
      break;
    }
  }
}

void MutateOutputs(Rng& rng, v1::RunRequest& req) {
  const int n = req.program().instructions_size();
  v1::Output* o = req.outputs_size() > 0 && rng() % 2
                      ? req.mutable_outputs(Below(rng, req.outputs_size()))
                      : req.add_outputs();
  o->set_value(static_cast<uint32_t>(rng() % 8 == 0 ? rng() : Below(rng, n + 2)));
  o->set_keep(rng() % 2);
  o->set_return_data(rng() % 2);
}

void Mutate(Rng& rng, v1::RunRequest& req) {
  if (rng() % 6 == 0) return MutateOutputs(rng, req);
  v1::Program* scope = PickScope(rng, req.mutable_program());
  const int n = scope->instructions_size();
  switch (rng() % 8) {
    case 0:  // insert a new instruction
      if (n < 64) {
        const int at = static_cast<int>(Below(rng, n + 1));
        *scope->add_instructions() = RandomInstruction(rng, at);
        for (int i = n; i > at; --i) scope->mutable_instructions()->SwapElements(i, i - 1);
      }
      return;
    case 1:  // duplicate one, so an op's result feeds the same op again
      if (n > 0 && n < 64) *scope->add_instructions() = scope->instructions(Below(rng, n));
      return;
    case 2:  // delete one
      if (n > 0) {
        scope->mutable_instructions()->DeleteSubrange(static_cast<int>(Below(rng, n)), 1);
      }
      return;
    default:
      if (n == 0) {
        *scope->add_instructions() = RandomInstruction(rng, 0);
      } else {
        const int i = static_cast<int>(Below(rng, n));
        // About as many values as precede it: ids near the valid range.
        MutateInstruction(rng, i + 1, *scope->mutable_instructions(i));
      }
  }
}

}  // namespace
}  // namespace resident::fuzz

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  resident::fuzz::Rng rng(seed);
  resident::v1::RunRequest req;
  if (rng() % 4 != 0 && req.ParseFromArray(data, static_cast<int>(size))) {
    for (size_t k = 1 + resident::fuzz::Below(rng, 3); k > 0; --k) {
      resident::fuzz::Mutate(rng, req);
    }
    const std::string out = req.SerializeAsString();
    if (out.size() <= max_size) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
