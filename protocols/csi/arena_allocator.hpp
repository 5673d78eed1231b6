#pragma once

// A call's request and response on one protobuf arena, for the calls whose answers are
// large: a ListVolumes of 10,000 volumes builds about 60,000 messages and maps, which the
// heap would allocate one by one and free one by one after the answer is sent; on an
// arena they are carved from a few large blocks, and freed with it at once.

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>

namespace berth::csi {

template <class Request, class Response>
class arena_allocator final : public grpc::MessageAllocator<Request, Response> {
public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override { return new holder; }

private:
  class holder final : public grpc::MessageHolder<Request, Response> {
  public:
    holder() : arena_(options()) {
      this->set_request(google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override { delete this; }

  private:
    static google::protobuf::ArenaOptions options() {
      google::protobuf::ArenaOptions o;
      o.start_block_size = 4096;          // a short answer costs little
      o.max_block_size = size_t{1} << 20; // a long one grows in blocks of up to 1 MiB
      return o;
    }
    google::protobuf::Arena arena_;
  };
};

} // namespace berth::csi
