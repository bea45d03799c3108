#include "tls/openssl_util.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>

namespace apollo::tls::internal {
namespace {

using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
// sk_X509_free is a macro: no function to name in Deleter.
struct StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }
};
using StackPtr = std::unique_ptr<STACK_OF(X509), StackFree>;

BioPtr ReadBio(std::string_view pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The whole contents of a memory BIO.
std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  // "error:0480006C:PEM routines::no start line" -> keep the reason only.
  std::string s = buf;
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(colon + 1);
}

Result<std::vector<X509Ptr>> ParseCertificates(std::string_view pem, std::string_view what) {
  ERR_clear_error();
  if (pem.size() > (1u << 20)) {
    return Status::InvalidArgument(std::string(what) + ": larger than 1 MiB, not a certificate");
  }
  BioPtr bio = ReadBio(pem);
  std::vector<X509Ptr> out;
  for (;;) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    out.push_back(std::move(cert));
  }
  // Reading stops with "no start line" at the end of the text: expected
  // once at least one certificate was read.
  std::string err = OpenSslError();
  if (out.empty()) {
    return Status::InvalidArgument(std::string(what) + ": not a PEM certificate" +
                                   (err.empty() ? "" : " (" + err + ")"));
  }
  return out;
}

Result<PKeyPtr> ParsePrivateKey(std::string_view pem, std::string_view what) {
  ERR_clear_error();
  if (pem.size() > (1u << 20)) {
    return Status::InvalidArgument(std::string(what) + ": larger than 1 MiB, not a key");
  }
  BioPtr bio = ReadBio(pem);
  // A null password callback with an empty password: an encrypted key fails
  // here instead of prompting on the terminal.
  PKeyPtr key(PEM_read_bio_PrivateKey(
      bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!key) {
    std::string err = OpenSslError();
    return Status::InvalidArgument(std::string(what) + ": not an unencrypted PEM private key" +
                                   (err.empty() ? "" : " (" + err + ")"));
  }
  return key;
}

Result<std::string> CertificatePem(X509* cert) {
  ERR_clear_error();
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return Status::Internal("cannot encode the certificate: " + OpenSslError());
  }
  return BioText(bio.get());
}

Result<std::string> PrivateKeyPem(EVP_PKEY* key) {
  ERR_clear_error();
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Status::Internal("cannot encode the private key: " + OpenSslError());
  }
  return BioText(bio.get());
}

Status VerifyChain(X509* cert, const std::vector<X509Ptr>& intermediates,
                   const std::vector<X509Ptr>& roots, int64_t now_unix_s) {
  ERR_clear_error();
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  StackPtr chain(sk_X509_new_null());
  if (!store || !ctx || !chain) return Status::Internal("out of memory");
  for (const X509Ptr& root : roots) {
    if (X509_STORE_add_cert(store.get(), root.get()) != 1) {
      return Status::Internal("cannot use a CA certificate: " + OpenSslError());
    }
  }
  for (const X509Ptr& c : intermediates) sk_X509_push(chain.get(), c.get());
  if (X509_STORE_CTX_init(ctx.get(), store.get(), cert, chain.get()) != 1) {
    return Status::Internal("cannot verify: " + OpenSslError());
  }
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()), static_cast<time_t>(now_unix_s));
  if (X509_verify_cert(ctx.get()) == 1) return Status::Ok();
  int err = X509_STORE_CTX_get_error(ctx.get());
  ERR_clear_error();
  return Status::InvalidArgument(X509_verify_cert_error_string(err));
}

std::string NotAfterText(const X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) return "?";
  // ISO 8601 form ("2031-05-01 12:00:00Z").
  if (ASN1_TIME_print_ex(bio.get(), X509_get0_notAfter(cert), ASN1_DTFLGS_ISO8601) != 1) {
    return "?";
  }
  return BioText(bio.get());
}

}  // namespace apollo::tls::internal
