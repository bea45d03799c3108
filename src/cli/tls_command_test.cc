// `apollo-cli tls ...` (offline) and the global --tls-* options, through
// the real command line (RunCli) in-process; the TLS calls go to a
// FakeOrchestrator served with mutual TLS on 127.0.0.1:0, with certificates
// the commands under test made.
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/app.h"
#include "cli/testing/fake_orchestrator.h"
#include "core/clock.h"
#include "tls/cert_identity.h"
#include "tls/tls_files.h"

namespace apollo::cli {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun Cli(std::vector<std::string> args, const CliEnv& env = {}) {
  args.insert(args.begin(), "apollo-cli");
  std::ostringstream out, err;
  CliRun r;
  r.code = RunCli(args, env, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Exactly one line on stderr, starting "apollo-cli: ".
void ExpectOneErrorLine(const CliRun& r) {
  EXPECT_EQ(r.err.rfind("apollo-cli: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

class TlsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-cli-tls-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    fs::remove_all(dir_);
  }
  std::string P(const std::string& leaf) const { return dir_ + "/" + leaf; }

  // The fake orchestrator behind mutual TLS with DIR/server.pem.
  void ServeTls() {
    auto m = tls::LoadTlsMaterial({P("server.pem"), P("server-key.pem"), P("ca.pem")},
                                  RealClock().Now());
    ASSERT_TRUE(m.ok()) << m.status().message();
    grpc::SslServerCredentialsOptions o(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    o.pem_root_certs = m->ca_pem;
    o.pem_key_cert_pairs.push_back({m->key_pem, m->cert_pem});
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(o), &port_);
    b.RegisterService(&fake_);
    server_ = b.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr);
    addr_ = "127.0.0.1:" + std::to_string(port_);
    v1::Node n;
    n.set_node_id("worker-1");
    n.set_connected(true);
    std::lock_guard lock(fake_.mu);
    *fake_.nodes.add_nodes() = n;
  }

  std::string dir_;
  test_support::FakeOrchestrator fake_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string addr_;
};

TEST_F(TlsCommandTest, CaCreateThenRefusesToOverwrite) {
  CliRun r = Cli({"tls", "ca", "create", "--dir", dir_ + "/pki"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("created " + dir_ + "/pki/ca.pem and " + dir_ +
                            "/pki/ca-key.pem (private key, mode 0600): certificate authority, "
                            "valid until ",
                        0),
            0u)
      << r.out;
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/pki/ca-key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string before = ReadAll(dir_ + "/pki/ca.pem");

  CliRun again = Cli({"tls", "ca", "create", "--dir", dir_ + "/pki"});
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(again.err, "apollo-cli: " + dir_ +
                           "/pki/ca.pem already exists; pass --force to "
                           "replace it\n");
  EXPECT_EQ(ReadAll(dir_ + "/pki/ca.pem"), before);

  CliRun forced = Cli({"tls", "ca", "create", "--dir", dir_ + "/pki", "--force", "--days", "30"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(ReadAll(dir_ + "/pki/ca.pem"), before);
}

TEST_F(TlsCommandTest, CertCreateForEachKind) {
  ASSERT_EQ(Cli({"tls", "ca", "create", "--dir", dir_}).code, 0);
  CliRun node = Cli({"tls", "cert", "create", "--dir", dir_, "--node", "worker-1"});
  ASSERT_EQ(node.code, 0) << node.err;
  EXPECT_NE(node.out.find("node certificate for worker-1"), std::string::npos) << node.out;
  auto id = tls::NodeIdOfCertificate(ReadAll(P("worker-1.pem")));
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, "worker-1");

  CliRun server = Cli({"tls", "cert", "create", "--dir", dir_, "--server", "--host", "orch.example",
                       "--host", "10.0.0.5", "-o", "json"});
  ASSERT_EQ(server.code, 0) << server.err;
  auto j = nlohmann::json::parse(server.out);
  EXPECT_EQ(j["cert"], P("server.pem"));
  EXPECT_EQ(j["key"], P("server-key.pem"));
  EXPECT_EQ(j["what"], "server certificate for orch.example, 10.0.0.5");

  CliRun op =
      Cli({"tls", "cert", "create", "--dir", dir_, "--client", "--name", "alice", "--days", "7"});
  ASSERT_EQ(op.code, 0) << op.err;
  EXPECT_TRUE(fs::exists(P("alice.pem")));
  EXPECT_EQ(tls::NodeIdOfCertificate(ReadAll(P("alice.pem"))).status().code(),
            StatusCode::kNotFound);
}

TEST_F(TlsCommandTest, BadFlagsAreOneLineAndMakeNothing) {
  CliRun no_ca = Cli({"tls", "cert", "create", "--dir", dir_, "--node", "worker-1"});
  EXPECT_EQ(no_ca.code, 1);
  ExpectOneErrorLine(no_ca);
  EXPECT_NE(no_ca.err.find("apollo-cli tls ca create --dir " + dir_), std::string::npos);

  ASSERT_EQ(Cli({"tls", "ca", "create", "--dir", dir_}).code, 0);
  const std::vector<std::vector<std::string>> bad = {
      {"tls", "cert", "create", "--dir", dir_},
      {"tls", "cert", "create", "--dir", dir_, "--server", "--client", "--name", "x"},
      {"tls", "cert", "create", "--dir", dir_, "--client"},
      {"tls", "cert", "create", "--dir", dir_, "--node", "w", "--host", "h"},
      {"tls", "cert", "create", "--dir", dir_, "--node", "w", "--days", "0"},
      {"tls", "cert", "create", "--node", "w"},
      {"tls", "ca", "create"},
  };
  for (const auto& args : bad) {
    CliRun r = Cli(args);
    EXPECT_EQ(r.code, 2) << args.back() << ": " << r.err;
    ExpectOneErrorLine(r);
  }
  CliRun bad_node = Cli({"tls", "cert", "create", "--dir", dir_, "--node", "a b"});
  EXPECT_EQ(bad_node.code, 1);
  EXPECT_EQ(bad_node.err,
            "apollo-cli: the certificate name 'a b' may hold only letters, digits, '.', '_' and "
            "'-'\n");
  // Only the CA's files exist.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 2);
}

TEST_F(TlsCommandTest, CallsGoOverMutualTlsWithTheOperatorsCertificate) {
  ASSERT_EQ(Cli({"tls", "ca", "create", "--dir", dir_}).code, 0);
  ASSERT_EQ(Cli({"tls", "cert", "create", "--dir", dir_, "--server"}).code, 0);
  ASSERT_EQ(Cli({"tls", "cert", "create", "--dir", dir_, "--client", "--name", "op"}).code, 0);
  ServeTls();

  CliRun flags = Cli({"--server", addr_, "--tls-ca", P("ca.pem"), "--tls-cert", P("op.pem"),
                      "--tls-key", P("op-key.pem"), "node", "list"});
  EXPECT_EQ(flags.code, 0) << flags.err;
  EXPECT_NE(flags.out.find("worker-1"), std::string::npos) << flags.out;

  CliEnv env;
  env.apollo_server = addr_;
  env.apollo_tls_ca = P("ca.pem");
  env.apollo_tls_cert = P("op.pem");
  env.apollo_tls_key = P("op-key.pem");
  CliRun from_env = Cli({"node", "list"}, env);
  EXPECT_EQ(from_env.code, 0) << from_env.err;

  // Plaintext against the TLS port: refused, with a hint.
  CliRun plain = Cli({"--server", addr_, "node", "list"});
  EXPECT_EQ(plain.code, 1);
  ExpectOneErrorLine(plain);
  EXPECT_NE(plain.err.find("pass --tls-ca, --tls-cert and --tls-key"), std::string::npos)
      << plain.err;

  // Half the TLS options: a usage error naming what is missing.
  CliRun half = Cli({"--server", addr_, "--tls-ca", P("ca.pem"), "node", "list"});
  EXPECT_EQ(half.code, 2);
  ExpectOneErrorLine(half);
  EXPECT_NE(half.err.find("missing: --tls-cert, --tls-key"), std::string::npos) << half.err;

  // Someone else's CA: the files are refused before any call.
  ASSERT_EQ(Cli({"tls", "ca", "create", "--dir", dir_ + "/other"}).code, 0);
  ASSERT_EQ(
      Cli({"tls", "cert", "create", "--dir", dir_ + "/other", "--client", "--name", "op"}).code, 0);
  CliRun foreign =
      Cli({"--server", addr_, "--tls-ca", P("ca.pem"), "--tls-cert", dir_ + "/other/op.pem",
           "--tls-key", dir_ + "/other/op-key.pem", "node", "list"});
  EXPECT_EQ(foreign.code, 1);
  ExpectOneErrorLine(foreign);
  EXPECT_NE(foreign.err.find("is not vouched for by --tls-ca"), std::string::npos) << foreign.err;
}

}  // namespace
}  // namespace apollo::cli
