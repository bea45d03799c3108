#include "tls/cert_authority.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "core/config_values.h"
#include "tls/cert_identity.h"
#include "tls/openssl_util.h"

namespace apollo::tls {
namespace {

using internal::OpenSslError;
using internal::PKeyPtr;
using internal::X509Ptr;
using BnPtr = std::unique_ptr<BIGNUM, internal::Deleter<BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, internal::Deleter<X509_EXTENSION_free>>;

// The validity window opens this long before `now`: a peer whose clock is a
// little behind still accepts a certificate made a moment ago.
constexpr long kBackdateSeconds = 5 * 60;

struct Signer {
  X509* cert;     // the issuer (the certificate itself for the CA)
  EVP_PKEY* key;  // the issuer's key
};

Status CheckDays(int days) {
  if (days < 1 || days > kMaxDays) {
    return Status::InvalidArgument("--days must be 1.." + std::to_string(kMaxDays) + ", got " +
                                   std::to_string(days));
  }
  return Status::Ok();
}

Result<PKeyPtr> NewKey() {
  PKeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Status::Internal("cannot generate an ECDSA P-256 key: " + OpenSslError());
  return key;
}

// A certificate with a random 127-bit serial, `cn` as subject, valid from
// now - kBackdateSeconds for `days`, for `key`; issuer and extensions are
// set by the caller.
Result<X509Ptr> NewCertificate(const std::string& cn, EVP_PKEY* key, int days, TimePoint now) {
  X509Ptr x(X509_new());
  BnPtr serial(BN_new());
  if (!x || !serial) return Status::Internal("out of memory");
  time_t t = static_cast<time_t>(ToUnixSeconds(now));
  X509_NAME* name = X509_get_subject_name(x.get());
  auto text = [](const std::string& s) {
    return reinterpret_cast<const unsigned char*>(s.c_str());
  };
  bool ok =
      X509_set_version(x.get(), X509_VERSION_3) == 1 &&
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(x.get())) != nullptr &&
      X509_time_adj_ex(X509_getm_notBefore(x.get()), 0, -kBackdateSeconds, &t) != nullptr &&
      X509_time_adj_ex(X509_getm_notAfter(x.get()), days, 0, &t) != nullptr &&
      X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, text("Apollo-11"), -1, -1, 0) == 1 &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, text(cn), -1, -1, 0) == 1 &&
      X509_set_pubkey(x.get(), key) == 1;
  if (!ok) return Status::Internal("cannot build the certificate: " + OpenSslError());
  return x;
}

// Adds the extensions (nid, OpenSSL config value) to `x` issued by `issuer`.
Status AddExtensions(X509* x, X509* issuer,
                     const std::vector<std::pair<int, std::string>>& extensions) {
  for (const auto& [nid, value] : extensions) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, x, nullptr, nullptr, 0);
    X509V3_set_ctx_nodb(&ctx);
    ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
    if (!ext || X509_add_ext(x, ext.get(), -1) != 1) {
      return Status::Internal(std::string("cannot add the ") + OBJ_nid2sn(nid) + " extension '" +
                              value + "': " + OpenSslError());
    }
  }
  return Status::Ok();
}

Status Sign(X509* x, const Signer& signer) {
  if (X509_set_issuer_name(x, X509_get_subject_name(signer.cert)) != 1 ||
      X509_sign(x, signer.key, EVP_sha256()) <= 0) {
    return Status::Internal("cannot sign the certificate: " + OpenSslError());
  }
  return Status::Ok();
}

Result<CreatedPair> Write(const PemPairPaths& paths, X509* cert, EVP_PKEY* key, bool force) {
  auto cert_pem = internal::CertificatePem(cert);
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = internal::PrivateKeyPem(key);
  if (!key_pem.ok()) return key_pem.status();
  APOLLO_RETURN_IF_ERROR(WritePemPair(paths, *cert_pem, *key_pem, force));
  CreatedPair out;
  out.paths = paths;
  out.not_after = internal::NotAfterText(cert);
  return out;
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::Ok();
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::PermissionDenied("cannot create " + dir + ": " + ec.message());
  // It will hold the CA's private key.
  ::chmod(dir.c_str(), 0700);
  return Status::Ok();
}

struct LoadedCa {
  X509Ptr cert;
  PKeyPtr key;
};

Result<LoadedCa> LoadCa(const std::string& dir) {
  PemPairPaths paths = PemPairFor(dir, std::string(kCaName));
  auto cert_pem = ReadConfigFile(paths.cert, 1 << 20);
  auto key_pem = cert_pem.ok() ? ReadConfigFile(paths.key, 1 << 20) : cert_pem;
  if (!key_pem.ok()) {
    if (key_pem.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("no CA in " + dir + " (" + key_pem.status().message() +
                              "); create one with: apollo-cli tls ca create --dir " + dir);
    }
    return key_pem.status();
  }
  auto certs = internal::ParseCertificates(*cert_pem, paths.cert);
  if (!certs.ok()) return certs.status();
  auto key = internal::ParsePrivateKey(*key_pem, paths.key);
  if (!key.ok()) return key.status();
  LoadedCa ca{std::move((*certs)[0]), std::move(*key)};
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    OpenSslError();
    return Status::FailedPrecondition(paths.key + " is not the private key of " + paths.cert);
  }
  return ca;
}

