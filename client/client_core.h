// Internals of the client library shared by its .cc files.
#ifndef RESIDENT_CLIENT_CLIENT_CORE_H_
#define RESIDENT_CLIENT_CLIENT_CORE_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "client/client.h"
#include "client/local_data.h"
#include "core/chain_runs.h"
#include "core/proto/wire.h"
#include "resident/v1/resident.grpc.pb.h"

namespace resident::client {

// A recorded or computed array. Pending nodes form a graph through `inputs`.
struct Node {
  enum class Kind {
    kMaterialized,  // on the server under `handle`
    kOp,            // an instruction not yet sent (a loop has several outputs)
    kParam,         // a loop body's parameter
    kLoopOutput,    // output `index` of the loop node inputs[0]
  };
  ~Node();

  Kind kind = Kind::kOp;
  std::shared_ptr<ClientCore> core;
  std::atomic<int> user_refs{0};  // Array objects pointing here

  // kMaterialized
  std::string handle;
  DType dtype = DType::kFloat64;
  Shape shape;
  int64_t nbytes = 0;
  bool borrowed = false;  // attached by handle: released only explicitly

  // kOp: the instruction without operands; operands come from inputs.
  v1::Instruction ins;
  std::vector<std::shared_ptr<Node>> inputs;
  // Scalar operands of an elementwise op: {position among its operands,
  // value}, in increasing position; inputs fill the other positions.
  std::vector<std::pair<int, v1::Scalar>> scalars;
  int num_outputs = 1;
  // An op of several outputs (a loop, qr, random...): its output nodes,
  // kept alongside whichever one a flush asks for (program_builder.cc).
  std::vector<std::weak_ptr<Node>> outputs;
  // An elementwise op recorded by Elementwise with array operands only.
  bool plain_elementwise = false;
  // > 0: this node is `ins.op()` applied `chain` times to inputs[0], as
  // chain_side says (kBoth: v = op(v, v); kFirst: op(v, inputs[1]);
  // kSecond: op(inputs[1], v)). Recording `x = x + x` extends the chain
  // instead of linking a node per op (core/chain_runs.h's runs, found as
  // they are recorded): O(1) memory and one loop instruction on the wire.
  int64_t chain = 0;
  ChainSide chain_side = ChainSide::kBoth;

  // A problem found while recording (e.g. a malformed loop body); flushing
  // any program that needs this node returns it.
  absl::Status error;

  // kParam / kLoopOutput
  const void* scope = nullptr;
  int index = 0;
};

struct ClientCore : std::enable_shared_from_this<ClientCore> {
  ~ClientCore();

  std::shared_ptr<grpc::Channel> channel;  // for the raw Upload and Download calls
  std::unique_ptr<v1::Resident::Stub> stub;
  std::unique_ptr<v1::Admin::Stub> admin_stub;
  std::string session;
  std::string device;  // where the server placed the session
  ClientOptions options;
  ServerInfo info;
  // The shared-memory data path (local_data.h), when connected.
  std::shared_ptr<LocalData> local;  // shared with the HostViews leasing its regions
  std::string transport = "grpc", transport_detail;

  std::mutex mu;  // serialises program building and flushing
  std::mutex release_mu;
  std::vector<std::string> pending_releases;

  std::mutex renew_mu;
  std::condition_variable renew_cv;
  bool closing = false;
  std::thread renewer;

  // Runs every pending node reachable from `targets`, keeping the targets
  // and any node an Array still points to.
  absl::Status Flush(const std::vector<std::shared_ptr<Node>>& targets);
  void QueueRelease(std::string handle);
  std::vector<std::string> TakeReleases();
  // Sends queued releases now.
  absl::Status SendReleases();
  // The Run RPC, blocking or busy-polled as options.busy_poll says.
  grpc::Status CallRun(grpc::ClientContext* ctx, const v1::RunRequest& req, v1::RunResponse* resp);
  void StartRenewer(int64_t idle_timeout_ms);
  void Close();

  std::shared_ptr<Node> NewOp(const char* op, std::vector<std::shared_ptr<Node>> inputs);
  // In eager mode, runs the node at once.
  Array Finish(std::shared_ptr<Node> node);
};

absl::Status FromGrpc(const grpc::Status& status);
// Wraps a node as a user-facing Array (counting it as a user reference).
Array MakeArray(std::shared_ptr<Node> node);
const std::shared_ptr<Node>& NodeOf(const Array& a);

}  // namespace resident::client

#endif  // RESIDENT_CLIENT_CLIENT_CORE_H_
