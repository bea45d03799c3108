// Runs the StateStore conformance suite against the SQLite backend.
#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

class SqliteBackend final : public StoreBackend {
 public:
  std::string Name() const override { return "sqlite"; }
  Result<std::string> NewStoreUrl(const std::string& temp_dir) override {
    return "sqlite://" + temp_dir + "/apollo.db";
  }
};

SqliteBackend sqlite_backend;  // stateless; the suite only reads it

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest, ::testing::Values(&sqlite_backend),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace
}  // namespace apollo::store::testing
