// Runs the StateStore conformance suite against the SQLite backend.
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

class SqliteBackend final : public StoreBackend {
 public:
  std::string Name() const override { return "sqlite"; }
  Result<std::string> NewStoreUrl(const std::string& temp_dir) override {
    return "sqlite://" + temp_dir + "/apollo.db";
  }
  Status LoadV1Fixture(const std::string& url) override {
    std::ifstream in(std::string(APOLLO_SOURCE_DIR) + "/src/store/testdata/sqlite_v1.sql");
    std::stringstream dump;
    dump << in.rdbuf();
    if (dump.str().empty()) return Status::NotFound("no sqlite_v1.sql fixture");
    sqlite3* db = nullptr;
    int rc = sqlite3_open(url.substr(std::string("sqlite://").size()).c_str(), &db);
    char* err = nullptr;
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, dump.str().c_str(), nullptr, nullptr, &err);
    Status st =
        rc == SQLITE_OK
            ? Status::Ok()
            : Status::Internal(std::string("loading fixture: ") + (err ? err : sqlite3_errmsg(db)));
    sqlite3_free(err);
    sqlite3_close(db);
    return st;
  }
};

SqliteBackend sqlite_backend;  // stateless; the suite only reads it

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest, ::testing::Values(&sqlite_backend),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace
}  // namespace apollo::store::testing
