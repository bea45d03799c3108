#pragma once

// Internal to src/tls: owning pointers for OpenSSL objects, PEM parsing and
// OpenSSL's error queue as one line. Not a public interface.
//
// Thread-safety: free functions; OpenSSL 3 is thread-safe for these calls.
// Each call clears this thread's OpenSSL error queue before it starts.

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace apollo::tls::internal {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using PKeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;

// The oldest error on this thread's OpenSSL error queue, as text (empty if
// none); the queue is cleared.
std::string OpenSslError();

// Every certificate in `pem`, in order. InvalidArgument if there is none or
// one does not parse; `what` names the source in the message ("/etc/x.pem").
Result<std::vector<X509Ptr>> ParseCertificates(std::string_view pem, std::string_view what);
// The private key in `pem` (unencrypted; PKCS#8, SEC1 or PKCS#1).
Result<PKeyPtr> ParsePrivateKey(std::string_view pem, std::string_view what);

// PEM text of a certificate / an unencrypted PKCS#8 private key.
Result<std::string> CertificatePem(X509* cert);
Result<std::string> PrivateKeyPem(EVP_PKEY* key);

// OK when `cert` chains to one of `roots` (through `intermediates`) and is
// valid at `now_unix_s`; otherwise InvalidArgument with OpenSSL's reason
// ("certificate has expired", "unable to get local issuer certificate").
Status VerifyChain(X509* cert, const std::vector<X509Ptr>& intermediates,
                   const std::vector<X509Ptr>& roots, int64_t now_unix_s);

// A certificate's notAfter in ISO 8601 ("2031-05-01 12:00:00Z").
std::string NotAfterText(const X509* cert);

}  // namespace apollo::tls::internal
