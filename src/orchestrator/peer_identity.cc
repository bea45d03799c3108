#include "orchestrator/peer_identity.h"

#include "tls/cert_identity.h"

namespace apollo::orchestrator {

std::string ShownId(const std::string& id) {
  std::string out = id.substr(0, 128);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return id.size() > 128 ? out + "..." : out;
}

PeerIdentity IdentityOf(const grpc::ServerContextBase& ctx, bool tls) {
  PeerIdentity id;
  id.checked = tls;
  id.peer = ctx.peer();
  if (!tls) return id;
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  std::vector<grpc::string_ref> pem =
      auth ? auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)
           : std::vector<grpc::string_ref>{};
  if (pem.empty()) {
    id.problem = "the peer presented no certificate";
    return id;
  }
  auto node = tls::NodeIdOfCertificate(std::string_view(pem[0].data(), pem[0].size()));
  if (node.ok()) {
    id.node_id = *node;
  } else {
    id.problem = node.status().message();
  }
  return id;
}

std::optional<std::string> HelloRefusal(const PeerIdentity& peer,
                                        const std::string& hello_node_id) {
  if (!peer.checked) return std::nullopt;
  if (peer.node_id.empty()) {
    return "Hello says " + ShownId(hello_node_id) + ", but " + peer.problem +
           ": an agent needs a node certificate (apollo-cli tls cert create --node " +
           ShownId(hello_node_id) + ")";
  }
  if (peer.node_id != hello_node_id) {
    return "certificate is for node " + peer.node_id + ", Hello says " + ShownId(hello_node_id);
  }
  return std::nullopt;
}

}  // namespace apollo::orchestrator
