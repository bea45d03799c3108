// Runs the StateStore conformance suite against the PostgreSQL backend, on a
// real PostgreSQL 15 server this test binary starts (once, on first use) and
// stops at exit. A server that cannot start fails every test; never a skip.
#include <cstdlib>

#include "store/testing/pg_server.h"
#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

class PostgresBackend final : public StoreBackend {
 public:
  std::string Name() const override { return "postgres"; }
  // A fresh database per test; the temp dir is not needed.
  Result<std::string> NewStoreUrl(const std::string&) override {
    if (!server_) {
      Result<std::unique_ptr<PgServer>> s = PgServer::Start();
      if (!s.ok()) return s.status().WithPrefix("starting PostgreSQL for the conformance suite");
      server_ = std::move(*s);
    }
    return server_->NewDatabase();
  }
  Status LoadV1Fixture(const std::string& url) override {
    std::string cmd = "psql '" + url + "' -q -v ON_ERROR_STOP=1 -f " +
                      std::string(APOLLO_SOURCE_DIR) +
                      "/src/store/testdata/postgres_v1.sql > /dev/null";
    if (std::system(cmd.c_str()) != 0) return Status::Internal("loading fixture: " + cmd);
    return Status::Ok();
  }

 private:
  std::unique_ptr<PgServer> server_;  // stopped by the destructor at exit
};

PostgresBackend postgres_backend;

INSTANTIATE_TEST_SUITE_P(Postgres, StoreConformanceTest, ::testing::Values(&postgres_backend),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace
}  // namespace apollo::store::testing
