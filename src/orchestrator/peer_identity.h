#pragma once

// Who is at the other end of an agent stream, as far as TLS proved it.
//
// With TLS on (orchestrator --tls-*), every peer presented a certificate the
// fleet's CA signed (the handshake refuses the rest). An agent's certificate
// binds its node id (tls/cert_identity.h, URI SAN apollo-node://NODE_ID);
// the Hello of the stream must name that node, or the stream is refused
// before it can touch the node's session (agent_session.cc).
//
// Thread-safety: values and pure functions.

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>

namespace apollo::orchestrator {

inline constexpr char kImpersonationRefused[] = "impersonation_refused";  // alert kind

struct PeerIdentity {
  // TLS is on: the Hello must match node_id. Off: anyone may say anything
  // (only on a loopback address, see CheckExposure).
  bool checked = false;
  std::string node_id;  // from the certificate; empty when it names no node
  std::string problem;  // why node_id is empty ("the certificate names no node ...")
  std::string peer;     // "ipv4:10.0.0.7:51234", for messages
};

// The identity of the peer of `ctx`. `tls`: the server requires client
// certificates (so one must be there). Reads the verified peer certificate
// (auth context property "x509_pem_cert") with OpenSSL.
PeerIdentity IdentityOf(const grpc::ServerContextBase& ctx, bool tls);

// A node id as a peer sent it, safe for a message or an alert row: at most
// 128 characters (then "..."), control characters replaced by '?'.
std::string ShownId(const std::string& id);

// Why a Hello naming `hello_node_id` from `peer` must be refused, e.g.
// "certificate is for node worker-1, Hello says worker-2"; nullopt when it
// may proceed (TLS off, or the ids match).
std::optional<std::string> HelloRefusal(const PeerIdentity& peer, const std::string& hello_node_id);

}  // namespace apollo::orchestrator
