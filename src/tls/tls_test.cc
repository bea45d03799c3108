// The fleet CA (cert_authority), a node's identity in its certificate
// (cert_identity) and the checks of a daemon's TLS files (tls_files), on
// real files in a temp dir. Certificates are checked with OpenSSL directly
// (X509_verify_cert, X509_check_host, ...), not with the code under test.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tls/cert_authority.h"
#include "tls/cert_identity.h"
#include "tls/tls_files.h"

namespace apollo::tls {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

unsigned Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using Cert = std::unique_ptr<X509, X509Free>;

Cert LoadCert(const std::string& path) {
  std::string pem = ReadAll(path);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Cert c(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return c;
}

// OpenSSL's own verdict on `leaf` against `ca` at the current time.
int VerifyWithOpenSsl(X509* leaf, X509* ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  int ok = X509_verify_cert(ctx);
  int err = X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok == 1 ? 0 : err;
}

// The URI subject alternative names of `x`.
std::vector<std::string> UriSans(X509* x) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
    if (g->type != GEN_URI) continue;
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.ia5)),
                     ASN1_STRING_length(g->d.ia5));
  }
  GENERAL_NAMES_free(names);
  return out;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-tls-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TimePoint Now() const { return clock_.Now(); }
  std::string Path(const std::string& leaf) const { return dir_ + "/" + leaf; }
  void MakeCa(const std::string& dir) {
    auto ca = CreateCa(dir, kDefaultCaDays, false, Now());
    ASSERT_TRUE(ca.ok()) << ca.status().message();
  }
  CreatedPair MakeCert(const CertRequest& req) {
    auto c = CreateCert(dir_, req, false, Now());
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : CreatedPair{};
  }
  static CertRequest Node(const std::string& id) {
    CertRequest r;
    r.kind = CertKind::kNode;
    r.node_id = id;
    r.name = id;
    return r;
  }

  RealClock clock_;  // OpenSSL checks in the tests use the wall clock too
  std::string dir_;
};

TEST_F(TlsTest, CaCreateWritesCertAndPrivateKeyWithMode0600) {
  ::umask(0);  // the key must be 0600 whatever the umask
  auto ca = CreateCa(dir_ + "/new/ca-dir", kDefaultCaDays, false, Now());
  ::umask(022);
  ASSERT_TRUE(ca.ok()) << ca.status().message();
  EXPECT_EQ(ca->paths.cert, dir_ + "/new/ca-dir/ca.pem");
  EXPECT_EQ(ca->paths.key, dir_ + "/new/ca-dir/ca-key.pem");
  EXPECT_EQ(Mode(ca->paths.key), 0600u);
  EXPECT_EQ(Mode(ca->paths.cert), 0644u);
  EXPECT_EQ(Mode(dir_ + "/new/ca-dir"), 0700u);
  Cert cert = LoadCert(ca->paths.cert);
  ASSERT_TRUE(cert);
  EXPECT_EQ(X509_check_ca(cert.get()), 1);
  EXPECT_EQ(VerifyWithOpenSsl(cert.get(), cert.get()), 0);  // self-signed
  EXPECT_NE(ReadAll(ca->paths.key).find("BEGIN PRIVATE KEY"), std::string::npos);
  // About five years.
  int days = 0, secs = 0;
  ASSERT_EQ(
      ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(cert.get()), X509_get0_notAfter(cert.get())),
      1);
  EXPECT_NEAR(days, kDefaultCaDays, 1);
}

