// A table of bad requests sent to a real server through the generated stub.
// For each row: the expected code and a substring of the message; then a
// good request still succeeds, the pre-made array is byte-for-byte intact,
// no handle appeared or vanished, and device memory is back where it was.
#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "e2e_fixture.h"
#include "gmock/gmock.h"

namespace resident::e2e {
namespace {

using ::testing::HasSubstr;

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

v1::Instruction Ins(const std::string& op, const std::vector<int64_t>& shape = {}) {
  v1::Instruction ins;
  ins.set_op(op);
  for (int64_t d : shape) ins.add_shape(d);
  return ins;
}
// A `normal` draw of `dtype` from value 0 (a state), loc and scale if given.
v1::Instruction NormalOf(v1::DType dtype, bool loc_scale) {
  v1::Instruction ins = Ins("normal", {4});
  ins.set_dtype(dtype);
  v1::Operand o;
  o.set_value(0);
  *ins.add_operands() = o;
  if (loc_scale) {
    ins.mutable_start()->set_float_value(1.0);
    ins.mutable_stop()->set_float_value(2.0);
  }
  return ins;
}
// `op` (fft, irfft, ...) of value 0 over `axes`.
v1::Instruction FftOver(const std::string& op, const std::vector<int64_t>& axes) {
  v1::Instruction ins = Ins(op);
  v1::Operand o;
  o.set_value(0);
  *ins.add_operands() = o;
  ins.set_has_axes(true);
  for (int64_t a : axes) ins.add_axes(a);
  return ins;
}
v1::Operand Val(uint32_t v) {
  v1::Operand o;
  o.set_value(v);
  return o;
}
v1::Operand Hnd(const std::string& h) {
  v1::Operand o;
  o.set_handle(h);
  return o;
}
v1::Instruction Binary(const std::string& op, v1::Operand a, v1::Operand b) {
  v1::Instruction ins = Ins(op);
  *ins.add_operands() = std::move(a);
  *ins.add_operands() = std::move(b);
  return ins;
}
// A loop of `trips` doubling its one carried operand `x`.
v1::Instruction DoublingLoop(int64_t trips, v1::Operand x) {
  v1::Instruction loop = Ins("loop");
  loop.set_trip_count(trips);
  *loop.add_operands() = std::move(x);
  *loop.mutable_body()->add_instructions() = Binary("add", Val(0), Val(0));
  *loop.mutable_body()->add_yields() = Val(1);
  return loop;
}

// A while over one carried value 0 (`x`): cond yields `cond_op`(x, x)
// (greater_equal: always true for numbers), body doubles it.
v1::Instruction DoublingWhile(int64_t max_trips, v1::Operand x,
                              const std::string& cond_op = "greater_equal") {
  v1::Instruction w = Ins("while");
  w.set_trip_count(max_trips);
  *w.add_operands() = std::move(x);
  *w.mutable_cond()->add_instructions() = Binary(cond_op, Val(0), Val(0));
  *w.mutable_cond()->add_yields() = Val(1);
  *w.mutable_body()->add_instructions() = Binary("add", Val(0), Val(0));
  *w.mutable_body()->add_yields() = Val(1);
  return w;
}

constexpr int64_t kPremade = 1000;  // int64 elements of the pre-made array

class BadInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ServerOptions o;
    o.max_message_bytes = 1 << 20;
    o.chunk_bytes = 256 << 10;
    o.max_memory_bytes = 64 << 20;
    o.limits.max_inline_bytes = 512 << 10;
    server_ = StartServer(o).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);  // let the server be the one to refuse
    stub_ = v1::Resident::NewStub(
        grpc::CreateCustomChannel(Target(*server_), grpc::InsecureChannelCredentials(), args));
    baseline_ = server_->device().budget().used();
    v1::OpenSessionRequest req;
    v1::OpenSessionResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->OpenSession(&ctx, req, &resp).ok());
    session_ = resp.session();
    premade_bytes_.resize(kPremade * 8);
    for (int64_t i = 0; i < kPremade; ++i) {
      const int64_t v = i * 7919 - 3000;
      std::memcpy(premade_bytes_.data() + 8 * i, &v, 8);
    }
    absl::StatusOr<v1::ArrayInfo> info =
        UploadRaw(session_, v1::DTYPE_INT64, {kPremade}, {premade_bytes_});
    ASSERT_TRUE(info.ok()) << info.status();
    premade_ = info->handle();
    with_premade_ = server_->device().budget().used();
    ASSERT_EQ(with_premade_ - baseline_, kPremade * 8);
  }

  void TearDown() override {
    v1::CloseSessionRequest req;
    req.set_session(session_);
    v1::CloseSessionResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->CloseSession(&ctx, req, &resp).ok());
    EXPECT_TRUE(WaitFor([&] { return server_->device().budget().used() == baseline_; }))
        << "used " << server_->device().budget().used() << ", started at " << baseline_;
  }

  absl::StatusOr<v1::RunResponse> Run(
      v1::RunRequest req, std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
    if (!req.has_program() && req.outputs_size() == 0 && req.session().empty()) {
      req.set_session(session_);
    }
    v1::RunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    absl::Status s = FromGrpc(stub_->Run(&ctx, req, &resp));
    if (!s.ok()) return s;
    return resp;
  }
  // A run in the fixture's session of `program`, keeping value `out`.
  absl::Status RunKeep(const v1::Program& program, uint32_t out, bool return_data = false) {
    v1::RunRequest req;
    req.set_session(session_);
    *req.mutable_program() = program;
    v1::Output* o = req.add_outputs();
    o->set_value(out);
    o->set_keep(!return_data);
    o->set_return_data(return_data);
    return Run(req).status();
  }

  // Streams an upload: the header (session, dtype, shape) then `chunks`;
  // with cancel_after >= 0 the client cancels after that many chunks.
  absl::StatusOr<v1::ArrayInfo> UploadRaw(const std::string& session, int dtype,
                                          const std::vector<int64_t>& shape,
                                          std::vector<std::string> chunks, int cancel_after = -1) {
    grpc::ClientContext ctx;
    v1::ArrayInfo info;
    auto writer = stub_->Upload(&ctx, &info);
    v1::UploadRequest msg;
    msg.set_session(session);
    msg.set_dtype(static_cast<v1::DType>(dtype));
    for (int64_t d : shape) msg.add_shape(d);
    if (chunks.empty()) writer->Write(msg);
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (cancel_after >= 0 && static_cast<int>(i) == cancel_after) {
        ctx.TryCancel();
        break;
      }
      msg.set_data(chunks[i]);
      if (!writer->Write(msg)) break;
      msg.Clear();
    }
    writer->WritesDone();
    absl::Status s = FromGrpc(writer->Finish());
    if (!s.ok()) return s;
    return info;
  }

  std::set<std::string> Handles() {
    v1::ListRequest req;
    req.set_session(session_);
    v1::ListResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->List(&ctx, req, &resp).ok());
    std::set<std::string> out;
    for (const auto& a : resp.arrays()) out.insert(a.handle());
    return out;
  }

  // The checks after every row.
  void ExpectServerHealthy(const std::string& row) {
    SCOPED_TRACE(row);
    // A good request: premade + ones(1000, int64), returned inline.
    v1::RunRequest req;
    req.set_session(session_);
    v1::Instruction ones = Ins("ones", {kPremade});
    ones.set_dtype(v1::DTYPE_INT64);
    *req.mutable_program()->add_instructions() = ones;
    *req.mutable_program()->add_instructions() = Binary("add", Hnd(premade_), Val(0));
    v1::Output* o = req.add_outputs();
    o->set_value(1);
    o->set_return_data(true);
    absl::StatusOr<v1::RunResponse> r = Run(req);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->results_size(), 1);
    const std::string& data = r->results(0).data();
    ASSERT_EQ(data.size(), premade_bytes_.size());
    for (int64_t i = 0; i < kPremade; ++i) {
      int64_t got;
      std::memcpy(&got, data.data() + 8 * i, 8);
      ASSERT_EQ(got, i * 7919 - 3000 + 1) << i;
    }
    // The pre-made array, byte for byte.
    v1::DownloadRequest dreq;
    dreq.set_session(session_);
    dreq.set_handle(premade_);
    grpc::ClientContext ctx;
    auto reader = stub_->Download(&ctx, dreq);
    v1::DownloadChunk chunk;
    std::string bytes;
    while (reader->Read(&chunk)) bytes += chunk.data();
    ASSERT_TRUE(reader->Finish().ok());
    EXPECT_EQ(bytes, premade_bytes_);
    // No handle created or lost.
    EXPECT_EQ(Handles(), std::set<std::string>({premade_}));
    // Device memory back to just the pre-made array (a cancelled call may
    // finish on the server a moment after the client sees it end).
    EXPECT_TRUE(WaitFor([&] { return server_->device().budget().used() == with_premade_; }))
        << "used " << server_->device().budget().used() << ", want " << with_premade_;
  }

  static Server* server_;
  std::unique_ptr<v1::Resident::Stub> stub_;
  std::string session_, premade_, premade_bytes_;
  int64_t baseline_ = 0, with_premade_ = 0;
};
Server* BadInputTest::server_ = nullptr;

