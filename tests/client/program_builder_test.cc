// The C++ client folds recorded chains into loop instructions before it
// sends a program (client/program_builder.h over core/chain_runs.h).
#include "client/program_builder.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace resident::client {
namespace {

std::shared_ptr<Node> Handle(const std::string& h) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kMaterialized;
  n->handle = h;
  n->borrowed = true;
  return n;
}

std::shared_ptr<Node> Op(const char* op, std::shared_ptr<Node> a, std::shared_ptr<Node> b) {
  auto n = std::make_shared<Node>();
  n->ins.set_op(op);
  n->inputs = {std::move(a), std::move(b)};
  n->plain_elementwise = true;
  return n;
}

std::string OperandString(const v1::Operand& o) {
  return o.has_handle() ? absl::StrCat("h:", o.handle()) : absl::StrCat("v", o.value());
}

// "op(a,b)" per instruction; loops as "loop*N[a]{body}".
std::string Describe(const v1::Program& p) {
  std::string out;
  for (const v1::Instruction& ins : p.instructions()) {
    if (!out.empty()) out += " ";
    std::string args;
    for (const v1::Operand& o : ins.operands()) {
      absl::StrAppend(&args, args.empty() ? "" : ",", OperandString(o));
    }
    if (ins.op() == "loop") {
      absl::StrAppend(&out, "loop*", ins.trip_count(), "[", args, "]{", Describe(ins.body()),
                      " -> ", OperandString(ins.body().yields(0)), "}");
    } else {
      absl::StrAppend(&out, ins.op(), "(", args, ")");
    }
  }
  return out;
}

std::string Build(const std::shared_ptr<Node>& target, ScopeBuilder* b = nullptr) {
  ScopeBuilder local(nullptr, 0);
  ScopeBuilder& builder = b ? *b : local;
  v1::Program p;
  absl::Status s = builder.Build({target}, &p);
  EXPECT_TRUE(s.ok()) << s;
  return Describe(p);
}

TEST(ProgramBuilderTest, DoublingBecomesOneLoop) {
  std::shared_ptr<Node> x = Handle("X");
  for (int i = 0; i < 1024; ++i) x = Op("add", x, x);
  ScopeBuilder b(nullptr, 0);
  // The first add stays outside: its result's type is the loop's.
  EXPECT_EQ(Build(x, &b), "add(h:X,h:X) loop*1023[v0]{add(v0,v0) -> v1}");
  EXPECT_EQ(b.ValueOf(x.get()), 1u);
}

TEST(ProgramBuilderTest, FixedOperandsAsHandlesInTheBodyOrValuesAsInvariants) {
  std::shared_ptr<Node> a = Handle("A");
  std::shared_ptr<Node> x = Op("add", a, a);
  for (int i = 0; i < 9; ++i) x = Op("add", x, a);
  EXPECT_EQ(Build(x), "add(h:A,h:A) add(v0,h:A) loop*8[v1]{add(v0,h:A) -> v1}");

  std::shared_ptr<Node> c = Op("multiply", a, a);  // value 0
  std::shared_ptr<Node> y = Op("subtract", c, a);  // value 1
  for (int i = 0; i < 5; ++i) y = Op("subtract", c, y);
  // c - a starts the chain and stays outside; c is an invariant.
  EXPECT_EQ(Build(y), "multiply(h:A,h:A) subtract(v0,h:A) loop*5[v1,v0]{subtract(v1,v0) -> v2}");
}

TEST(ProgramBuilderTest, AValueAnArrayHoldsOrAnotherOpBreaksTheChain) {
  std::shared_ptr<Node> x = Handle("X");
  std::shared_ptr<Node> held;
  for (int i = 0; i < 10; ++i) {
    x = Op("add", x, x);
    if (i == 4) held = x;
  }
  held->user_refs = 1;  // an Array points at it: it is kept
  EXPECT_EQ(Build(x),
            "add(h:X,h:X) loop*4[v0]{add(v0,v0) -> v1} add(v1,v1) loop*4[v2]{add(v0,v0) -> v1}");
  held->user_refs = 0;

  std::shared_ptr<Node> y = Handle("Y");
  for (int i = 0; i < 3; ++i) y = Op("add", y, y);
  y = Op("multiply", y, y);
  for (int i = 0; i < 4; ++i) y = Op("multiply", y, y);
  EXPECT_EQ(Build(y),
            "add(h:Y,h:Y) add(v0,v0) add(v1,v1) multiply(v2,v2) loop*4[v3]{multiply(v0,v0) -> v1}");
}

