#include "store/postgres/pg_driver.h"

#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_text.h"

namespace apollo::store::postgres {
namespace {

class PostgresDriver final : public sql::Driver {
 public:
  explicit PostgresDriver(std::string conn_string) : conn_string_(std::move(conn_string)) {}

  // sql::Driver
  std::string_view dialect() const override { return "pg"; }
  Result<std::unique_ptr<sql::Conn>> Connect(sql::Role) override {
    Result<std::unique_ptr<PgConn>> c = PgConn::Open(conn_string_);
    if (!c.ok()) return c.status();
    return std::unique_ptr<sql::Conn>(std::move(*c));
  }

 private:
  const std::string conn_string_;
};

}  // namespace

std::unique_ptr<sql::Driver> NewPostgresDriver(const std::string& url) {
  return std::make_unique<PostgresDriver>(ConnectionString(url));
}

}  // namespace apollo::store::postgres
