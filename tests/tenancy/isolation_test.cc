// The isolation matrix, through the server with tokens: every method that
// takes a handle or a name, called by bob with {his own, alice's,
// never-existing, released/deleted} handle or name. Alice's are NOT_FOUND
// with exactly the message of a never-existing one, and no message names
// alice, her handle or her array name.
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tenancy/tenancy_fixture.h"

namespace resident::tenancy {
namespace {

enum class Which { kOwn, kOther, kNever, kReleased };
const char* WhichName(Which w) {
  switch (w) {
    case Which::kOwn:
      return "own";
    case Which::kOther:
      return "other tenant's";
    case Which::kNever:
      return "never-existing";
    case Which::kReleased:
      return "released";
  }
  return "";
}

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartTenantServer(dir_);
    ASSERT_NE(server_, nullptr);
    alice_ = RawCaller::Open(*server_, kAliceToken);
    bob_ = RawCaller::Open(*server_, kBobToken);
  }

  // A new array of `who`, as a raw handle.
  std::string Make(RawCaller& who) {
    v1::RunRequest req;
    req.set_session(who.session);
    *req.mutable_program()->add_instructions() = Ins("ones", {3});
    req.add_outputs()->set_keep(true);
    grpc::ClientContext ctx;
    who.Prepare(ctx);
    v1::RunResponse resp;
    grpc::Status s = who.stub->Run(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.results(0).array().handle();
  }
  grpc::Status Release(RawCaller& who, const std::string& handle, const std::string& name = "") {
    v1::ReleaseRequest req;
    req.set_session(who.session);
    if (!handle.empty()) req.add_handles(handle);
    if (!name.empty()) req.add_names(name);
    grpc::ClientContext ctx;
    who.Prepare(ctx);
    v1::ReleaseResponse resp;
    return who.stub->Release(&ctx, req, &resp);
  }
  grpc::Status Keep(RawCaller& who, const std::string& handle, const std::string& name) {
    v1::KeepRequest req;
    req.set_session(who.session);
    req.set_handle(handle);
    req.set_name(name);
    grpc::ClientContext ctx;
    who.Prepare(ctx);
    v1::ArrayInfo resp;
    return who.stub->Keep(&ctx, req, &resp);
  }
  // A handle for bob's call.
  std::string HandleFor(Which w) {
    switch (w) {
      case Which::kOwn:
        return Make(bob_);
      case Which::kOther:
        return alice_handle_ = Make(alice_);
      case Which::kNever:
        return HandleId::Random().bytes();
      case Which::kReleased: {
        std::string h = Make(bob_);
        EXPECT_TRUE(Release(bob_, h).ok());
        return h;
      }
    }
    return "";
  }
  // A name for bob's call.
  std::string NameFor(Which w) {
    static int n = 0;
    std::string name = absl::StrCat("arr", ++n);
    switch (w) {
      case Which::kOwn:
        EXPECT_TRUE(Keep(bob_, Make(bob_), name).ok());
        break;
      case Which::kOther:
        EXPECT_TRUE(Keep(alice_, Make(alice_), name).ok());
        alice_name_ = name;
        break;
      case Which::kNever:
        break;
      case Which::kReleased:
        EXPECT_TRUE(Keep(bob_, Make(bob_), name).ok());
        EXPECT_TRUE(Release(bob_, "", name).ok());
        break;
    }
    return name;
  }
  void ExpectNothingOfAlice(const grpc::Status& s, const std::string& what) {
    const std::string m = s.error_message();
    EXPECT_THAT(m, ::testing::Not(::testing::HasSubstr("alice"))) << what;
    if (!alice_handle_.empty()) {
      EXPECT_THAT(m,
                  ::testing::Not(::testing::HasSubstr(HandleId::FromBytes(alice_handle_)->ToHex())))
          << what;
      EXPECT_THAT(m, ::testing::Not(::testing::HasSubstr(alice_handle_))) << what;
    }
    if (!alice_name_.empty()) {
      EXPECT_THAT(m, ::testing::Not(::testing::HasSubstr(alice_name_))) << what;
    }
  }

  ScratchDir dir_;
  std::unique_ptr<Server> server_;
  RawCaller alice_, bob_;
  std::string alice_handle_, alice_name_;
};

TEST_F(IsolationTest, EveryMethodByEveryKindOfHandleAndName) {
  using Call = std::function<grpc::Status(const std::string&)>;
  struct Method {
    const char* name;
    bool takes_name;
    Call call;
  };
  const std::vector<Method> methods = {
      {"Run (operand)", false,
       [&](const std::string& h) {
         v1::RunRequest req;
         req.set_session(bob_.session);
         v1::Instruction* add = req.mutable_program()->add_instructions();
         add->set_op("negative");
         add->add_operands()->set_handle(h);
         req.add_outputs()->set_return_data(true);
         grpc::ClientContext ctx;
         bob_.Prepare(ctx);
         v1::RunResponse resp;
         return bob_.stub->Run(&ctx, req, &resp);
       }},
      {"Download", false,
       [&](const std::string& h) {
         v1::DownloadRequest req;
         req.set_session(bob_.session);
         req.set_handle(h);
         grpc::ClientContext ctx;
         bob_.Prepare(ctx);
         auto reader = bob_.stub->Download(&ctx, req);
         v1::DownloadChunk chunk;
         while (reader->Read(&chunk)) {
         }
         return reader->Finish();
       }},
      {"Release (handle)", false, [&](const std::string& h) { return Release(bob_, h); }},
      {"Keep (handle)", false,
       [&](const std::string& h) {
         static int n = 0;
         return Keep(bob_, h, absl::StrCat("bobs", ++n));
       }},
      {"Attach (name)", true,
       [&](const std::string& name) {
         v1::AttachRequest req;
         req.set_session(bob_.session);
         req.set_name(name);
         grpc::ClientContext ctx;
         bob_.Prepare(ctx);
         v1::ArrayInfo resp;
         return bob_.stub->Attach(&ctx, req, &resp);
       }},
      {"Release (name)", true, [&](const std::string& name) { return Release(bob_, "", name); }},
  };
  for (const Method& m : methods) {
    std::string never_message;
    for (Which w : {Which::kNever, Which::kOwn, Which::kOther, Which::kReleased}) {
      const std::string what =
          absl::StrCat(m.name, " with a ", WhichName(w), m.takes_name ? " name" : " handle");
      const std::string arg = m.takes_name ? NameFor(w) : HandleFor(w);
      grpc::Status s = m.call(arg);
      if (w == Which::kOwn) {
        EXPECT_TRUE(s.ok()) << what << ": " << s.error_message();
        continue;
      }
      EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << what << ": " << s.error_message();
      if (w == Which::kNever) {
        never_message = s.error_message();
      } else {
        EXPECT_EQ(s.error_message(), never_message) << what << " must read as a never-existing one";
      }
      ExpectNothingOfAlice(s, what);
    }
  }
  // Alice's arrays and names are untouched by all of this.
  EXPECT_GT(server_->sessions().Usage("alice").names, 0);
  // List shows bob only his own; a name of alice's is free for bob to use.
  v1::ListRequest req;
  req.set_session(bob_.session);
  grpc::ClientContext ctx;
  bob_.Prepare(ctx);
  v1::ListResponse resp;
  ASSERT_TRUE(bob_.stub->List(&ctx, req, &resp).ok());
  for (const v1::ArrayInfo& a : resp.arrays()) {
    EXPECT_NE(a.handle(), alice_handle_);
    EXPECT_NE(a.name(), alice_name_);
  }
  EXPECT_TRUE(Keep(bob_, Make(bob_), alice_name_).ok()) << "names are per tenant";
  // Bob's session id is not alice's either: using hers is NOT_FOUND.
  v1::ListRequest theirs;
  theirs.set_session(alice_.session);
  grpc::ClientContext ctx2;
  bob_.Prepare(ctx2);
  grpc::Status s = bob_.stub->List(&ctx2, theirs, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  ExpectNothingOfAlice(s, "List with alice's session");
}

}  // namespace
}  // namespace resident::tenancy
