#pragma once

// A node's identity in its certificate. `apollo-cli tls cert create --node
// NODE_ID` binds the node id into the certificate as the URI subject
// alternative name "apollo-node://NODE_ID" (and as its CN, for people); the
// orchestrator reads it back from the verified peer certificate of an agent
// stream and refuses a Hello that names another node.
//
// Only the URI SAN counts: a CN is free text any certificate may carry, the
// apollo-node:// URI is put there only by a node certificate.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

#include "core/status.h"

namespace apollo::tls {

inline constexpr std::string_view kNodeUriPrefix = "apollo-node://";

// The node id bound in the (first) certificate of `pem`.
//   NotFound         the certificate carries no apollo-node:// URI (a server
//                    or an operator certificate);
//   InvalidArgument  `pem` is not a certificate, or it names two different
//                    nodes, or the id is not a valid node id.
Result<std::string> NodeIdOfCertificate(std::string_view pem);

// Empty when `value` is a valid node id (letters, digits, '.', '_', '-';
// 1..128 characters, as agent_config's node_id), else why not, starting with
// `what` ("the node id 'a/b' may hold only ...").
std::string NameProblem(std::string_view what, std::string_view value);
inline std::string NodeIdProblem(std::string_view node_id) {
  return NameProblem("the node id", node_id);
}

}  // namespace apollo::tls
