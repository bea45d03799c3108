#include "tls/cert_identity.h"

#include <openssl/x509v3.h>

#include "tls/openssl_util.h"

namespace apollo::tls {
namespace {

using NamesPtr = std::unique_ptr<GENERAL_NAMES, internal::Deleter<GENERAL_NAMES_free>>;

bool NodeIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string NameProblem(std::string_view what, std::string_view value) {
  const std::string w(what);
  if (value.empty()) return w + " is empty";
  if (value.size() > 128) return w + " is longer than 128 characters";
  for (char c : value) {
    if (!NodeIdChar(c)) {
      return w + " '" + std::string(value) + "' may hold only letters, digits, '.', '_' and '-'";
    }
  }
  return "";
}

Result<std::string> NodeIdOfCertificate(std::string_view pem) {
  auto certs = internal::ParseCertificates(pem, "the peer certificate");
  if (!certs.ok()) return certs.status();
  X509* cert = (*certs)[0].get();
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  std::string found;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names.get(), i);
    if (g->type != GEN_URI) continue;
    const ASN1_STRING* s = g->d.uniformResourceIdentifier;
    std::string_view uri(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                         static_cast<size_t>(ASN1_STRING_length(s)));
    if (!uri.starts_with(kNodeUriPrefix)) continue;
    std::string id(uri.substr(kNodeUriPrefix.size()));
    if (std::string p = NodeIdProblem(id); !p.empty()) {
      return Status::InvalidArgument("the certificate's " + std::string(kNodeUriPrefix) +
                                     " name is not a node id: " + p);
    }
    if (!found.empty() && found != id) {
      return Status::InvalidArgument("the certificate names two nodes: " + found + " and " + id);
    }
    found = id;
  }
  if (found.empty()) {
    return Status::NotFound("the certificate names no node (no " + std::string(kNodeUriPrefix) +
                            " URI)");
  }
  return found;
}

}  // namespace apollo::tls