TEST_F(TlsTest, NodeCertCarriesItsNodeIdAsUriSanAndVerifiesAgainstTheCa) {
  MakeCa(dir_);
  CreatedPair node = MakeCert(Node("worker-1"));
  EXPECT_EQ(node.paths.cert, Path("worker-1.pem"));
  EXPECT_EQ(node.paths.key, Path("worker-1-key.pem"));
  EXPECT_EQ(Mode(node.paths.key), 0600u);
  Cert leaf = LoadCert(node.paths.cert);
  Cert ca = LoadCert(Path("ca.pem"));
  ASSERT_TRUE(leaf && ca);
  EXPECT_EQ(VerifyWithOpenSsl(leaf.get(), ca.get()), 0);
  EXPECT_EQ(UriSans(leaf.get()), std::vector<std::string>{"apollo-node://worker-1"});
  // An agent presents it as a TLS client, never as a server.
  EXPECT_EQ(X509_check_purpose(leaf.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_NE(X509_check_purpose(leaf.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  EXPECT_NE(X509_check_ca(leaf.get()), 1);
  // The private key belongs to the certificate.
  std::string key_pem = ReadAll(node.paths.key);
  BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(X509_check_private_key(leaf.get(), key), 1);
  EVP_PKEY_free(key);

  auto id = NodeIdOfCertificate(ReadAll(node.paths.cert));
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, "worker-1");
}

TEST_F(TlsTest, AnotherCasCertificateDoesNotVerify) {
  MakeCa(dir_);
  MakeCa(dir_ + "/other");
  auto foreign = CreateCert(dir_ + "/other", Node("worker-1"), false, Now());
  ASSERT_TRUE(foreign.ok()) << foreign.status().message();
  Cert leaf = LoadCert(foreign->paths.cert);
  Cert ca = LoadCert(Path("ca.pem"));
  EXPECT_NE(VerifyWithOpenSsl(leaf.get(), ca.get()), 0);
  auto m = LoadTlsMaterial({foreign->paths.cert, foreign->paths.key, Path("ca.pem")}, Now());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("is not vouched for by --tls-ca " + Path("ca.pem")),
            std::string::npos)
      << m.status().message();
}

TEST_F(TlsTest, ServerCertNamesItsHostsAndServesTls) {
  MakeCa(dir_);
  CertRequest req;
  req.kind = CertKind::kServer;
  req.name = "server";
  CreatedPair def = MakeCert(req);
  Cert leaf = LoadCert(def.paths.cert);
  ASSERT_TRUE(leaf);
  EXPECT_EQ(X509_check_host(leaf.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.0.1", 0), 1);
  EXPECT_NE(X509_check_host(leaf.get(), "example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_purpose(leaf.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  EXPECT_TRUE(UriSans(leaf.get()).empty());
  EXPECT_EQ(NodeIdOfCertificate(ReadAll(def.paths.cert)).status().code(), StatusCode::kNotFound);

  req.name = "center";
  req.hosts = {"orch.example.com", "10.1.2.3", "::1"};
  Cert named = LoadCert(MakeCert(req).paths.cert);
  ASSERT_TRUE(named);
  EXPECT_EQ(X509_check_host(named.get(), "orch.example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(named.get(), "10.1.2.3", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(named.get(), "::1", 0), 1);
  EXPECT_NE(X509_check_host(named.get(), "localhost", 0, 0, nullptr), 1);
}

TEST_F(TlsTest, ClientCertHasNoNodeId) {
  MakeCa(dir_);
  CertRequest req;
  req.kind = CertKind::kClient;
  req.name = "alice";
  CreatedPair client = MakeCert(req);
  Cert leaf = LoadCert(client.paths.cert);
  EXPECT_EQ(X509_check_purpose(leaf.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  auto id = NodeIdOfCertificate(ReadAll(client.paths.cert));
  EXPECT_EQ(id.status().code(), StatusCode::kNotFound);
  auto m = LoadTlsMaterial({client.paths.cert, client.paths.key, Path("ca.pem")}, Now());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->node_id, "");
  EXPECT_TRUE(m->warnings.empty());
}

TEST_F(TlsTest, ExistingFilesAreKeptUnlessForce) {
  MakeCa(dir_);
  const std::string cert_before = ReadAll(Path("ca.pem"));
  const std::string key_before = ReadAll(Path("ca-key.pem"));
  auto again = CreateCa(dir_, kDefaultCaDays, false, Now());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            Path("ca.pem") + " already exists; pass --force to replace it");
  EXPECT_EQ(ReadAll(Path("ca.pem")), cert_before);
  EXPECT_EQ(ReadAll(Path("ca-key.pem")), key_before);

  // Only the key exists: still refused, and no certificate is left behind.
  MakeCert(Node("worker-1"));
  fs::remove(Path("worker-1.pem"));
  auto half = CreateCert(dir_, Node("worker-1"), false, Now());
  EXPECT_EQ(half.status().code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(fs::exists(Path("worker-1.pem")));

  auto forced = CreateCa(dir_, kDefaultCaDays, true, Now());
  ASSERT_TRUE(forced.ok()) << forced.status().message();
  EXPECT_NE(ReadAll(Path("ca.pem")), cert_before);
  EXPECT_NE(ReadAll(Path("ca-key.pem")), key_before);
  EXPECT_EQ(Mode(Path("ca-key.pem")), 0600u);
  // No temporary files left over.
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST_F(TlsTest, BadRequestsAreRefusedWithTheReason) {
  auto no_ca = CreateCert(dir_, Node("worker-1"), false, Now());
  EXPECT_EQ(no_ca.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_ca.status().message().find("apollo-cli tls ca create --dir " + dir_),
            std::string::npos)
      << no_ca.status().message();
  MakeCa(dir_);
  CertRequest bad = Node("a/b");
  bad.name = "ok";
  EXPECT_EQ(CreateCert(dir_, bad, false, Now()).status().message(),
            "--node: the node id 'a/b' may hold only letters, digits, '.', '_' and '-'");
  CertRequest ca_name = Node("ca");
  EXPECT_EQ(CreateCert(dir_, ca_name, false, Now()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(Path("ca-key.pem.tmp")));
  CertRequest days = Node("w");
  days.days = 0;
  EXPECT_EQ(CreateCert(dir_, days, false, Now()).status().message(),
            "--days must be 1..36500, got 0");
  CertRequest host;
  host.kind = CertKind::kServer;
  host.name = "server";
  host.hosts = {"good.example", "bad host,DNS:evil"};
  EXPECT_EQ(CreateCert(dir_, host, false, Now()).status().message(),
            "--host 'bad host,DNS:evil' is neither an IP address nor a DNS name");
  EXPECT_FALSE(fs::exists(Path("server.pem")));
  EXPECT_EQ(CreateCa(dir_ + "/x", 0, false, Now()).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(TlsTest, CertificateEndsWithItsCa) {
  auto ca = CreateCa(dir_, 10, false, Now());
  ASSERT_TRUE(ca.ok());
  CertRequest req = Node("worker-1");
  req.days = 365;
  CreatedPair c = MakeCert(req);
  EXPECT_TRUE(c.clamped_to_ca);
  EXPECT_EQ(c.not_after, ca->not_after);
  // A CA that has expired cannot vouch for anything.
  auto later = CreateCert(dir_, Node("worker-2"), false, Now() + 24h * 11);
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(later.status().message().find("certificate has expired"), std::string::npos)
      << later.status().message();
  EXPECT_FALSE(fs::exists(Path("worker-2.pem")));
}

TEST_F(TlsTest, LoadTlsMaterialChecksEveryFile) {
  MakeCa(dir_);
  CreatedPair w1 = MakeCert(Node("worker-1"));
  CreatedPair w2 = MakeCert(Node("worker-2"));
  TlsPaths good{w1.paths.cert, w1.paths.key, Path("ca.pem")};
  auto m = LoadTlsMaterial(good, Now());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->node_id, "worker-1");
  EXPECT_EQ(m->cert_pem, ReadAll(w1.paths.cert));
  EXPECT_EQ(m->ca_pem, ReadAll(Path("ca.pem")));
  EXPECT_EQ(m->not_after, w1.not_after);

  TlsPaths wrong_key = good;
  wrong_key.key = w2.paths.key;
  EXPECT_EQ(LoadTlsMaterial(wrong_key, Now()).status().message(),
            "--tls-key " + w2.paths.key + " is not the private key of --tls-cert " + w1.paths.cert);

  TlsPaths missing = good;
  missing.ca = Path("nope.pem");
  TlsSettingNames names{"tls.cert", "tls.key", "tls.ca"};
  auto nf = LoadTlsMaterial(missing, Now(), names);
  EXPECT_EQ(nf.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nf.status().message(),
            "tls.ca: cannot read " + Path("nope.pem") + ": No such file or directory");

  WriteAll(Path("garbage.pem"), "hello\n");
  TlsPaths garbage = good;
  garbage.cert = Path("garbage.pem");
  auto g = LoadTlsMaterial(garbage, Now());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message().rfind(
                "--tls-cert " + Path("garbage.pem") + ": not a PEM certificate", 0),
            0u)
      << g.status().message();
  EXPECT_EQ(NodeIdOfCertificate("hello").status().code(), StatusCode::kInvalidArgument);

  // Expired by the time it is used.
  auto expired = LoadTlsMaterial(good, Now() + 24h * 400);
  EXPECT_EQ(expired.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(expired.status().message().find("certificate has expired"), std::string::npos);

  ::chmod(w1.paths.key.c_str(), 0644);
  auto loose = LoadTlsMaterial(good, Now());
  ASSERT_TRUE(loose.ok());
  ASSERT_EQ(loose->warnings.size(), 1u);
  EXPECT_NE(loose->warnings[0].find("mode 0644"), std::string::npos) << loose->warnings[0];
}

TEST(HostProblemTest, AcceptsAddressesAndDnsNames) {
  for (const char* ok : {"localhost", "127.0.0.1", "::1", "orch-1.example.com", "*.example.com",
                         "10.0.0.5", "fe80::1"}) {
    EXPECT_EQ(HostProblem(ok), "") << ok;
  }
  for (const char* bad : {"", "a b", "a,DNS:b", "-x", "x.", "*.", "a/b", "1.2.3.4:80"}) {
    EXPECT_NE(HostProblem(bad), "") << bad;
  }
}

}  // namespace
}  // namespace apollo::tls
