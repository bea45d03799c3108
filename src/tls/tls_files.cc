#include "tls/tls_files.h"

#include <sys/stat.h>

#include <cstdio>

#include "core/config_values.h"
#include "tls/cert_identity.h"
#include "tls/openssl_util.h"

namespace apollo::tls {
namespace {

// Certificates and keys are small; a bigger file is a wrong path.
constexpr size_t kMaxPemBytes = 1 << 20;

Result<std::string> ReadPem(const std::string& setting, const std::string& path) {
  auto text = ReadConfigFile(path, kMaxPemBytes);
  if (!text.ok()) return Status(text.status().code(), setting + ": " + text.status().message());
  return text;
}

// A private key other users can read is worth a warning (not an error: the
// operator may have reasons, e.g. a group-readable key for a service user).
std::string KeyModeWarning(const std::string& setting, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return setting + " " + path + ": other users can read this private key (mode " + mode +
         "); chmod 600 it";
}

}  // namespace

Result<TlsMaterial> LoadTlsMaterial(const TlsPaths& paths, TimePoint now,
                                    const TlsSettingNames& names) {
  TlsMaterial m;
  auto cert_pem = ReadPem(names.cert, paths.cert);
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = ReadPem(names.key, paths.key);
  if (!key_pem.ok()) return key_pem.status();
  auto ca_pem = ReadPem(names.ca, paths.ca);
  if (!ca_pem.ok()) return ca_pem.status();

  auto chain = internal::ParseCertificates(*cert_pem, names.cert + " " + paths.cert);
  if (!chain.ok()) return chain.status();
  auto key = internal::ParsePrivateKey(*key_pem, names.key + " " + paths.key);
  if (!key.ok()) return key.status();
  auto roots = internal::ParseCertificates(*ca_pem, names.ca + " " + paths.ca);
  if (!roots.ok()) return roots.status();

  X509* leaf = (*chain)[0].get();
  if (X509_check_private_key(leaf, key->get()) != 1) {
    internal::OpenSslError();  // clear the queue
    return Status::InvalidArgument(names.key + " " + paths.key + " is not the private key of " +
                                   names.cert + " " + paths.cert);
  }
  std::vector<internal::X509Ptr> intermediates;
  for (size_t i = 1; i < chain->size(); ++i) intermediates.push_back(std::move((*chain)[i]));
  Status verified = internal::VerifyChain(leaf, intermediates, *roots, ToUnixSeconds(now));
  if (!verified.ok()) {
    return Status::FailedPrecondition(names.cert + " " + paths.cert + " is not vouched for by " +
                                      names.ca + " " + paths.ca + ": " + verified.message());
  }
  auto node = NodeIdOfCertificate(*cert_pem);
  if (node.ok()) {
    m.node_id = *node;
  } else if (node.status().code() != StatusCode::kNotFound) {
    return Status::InvalidArgument(names.cert + " " + paths.cert + ": " + node.status().message());
  }
  m.not_after = internal::NotAfterText(leaf);
  if (std::string w = KeyModeWarning(names.key, paths.key); !w.empty()) m.warnings.push_back(w);
  m.cert_pem = std::move(*cert_pem);
  m.key_pem = std::move(*key_pem);
  m.ca_pem = std::move(*ca_pem);
  return m;
}

}  // namespace apollo::tls
