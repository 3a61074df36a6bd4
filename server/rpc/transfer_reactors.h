// The streaming methods: Upload (client streams chunks in) and Download
// (server streams chunks out), each a reactor whose state is read and
// changed in one place, which alone decides when the call finishes.
#ifndef RESIDENT_SERVER_RPC_TRANSFER_REACTORS_H_
#define RESIDENT_SERVER_RPC_TRANSFER_REACTORS_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

namespace resident {

class ResidentService;

// Both return a reactor that deletes itself when gRPC is done with it.
grpc::ServerReadReactor<grpc::ByteBuffer>* NewUploadReactor(ResidentService& service,
                                                            grpc::CallbackServerContext* ctx,
                                                            grpc::ByteBuffer* response);
grpc::ServerWriteReactor<grpc::ByteBuffer>* NewDownloadReactor(ResidentService& service,
                                                               grpc::CallbackServerContext* ctx,
                                                               const grpc::ByteBuffer* request);

}  // namespace resident

#endif  // RESIDENT_SERVER_RPC_TRANSFER_REACTORS_H_
