#include "store/open_store.h"

#include <string>

#include "store/engine/engine_store.h"
#include "store/postgres/pg_driver.h"
#include "store/sqlite/sqlite_driver.h"

namespace apollo::store {
namespace {

constexpr std::string_view kSqlitePrefix = "sqlite://";
constexpr std::string_view kPostgresPrefix = "postgresql://";
constexpr std::string_view kPostgresShortPrefix = "postgres://";

// "sqlite:///abs" -> "/abs"; "sqlite://./rel" -> "./rel".
Result<std::string> SqlitePath(std::string_view url) {
  std::string_view rest = url.substr(kSqlitePrefix.size());
  if (rest.empty()) return Status::InvalidArgument("sqlite URL has no path: " + std::string(url));
  if (rest.front() != '/' && !rest.starts_with("./") && !rest.starts_with("../")) {
    return Status::InvalidArgument(
        "sqlite URL must be sqlite:///abs/path or sqlite://./rel/path: " + std::string(url));
  }
  return std::string(rest);
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenStateStore(std::string_view url,
                                                   const StoreOptions& options,
                                                   const Clock& clock) {
  if (url.starts_with(kSqlitePrefix)) {
    Result<std::string> path = SqlitePath(url);
    if (!path.ok()) return path.status();
    Result<std::unique_ptr<sql::Driver>> driver = sqlite::OpenSqliteDriver(*path, options);
    if (!driver.ok()) return driver.status();
    return engine::OpenEngineStore(std::move(*driver), options, clock);
  }
  if (url.starts_with(kPostgresPrefix) || url.starts_with(kPostgresShortPrefix)) {
    return engine::OpenEngineStore(postgres::NewPostgresDriver(std::string(url)), options, clock);
  }
  return Status::InvalidArgument("unknown store URL scheme (want sqlite:// or postgresql://): " +
                                 std::string(url));
}

}  // namespace apollo::store