// The subjectAltName value for a server's hosts: "DNS:a,IP:1.2.3.4".
Result<std::string> ServerNames(const std::vector<std::string>& hosts) {
  std::string san;
  std::vector<std::string> seen;
  for (const std::string& h : hosts.empty() ? DefaultServerHosts() : hosts) {
    if (std::string p = HostProblem(h); !p.empty()) return Status::InvalidArgument(p);
    if (std::find(seen.begin(), seen.end(), h) != seen.end()) continue;
    seen.push_back(h);
    unsigned char addr[16];
    bool ip = inet_pton(AF_INET, h.c_str(), addr) == 1 || inet_pton(AF_INET6, h.c_str(), addr) == 1;
    san += (san.empty() ? "" : ",") + std::string(ip ? "IP:" : "DNS:") + h;
  }
  return san;
}

Status CheckRequest(const CertRequest& req) {
  APOLLO_RETURN_IF_ERROR(CheckDays(req.days));
  if (std::string p = NameProblem("the certificate name", req.name); !p.empty()) {
    return Status::InvalidArgument(p);
  }
  if (req.name == kCaName) {
    return Status::InvalidArgument("the name 'ca' is the CA's own (ca.pem); choose another");
  }
  if (req.kind == CertKind::kNode) {
    if (std::string p = NodeIdProblem(req.node_id); !p.empty()) {
      return Status::InvalidArgument("--node: " + p);
    }
  }
  return Status::Ok();
}

std::vector<std::pair<int, std::string>> LeafExtensions(const CertRequest& req,
                                                        const std::string& server_names) {
  std::vector<std::pair<int, std::string>> ext = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature"},
      {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid:always"},
      {NID_ext_key_usage, req.kind == CertKind::kServer ? "serverAuth" : "clientAuth"}};
  if (req.kind == CertKind::kServer) ext.push_back({NID_subject_alt_name, server_names});
  if (req.kind == CertKind::kNode) {
    ext.push_back({NID_subject_alt_name, "URI:" + std::string(kNodeUriPrefix) + req.node_id});
  }
  return ext;
}

}  // namespace

std::string HostProblem(std::string_view host) {
  const std::string h(host);
  unsigned char addr[16];
  if (inet_pton(AF_INET, h.c_str(), addr) == 1 || inet_pton(AF_INET6, h.c_str(), addr) == 1) {
    return "";
  }
  std::string_view name = host.starts_with("*.") ? host.substr(2) : host;
  bool ok = !name.empty() && name.size() <= 253 && name.front() != '.' && name.back() != '.' &&
            name.front() != '-';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.');
  }
  if (ok) return "";
  return "--host '" + h + "' is neither an IP address nor a DNS name";
}

Result<CreatedPair> CreateCa(const std::string& dir, int days, bool force, TimePoint now) {
  APOLLO_RETURN_IF_ERROR(CheckDays(days));
  APOLLO_RETURN_IF_ERROR(MakeDir(dir));
  auto key = NewKey();
  if (!key.ok()) return key.status();
  auto cert = NewCertificate("Apollo-11 CA", key->get(), days, now);
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  // The subject key id first: the authority key id of a self-signed
  // certificate is read from the certificate itself.
  APOLLO_RETURN_IF_ERROR(AddExtensions(x, x,
                                       {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                        {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                        {NID_subject_key_identifier, "hash"}}));
  APOLLO_RETURN_IF_ERROR(AddExtensions(x, x, {{NID_authority_key_identifier, "keyid:always"}}));
  APOLLO_RETURN_IF_ERROR(Sign(x, Signer{x, key->get()}));
  return Write(PemPairFor(dir, std::string(kCaName)), x, key->get(), force);
}

Result<CreatedPair> CreateCert(const std::string& dir, const CertRequest& req, bool force,
                               TimePoint now) {
  APOLLO_RETURN_IF_ERROR(CheckRequest(req));
  std::string server_names;
  if (req.kind == CertKind::kServer) {
    auto names = ServerNames(req.hosts);
    if (!names.ok()) return names.status();
    server_names = *names;
  }
  auto ca = LoadCa(dir);
  if (!ca.ok()) return ca.status();
  auto key = NewKey();
  if (!key.ok()) return key.status();
  const std::string cn = req.kind == CertKind::kNode ? req.node_id : req.name;
  auto cert = NewCertificate(cn, key->get(), req.days, now);
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  bool clamped = false;
  if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(ca->cert.get())) > 0) {
    X509_set1_notAfter(x, X509_get0_notAfter(ca->cert.get()));
    clamped = true;
  }
  APOLLO_RETURN_IF_ERROR(AddExtensions(x, ca->cert.get(), LeafExtensions(req, server_names)));
  APOLLO_RETURN_IF_ERROR(Sign(x, Signer{ca->cert.get(), ca->key.get()}));
  // What is written must verify: an expired CA is caught here, not at the
  // first handshake.
  std::vector<X509Ptr> roots;
  roots.push_back(std::move(ca->cert));
  if (Status v = internal::VerifyChain(x, {}, roots, ToUnixSeconds(now)); !v.ok()) {
    return Status::FailedPrecondition("the CA in " + dir + " cannot vouch for a certificate now (" +
                                      v.message() + ", CA valid until " +
                                      internal::NotAfterText(roots[0].get()) + ")");
  }
  auto written = Write(PemPairFor(dir, req.name), x, key->get(), force);
  if (written.ok()) written->clamped_to_ca = clamped;
  return written;
}

}  // namespace apollo::tls
