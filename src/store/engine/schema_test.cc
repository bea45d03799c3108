// The one schema definition and what is made from it.
#include "store/engine/schema.h"

#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

namespace apollo::store::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SchemaTest, SchemaSqlIsTheRenderingOfTheOneDefinition) {
  std::string file = ReadFile(std::string(APOLLO_SOURCE_DIR) + "/schema.sql");
  ASSERT_FALSE(file.empty()) << "cannot read schema.sql";
  EXPECT_EQ(file, SchemaFile())
      << "schema.sql is not what src/store/engine/schema.cc makes: run `make schema`";
}

TEST(SchemaTest, EachDialectGetsItsOwnWords) {
  std::string pg = RenderSchema("pg");
  std::string lite = RenderSchema("sqlite");
  EXPECT_THAT(pg, HasSubstr("node_ref       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"));
  EXPECT_THAT(lite, HasSubstr("node_ref       INTEGER PRIMARY KEY"));
  EXPECT_THAT(lite, HasSubstr("PRIMARY KEY (task_ref, node_ref)) WITHOUT ROWID;"));
  EXPECT_THAT(pg, HasSubstr("PRIMARY KEY (task_ref, node_ref));"));
  EXPECT_THAT(pg, HasSubstr("CREATE SEQUENCE IF NOT EXISTS hist_ids"));
  EXPECT_THAT(pg, Not(HasSubstr("WITHOUT ROWID")));
  EXPECT_THAT(lite, Not(HasSubstr("CREATE SEQUENCE")));
  EXPECT_THAT(pg + lite, Not(HasSubstr("@")));
}

}  // namespace
}  // namespace apollo::store::engine
