#include "store/postgres/pg_driver.h"

#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_text.h"

namespace apollo::store::postgres {
namespace {

// A writer's statements are keyed reads and writes over unnest()ed arrays
// of keys: index lookups are the right plan for every batch, one row or
// five hundred, and one plan fits them all. Left to choose, PostgreSQL
// planned several afresh on every execution (its generic plan, costed for
// an array of unknown length, looked dearer than a custom plan for a
// one-row array): ~0.3 ms of planning a task on the one-agent latency
// path. Forced to keep its generic plan, it costs that plan from the
// statistics of the moment, which on young tables says a sequential scan
// and a hash join; a plan kept from then would scan whole tables once they
// hold millions of rows. So the writer's session keeps its generic plans
// and prices scans and hash or merge joins out of them (a statement with no
// usable index still scans). The readers keep the defaults: their filters
// are where a plan for the actual values pays.
constexpr char kWriterSetup[] =
    "SELECT set_config('plan_cache_mode', 'force_generic_plan', false), "
    "set_config('enable_seqscan', 'off', false), set_config('enable_hashjoin', 'off', false), "
    "set_config('enable_mergejoin', 'off', false)";

class PostgresDriver final : public sql::Driver {
 public:
  explicit PostgresDriver(std::string conn_string) : conn_string_(std::move(conn_string)) {}

  // sql::Driver
  std::string_view dialect() const override { return "pg"; }
  Result<std::unique_ptr<sql::Conn>> Connect(sql::Role role) override {
    Result<std::unique_ptr<PgConn>> c =
        PgConn::Open(conn_string_, role == sql::Role::kWriter ? kWriterSetup : nullptr);
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
