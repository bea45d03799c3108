// The gateway's bounds over real gRPC on 127.0.0.1:0: a stream that never
// says Hello is ended at the deadline and gives its slot back; streams past
// the cap are refused before their Hello; a peer that stops reading is cut
// off once its outbound queue passes the byte cap, and the host hears of it.
#include "orchestrator/testing/gateway_fixture.h"

namespace apollo::orchestrator {
namespace {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;
using std::chrono::milliseconds;

using Silent = testing::TestAgent;

// An outbound cap for the cut-off tests, and an intent of 64 KiB.
constexpr int64_t kOutboundCap = 1 << 20;
CenterMessage BigIntent() {
  CenterMessage big;
  big.mutable_intents()->add_intents()->set_params_json(std::string(64 << 10, 'x'));
  return big;
}

class GatewayBoundsTest : public testing::GatewayTest {
 protected:
  // Serves with an outbound cap of kOutboundCap; `s` says Hello as `node`.
  void ServeCappedAndSayHello(Silent& s, const std::string& node) {
    GatewayOptions o;
    o.max_outbound_bytes = kOutboundCap;
    Serve(o);
    s.stream = stub_->Connect(&s.ctx);
    AgentMessage hello;
    hello.mutable_hello()->set_node_id(node);
    ASSERT_TRUE(s.stream->Write(hello));
  }
};

TEST_F(GatewayBoundsTest, AStreamWithoutHelloIsEndedAtTheDeadline) {
  GatewayOptions o;
  o.hello_timeout = milliseconds(200);
  Serve(o);
  Silent s;
  s.ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto started = std::chrono::steady_clock::now();
  s.stream = stub_->Connect(&s.ctx);
  CenterMessage msg;
  EXPECT_FALSE(s.stream->Read(&msg));  // the center ends it; nothing was sent
  grpc::Status st = s.stream->Finish();
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_EQ(st.error_message(),
            "no Hello within 200ms of opening the stream (limits.hello_timeout)");
  EXPECT_GE(took, milliseconds(150));
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_TRUE(WaitOpen(0));  // its slot is free again
  EXPECT_EQ(host_.hellos(), 0u);
  EXPECT_EQ(gateway_->hello_deadlines().expired_total(), 1);
}

TEST_F(GatewayBoundsTest, StreamsPastTheCapAreRefusedBeforeHello) {
  GatewayOptions o;
  o.hello_timeout = std::chrono::seconds(30);
  o.max_streams = 2;
  Serve(o);
  Silent a, b, c;
  a.stream = stub_->Connect(&a.ctx);
  b.stream = stub_->Connect(&b.ctx);
  ASSERT_TRUE(WaitOpen(2));  // silent, not past Hello: they count
  c.stream = stub_->Connect(&c.ctx);
  CenterMessage msg;
  EXPECT_FALSE(c.stream->Read(&msg));
  grpc::Status st = c.stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(st.error_message().find("too many agent streams open (2, limits.max_sessions)"),
            std::string::npos)
      << st.error_message();
  EXPECT_EQ(st.error_details(), "5000");  // retry-after for the agent
  // One leaves: a new stream gets its slot and may say Hello.
  a.ctx.TryCancel();
  (void)a.stream->Finish();
  ASSERT_TRUE(WaitOpen(1));
  Silent d;
  d.stream = stub_->Connect(&d.ctx);
  AgentMessage hello;
  hello.mutable_hello()->set_node_id("edge-1");
  ASSERT_TRUE(d.stream->Write(hello));
  ASSERT_TRUE(d.stream->Read(&msg));
  EXPECT_TRUE(msg.has_welcome());
  b.ctx.TryCancel();
  d.ctx.TryCancel();
  (void)b.stream->Finish();
  (void)d.stream->Finish();
  EXPECT_TRUE(WaitOpen(0));
}

TEST_F(GatewayBoundsTest, APeerThatStopsReadingIsCutOff) {
  Silent s;
  ASSERT_NO_FATAL_FAILURE(ServeCappedAndSayHello(s, "edge-slow"));
  auto handle = host_.WaitHandle();
  ASSERT_TRUE(handle);
  // The client never reads: flow control stalls the writes, the queue
  // grows until the cap cuts the session off. Bounded: 400 x 64 KiB.
  const CenterMessage big = BigIntent();
  for (int sent = 0; sent < 400 && handle->Send(big); ++sent) {
  }
  ASSERT_TRUE(host_.WaitDisconnects(1));
  EXPECT_FALSE(handle->connected());
  auto refusals = host_.refusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_NE(refusals[0].find("session_cut_off: the peer stopped reading: "), std::string::npos)
      << refusals[0];
  EXPECT_NE(refusals[0].find("over the cap of 1048576 (limits.session_outbound_mib)"),
            std::string::npos)
      << refusals[0];
  EXPECT_TRUE(WaitOpen(0));
  s.ctx.TryCancel();
  (void)s.stream->Finish();
}

// The cap bounds the backlog, not the volume: a peer that keeps reading
// receives many times the cap and is never cut off.
TEST_F(GatewayBoundsTest, APeerThatReadsIsNeverCutOff) {
  Silent s;
  ASSERT_NO_FATAL_FAILURE(ServeCappedAndSayHello(s, "edge-fast"));
  CenterMessage msg;
  ASSERT_TRUE(s.stream->Read(&msg));  // Welcome
  auto handle = host_.WaitHandle();
  ASSERT_TRUE(handle);
  const CenterMessage big = BigIntent();
  int received = 0;
  for (int i = 0; i < 64; ++i) {  // 4 MiB in all, four times the cap
    ASSERT_TRUE(handle->Send(big));
    ASSERT_TRUE(s.stream->Read(&msg)) << "cut off after " << received << " messages";
    ++received;
  }
  EXPECT_EQ(received, 64);
  EXPECT_TRUE(handle->connected());
  EXPECT_TRUE(host_.refusals().empty());
  s.ctx.TryCancel();
  (void)s.stream->Finish();
}

}  // namespace
}  // namespace apollo::orchestrator