struct Row {
  std::string name;
  std::function<absl::Status()> request;
  absl::StatusCode code;
  std::string message;  // a substring of the expected message
};

TEST_F(BadInputTest, EveryBadRequestIsRefusedAndTheServerStillServes) {
  const std::string unknown = HandleId::Random().bytes();
  auto program = [](std::vector<v1::Instruction> ins) {
    v1::Program p;
    for (auto& i : ins) *p.add_instructions() = std::move(i);
    return p;
  };
  auto nested = [&](int depth) {
    v1::Instruction loop = DoublingLoop(2, Val(0));
    for (int d = 1; d < depth; ++d) {
      v1::Instruction outer = Ins("loop");
      outer.set_trip_count(2);
      *outer.add_operands() = Val(0);
      *outer.mutable_body()->add_instructions() = loop;
      *outer.mutable_body()->add_yields() = Val(1);
      loop = std::move(outer);
    }
    return program({Ins("ones", {4}), loop});
  };
  v1::Instruction bad_dtype = Ins("ones", {4});
  bad_dtype.set_dtype(static_cast<v1::DType>(99));
  v1::Instruction huge_op = Ins(std::string(2 << 20, 'x'));
  auto state = [] {
    v1::Instruction s = Ins("zeros", {6});
    s.set_dtype(v1::DTYPE_UINT64);
    return s;
  };

  const std::vector<Row> rows = {
      {"unknown handle",
       [&] { return RunKeep(program({Binary("add", Hnd(unknown), Hnd(premade_))}), 0); },
       absl::StatusCode::kNotFound, "array handle not found"},
      {"released handle",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session(session_);
         *req.mutable_program() = program({Ins("ones", {8})});
         req.add_outputs()->set_keep(true);
         absl::StatusOr<v1::RunResponse> made = Run(req);
         if (!made.ok()) return made.status();
         const std::string h = made->results(0).array().handle();
         v1::ReleaseRequest rel;
         rel.set_session(session_);
         rel.add_handles(h);
         v1::ReleaseResponse rr;
         grpc::ClientContext ctx;
         if (!stub_->Release(&ctx, rel, &rr).ok()) return absl::InternalError("release failed");
         return RunKeep(program({Binary("add", Hnd(h), Hnd(h))}), 0);
       },
       absl::StatusCode::kNotFound, "array handle not found"},
      {"shape mismatch in add",
       [&] {
         return RunKeep(
             program({Ins("ones", {2, 3}), Ins("ones", {4}), Binary("add", Val(0), Val(1))}), 2);
       },
       absl::StatusCode::kInvalidArgument, "instruction 2 (add): operands could not be broadcast"},
      {"shape mismatch in dot",
       [&] {
         return RunKeep(
             program({Ins("ones", {2, 3}), Ins("ones", {4, 5}), Binary("dot", Val(0), Val(1))}), 2);
       },
       absl::StatusCode::kInvalidArgument, "not aligned: 3 (dim 1) != 4 (dim 0)"},
      {"shape mismatch against a handle",
       [&] {
         return RunKeep(program({Ins("ones", {3}), Binary("multiply", Hnd(premade_), Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "could not be broadcast"},
      {"negative dimension",
       [&] {
         return RunKeep(program({Ins("ones", {3, -1})}), 0);
       },
       absl::StatusCode::kInvalidArgument, "negative dimension -1"},
      {"element count overflows 64 bits",
       [&] {
         return RunKeep(program({Ins("ones", {int64_t{1} << 62, 4})}), 0);
       },
       absl::StatusCode::kInvalidArgument, "more elements than fit in 64 bits"},
      {"byte count overflows 64 bits",
       [&] {
         return RunKeep(program({Ins("zeros", {int64_t{1} << 61, 2})}), 0);
       },
       absl::StatusCode::kInvalidArgument, "overflow"},
      {"unsupported dtype in a program", [&] { return RunKeep(program({bad_dtype}), 0); },
       absl::StatusCode::kInvalidArgument, "unsupported dtype 99"},
      {"unsupported dtype in an upload",
       [&] { return UploadRaw(session_, 99, {2}, {std::string(16, '\0')}).status(); },
       absl::StatusCode::kInvalidArgument, "unsupported dtype 99"},
      {"unknown op", [&] { return RunKeep(program({Ins("frobnicate", {2})}), 0); },
       absl::StatusCode::kInvalidArgument, "instruction 0: unknown op 'frobnicate'"},
      {"reference to a later result",
       [&] {
         return RunKeep(program({Binary("add", Val(1), Val(1)), Ins("ones", {2})}), 0);
       },
       absl::StatusCode::kInvalidArgument, "refers to value 1"},
      {"operand names nothing",
       [&] {
         v1::Instruction neg = Ins("negative");
         neg.add_operands();
         return RunKeep(program({neg}), 0);
       },
       absl::StatusCode::kInvalidArgument, "neither a handle nor a value"},
      {"malformed handle",
       [&] { return RunKeep(program({Binary("add", Hnd("abc"), Hnd(premade_))}), 0); },
       absl::StatusCode::kInvalidArgument, "handle must be 16 bytes, got 3"},
      {"output names an undefined value", [&] { return RunKeep(program({Ins("ones", {2})}), 5); },
       absl::StatusCode::kInvalidArgument, "output 0 names value 5"},
      {"bool subtract",
       [&] {
         v1::Instruction b = Ins("ones", {2});
         b.set_dtype(v1::DTYPE_BOOL);
         return RunKeep(program({b, Binary("subtract", Val(0), Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "boolean subtract"},
      {"normal draws of an integer dtype",
       [&] {
         return RunKeep(program({state(), NormalOf(v1::DTYPE_INT64, false)}), 1);
       },
       absl::StatusCode::kInvalidArgument, "normal: draws float64"},
      {"float32 normal draws with loc and scale",
       [&] {
         return RunKeep(program({state(), NormalOf(v1::DTYPE_FLOAT32, true)}), 1);
       },
       absl::StatusCode::kInvalidArgument, "float32 with loc and scale"},
      {"exponential draws with a loc",
       [&] {
         v1::Instruction e = NormalOf(v1::DTYPE_FLOAT64, true);
         e.set_op("exponential");
         return RunKeep(program({state(), e}), 1);
       },
       absl::StatusCode::kInvalidArgument, "exponential: takes a scale"},
      {"normal draws from a float64 state",
       [&] {
         return RunKeep(program({Ins("ones", {6}), NormalOf(v1::DTYPE_FLOAT64, false)}), 1);
       },
       absl::StatusCode::kInvalidArgument, "generator state must be uint64"},
      {"fft over a repeated axis",
       [&] {
         return RunKeep(program({Ins("ones", {2, 4}), FftOver("fft", {1, -1})}), 1);
       },
       absl::StatusCode::kInvalidArgument, "repeated axis 1"},
      {"fft over four axes",
       [&] {
         return RunKeep(program({Ins("ones", {2, 2, 2, 2}), FftOver("fft", {0, 1, 2, 3})}), 1);
       },
       absl::StatusCode::kInvalidArgument, "axes must name 1 to 3 axes"},
      {"irfft over two axes",
       [&] {
         return RunKeep(program({Ins("ones", {2, 4}), FftOver("irfft", {0, 1})}), 1);
       },
       absl::StatusCode::kInvalidArgument, "axes must name 1 to 1 axes"},
      {"fft over an axis past the array",
       [&] {
         return RunKeep(program({Ins("ones", {2, 4}), FftOver("fft", {0, 2})}), 1);
       },
       absl::StatusCode::kInvalidArgument, "axis 2 is out of bounds"},
      {"loop with a negative trip count",
       [&] {
         return RunKeep(program({Ins("ones", {2}), DoublingLoop(-1, Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "instruction 1 (loop): trip count -1 is outside"},
      {"loop with an absurd trip count",
       [&] {
         return RunKeep(program({Ins("ones", {2}), DoublingLoop(int64_t{1} << 40, Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "trip count 1099511627776 is outside"},
      {"loops nested deeper than the limit", [&] { return RunKeep(nested(9), 1); },
       absl::StatusCode::kInvalidArgument, "nest deeper than the limit of 8"},
      {"inline result over the limit",
       [&] { return RunKeep(program({Ins("ones", {100000})}), 0, /*return_data=*/true); },
       absl::StatusCode::kResourceExhausted, "over the server's limit of 524288"},
      {"upload with too many bytes",
       [&] {
         return UploadRaw(session_, v1::DTYPE_INT64, {10},
                          {std::string(48, 'a'), std::string(40, 'b')})
             .status();
       },
       absl::StatusCode::kInvalidArgument, "upload carries more than the 80 bytes"},
      {"upload with too few bytes",
       [&] { return UploadRaw(session_, v1::DTYPE_INT64, {10}, {std::string(72, 'a')}).status(); },
       absl::StatusCode::kInvalidArgument, "upload ended after 72 of the 80 bytes"},
      {"upload with no data for a non-empty shape",
       [&] { return UploadRaw(session_, v1::DTYPE_FLOAT32, {3}, {}).status(); },
       absl::StatusCode::kInvalidArgument, "upload ended after 0 of the 12 bytes"},
      {"upload with a negative dimension",
       [&] { return UploadRaw(session_, v1::DTYPE_FLOAT32, {-3}, {}).status(); },
       absl::StatusCode::kInvalidArgument, "negative dimension"},
      {"upload cancelled by the client mid-stream",
       [&] {
         std::vector<std::string> chunks(8, std::string(256 << 10, 'z'));  // 2 MiB declared
         return UploadRaw(session_, v1::DTYPE_FLOAT64, {256 << 10}, chunks, /*cancel_after=*/3)
             .status();
       },
       absl::StatusCode::kCancelled, ""},
      {"upload message over the message-size limit",
       [&] {
         return UploadRaw(session_, v1::DTYPE_BOOL, {2 << 20}, {std::string(2 << 20, '\x01')})
             .status();
       },
       absl::StatusCode::kResourceExhausted, "larger than max"},
      {"run request over the message-size limit", [&] { return RunKeep(program({huge_op}), 0); },
       absl::StatusCode::kResourceExhausted, "larger than max"},
      {"program needing more than --max-memory",
       [&] {
         return RunKeep(program({Ins("ones", {3000, 3000})}), 0);
       },  // 72 MB > 64 MiB
       absl::StatusCode::kResourceExhausted, "needs 72000000 bytes of device memory"},
      {"program whose kept results together exceed --max-memory",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session(session_);
         for (uint32_t i = 0; i < 5; ++i) {
           *req.mutable_program()->add_instructions() = Ins("ones", {2000000});  // 16 MB
           v1::Output* o = req.add_outputs();
           o->set_value(i);
           o->set_keep(true);
         }
         return Run(req).status();
       },
       absl::StatusCode::kResourceExhausted, "--max-memory"},
      {"upload larger than --max-memory",
       [&] {
         return UploadRaw(session_, v1::DTYPE_FLOAT64, {10000000}, {std::string(1000, 'a')})
             .status();
       },
       absl::StatusCode::kResourceExhausted, "--max-memory"},
      {"run past its deadline stops and keeps nothing",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session(session_);
         *req.mutable_program() =
             program({Ins("ones", {1000}), DoublingLoop(int64_t{1} << 30, Val(0))});
         v1::Output* o = req.add_outputs();
         o->set_value(1);
         o->set_keep(true);
         return Run(req, std::chrono::milliseconds(200)).status();
       },
       absl::StatusCode::kDeadlineExceeded, ""},
      {"while without a cond",
       [&] {
         v1::Instruction w = DoublingWhile(4, Val(0));
         w.clear_cond();
         return RunKeep(program({Ins("ones", {3}), w}), 1);
       },
       absl::StatusCode::kInvalidArgument, "while needs a cond program"},
      {"cond on a loop",
       [&] {
         v1::Instruction loop = DoublingLoop(4, Val(0));
         *loop.mutable_cond() = DoublingWhile(4, Val(0)).cond();
         return RunKeep(program({Ins("ones", {3}), loop}), 1);
       },
       absl::StatusCode::kInvalidArgument, "only while has a cond"},
      {"while cond that is not bool",
       [&] {
         return RunKeep(program({Ins("ones", {}), DoublingWhile(4, Val(0), "add")}), 1);
       },
       absl::StatusCode::kInvalidArgument, "a while condition must be a bool scalar"},
      {"while cond that is not a scalar",
       [&] {
         return RunKeep(program({Ins("ones", {3}), DoublingWhile(4, Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "cond yield is bool (3,)"},
      {"while cond yielding two values",
       [&] {
         v1::Instruction w = DoublingWhile(4, Val(0));
         *w.mutable_cond()->add_yields() = Val(1);
         return RunKeep(program({Ins("ones", {}), w}), 1);
       },
       absl::StatusCode::kInvalidArgument, "cond yields 2 values"},
      {"while body changing the carried dtype",
       [&] {
         v1::Instruction w = DoublingWhile(4, Val(0));
         *w.mutable_body()->mutable_instructions(0) = Binary("less", Val(0), Val(0));
         return RunKeep(program({Ins("ones", {}), w}), 1);
       },
       absl::StatusCode::kInvalidArgument, "must keep each carried value's dtype and shape"},
      {"while max_trips over the server's cap",
       [&] {
         return RunKeep(program({Ins("ones", {}), DoublingWhile(int64_t{1} << 40, Val(0))}), 1);
       },
       absl::StatusCode::kInvalidArgument, "--max-trip-count"},
      {"while past its deadline stops and keeps nothing",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session(session_);
         // x >= x holds for ever (0 doubles to 0); max_trips is the cap's.
         *req.mutable_program() =
             program({Ins("zeros", {}), DoublingWhile(int64_t{1} << 30, Val(0))});
         for (uint32_t v : {1u, 2u, 3u}) {
           v1::Output* o = req.add_outputs();
           o->set_value(v);
           o->set_keep(true);
         }
         return Run(req, std::chrono::milliseconds(300)).status();
       },
       absl::StatusCode::kDeadlineExceeded, ""},
      {"missing session",
       [&]() -> absl::Status {
         v1::RunRequest req;
         *req.mutable_program() = program({Ins("ones", {2})});
         req.add_outputs()->set_keep(true);
         return Run(req).status();
       },
       absl::StatusCode::kInvalidArgument, "names no session"},
      {"unknown session id",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session(HandleId::Random().bytes());
         *req.mutable_program() = program({Ins("ones", {2})});
         req.add_outputs()->set_keep(true);
         return Run(req).status();
       },
       absl::StatusCode::kNotFound, "session not found"},
      {"malformed session id",
       [&]() -> absl::Status {
         v1::RunRequest req;
         req.set_session("12345");
         *req.mutable_program() = program({Ins("ones", {2})});
         req.add_outputs()->set_keep(true);
         return Run(req).status();
       },
       absl::StatusCode::kInvalidArgument, "session id must be 16 bytes, got 5"},
      {"upload into an unknown session",
       [&] {
         return UploadRaw(HandleId::Random().bytes(), v1::DTYPE_INT64, {1}, {std::string(8, 'a')})
             .status();
       },
       absl::StatusCode::kNotFound, "session not found"},
      {"download of an unknown handle",
       [&]() -> absl::Status {
         v1::DownloadRequest req;
         req.set_session(session_);
         req.set_handle(unknown);
         grpc::ClientContext ctx;
         auto reader = stub_->Download(&ctx, req);
         v1::DownloadChunk chunk;
         while (reader->Read(&chunk)) {
         }
         return FromGrpc(reader->Finish());
       },
       absl::StatusCode::kNotFound, "array handle not found"},
      {"release naming an unknown handle releases nothing",
       [&]() -> absl::Status {
         v1::ReleaseRequest req;
         req.set_session(session_);
         req.add_handles(premade_);
         req.add_handles(unknown);
         v1::ReleaseResponse resp;
         grpc::ClientContext ctx;
         return FromGrpc(stub_->Release(&ctx, req, &resp));
       },
       absl::StatusCode::kNotFound, "array handle not found"},
  };

  for (const Row& row : rows) {
    absl::Status s = row.request();
    EXPECT_EQ(s.code(), row.code) << row.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(row.message)) << row.name;
    ExpectServerHealthy(row.name);
  }
}

TEST_F(BadInputTest, ReleasesPiggybackedOnAFailingRunStillHappen) {
  // RunRequest.release: "released after the program (whether it succeeds or not)".
  v1::RunRequest make;
  make.set_session(session_);
  *make.mutable_program()->add_instructions() = Ins("ones", {16});
  make.add_outputs()->set_keep(true);
  absl::StatusOr<v1::RunResponse> made = Run(make);
  ASSERT_TRUE(made.ok()) << made.status();
  const std::string h = made->results(0).array().handle();
  ASSERT_EQ(Handles().size(), 2u);

  // Fails in planning (shape mismatch).
  v1::RunRequest bad;
  bad.set_session(session_);
  *bad.mutable_program()->add_instructions() = Ins("ones", {2});
  *bad.mutable_program()->add_instructions() = Ins("ones", {3});
  *bad.mutable_program()->add_instructions() = Binary("add", Val(0), Val(1));
  bad.add_outputs()->set_value(2);
  bad.mutable_outputs(0)->set_keep(true);
  bad.add_release(h);
  EXPECT_EQ(Run(bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Handles(), std::set<std::string>({premade_}));

  // Fails in decoding (unknown op).
  made = Run(make);
  ASSERT_TRUE(made.ok());
  v1::RunRequest undecodable;
  undecodable.set_session(session_);
  *undecodable.mutable_program()->add_instructions() = Ins("frobnicate");
  undecodable.add_release(made->results(0).array().handle());
  EXPECT_EQ(Run(undecodable).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Handles(), std::set<std::string>({premade_}));
  ExpectServerHealthy("after piggybacked releases");
}

}  // namespace
}  // namespace resident::e2e