TEST(ProgramBuilderTest, OpsWithAttributesOrOneOperandAreNotFolded) {
  std::shared_ptr<Node> x = Handle("X");
  for (int i = 0; i < 6; ++i) {
    auto n = std::make_shared<Node>();
    n->ins.set_op("negative");
    n->inputs = {x};
    x = n;
  }
  EXPECT_EQ(Build(x),
            "negative(h:X) negative(v0) negative(v1) negative(v2) negative(v3) "
            "negative(v4)");
  std::shared_ptr<Node> y = Handle("Y");
  for (int i = 0; i < 5; ++i) {
    y = Op("add", y, y);
    y->ins.set_dtype(v1::DTYPE_FLOAT32);  // an attribute: not a plain step
  }
  EXPECT_EQ(Build(y), "add(h:Y,h:Y) add(v0,v0) add(v1,v1) add(v2,v2) add(v3,v3)");
}

// Chains recorded through the client's functions are one node each (the
// chain extends as it is recorded) and emit as the runs above.
TEST(ProgramBuilderTest, RecordedChainsAreOneNodeAndEmitAsLoops) {
  auto core = std::make_shared<ClientCore>();
  core->options.lazy = true;
  auto handle = [&](const std::string& h) {
    std::shared_ptr<Node> n = Handle(h);
    n->core = core;
    return MakeArray(std::move(n));
  };
  Array x = handle("X");
  for (int i = 0; i < 1024; ++i) x = x + x;
  EXPECT_EQ(NodeOf(x)->chain, 1023);
  EXPECT_EQ(NodeOf(x)->inputs[0]->chain, 0);  // the first add, kept outside
  EXPECT_EQ(NodeOf(x)->inputs[0]->inputs[0]->kind, Node::Kind::kMaterialized);
  EXPECT_EQ(Build(NodeOf(x)), "add(h:X,h:X) loop*1023[v0]{add(v0,v0) -> v1}");

  const Array a = handle("A");
  Array y = a + a;
  for (int i = 0; i < 9; ++i) y = y * a;  // another op: a chain of its own
  EXPECT_EQ(Build(NodeOf(y)), "add(h:A,h:A) multiply(v0,h:A) loop*8[v1]{multiply(v0,h:A) -> v1}");

  const Array c = a * a;  // value 0
  Array z = c - a;        // value 1
  for (int i = 0; i < 5; ++i) z = c - z;
  EXPECT_EQ(Build(NodeOf(z)),
            "multiply(h:A,h:A) subtract(v0,h:A) loop*5[v1,v0]{subtract(v1,v0) -> v2}");

  // Two more steps are short of a run: unrolled, as the planner leaves them.
  Array s = a + a;
  for (int i = 0; i < 2; ++i) s = s + s;
  EXPECT_EQ(NodeOf(s)->chain, 2);
  EXPECT_EQ(Build(NodeOf(s)), "add(h:A,h:A) add(v0,v0) add(v1,v1)");

  // A step that is not the chain's (another fixed operand, a scalar, another
  // op) starts a new node on the chain's value.
  Array t = a + a;
  for (int i = 0; i < 4; ++i) t = t + a;
  const Array u = t + c;
  EXPECT_EQ(NodeOf(u)->chain, 0);
  EXPECT_EQ(NodeOf(u)->inputs[0], NodeOf(t));
  EXPECT_EQ(NodeOf(t + 2.0)->chain, 0);
}

}  // namespace
}  // namespace resident::client
