#include "store/engine/sql_text.h"

#include <gmock/gmock.h>

namespace apollo::store::sql {
namespace {

using Kind = Template::Piece::Kind;
using ::testing::HasSubstr;

TEST(KeepDialectTest, OpensItsOwnBlocksAndDropsOthers) {
  std::string text = "SELECT 1 /*@pg FOR UPDATE*/ /*@sqlite INDEXED BY i*/ FROM t";
  EXPECT_EQ(KeepDialect(text, "pg"), "SELECT 1   FOR UPDATE   FROM t");
  EXPECT_EQ(KeepDialect(text, "sqlite"), "SELECT 1    INDEXED BY i  FROM t");
}

TEST(KeepDialectTest, LeavesQuotesAndLineCommentsAlone) {
  std::string text = "SELECT '/*@pg x*/' -- it's /*@pg y*/\n/*@pg z*/";
  EXPECT_EQ(KeepDialect(text, "sqlite"), "SELECT '/*@pg x*/' -- it's /*@pg y*/\n");
}

constexpr Column kCols[] = {{"task_ref", Type::kInt}, {"detail", Type::kText}};

TEST(ParseTemplateTest, CutsParamsRowsAndColumnReferences) {
  Result<Template> t = ParseTemplate(
      "INSERT INTO h(a, b, c) SELECT u.task_ref, $2, u.detail FROM @rows WHERE x = $1", kCols);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->params, 2);
  EXPECT_TRUE(t->has_rows);
  std::vector<Kind> kinds;
  for (const auto& p : t->pieces) kinds.push_back(p.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kText, Kind::kRowRef, Kind::kText, Kind::kParam,
                                      Kind::kText, Kind::kRowRef, Kind::kText, Kind::kRows,
                                      Kind::kText, Kind::kParam}));
  EXPECT_EQ(t->pieces[7].text, "FROM");  // the clause word is cut from the text before
  EXPECT_EQ(t->pieces[6].text, " ");
  EXPECT_EQ(t->pieces[5].index, 1);  // u.detail is column 1
}

TEST(ParseTemplateTest, RowsAfterACommaOrUsing) {
  Result<Template> a = ParseTemplate("SELECT 1 FROM t, @rows WHERE t.k = u.task_ref", kCols);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->pieces[1].text, ",");
  Result<Template> b = ParseTemplate("DELETE FROM t USING @rows WHERE t.k = u.task_ref", kCols);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->pieces[1].text, "USING");
}

TEST(ParseTemplateTest, RefusesWhatBothDialectsCannotRead) {
  EXPECT_THAT(ParseTemplate("SELECT u.nope FROM @rows", kCols).status().message(),
              HasSubstr("u.nope is not a column"));
  EXPECT_THAT(ParseTemplate("SELECT 1 FROM @rows", {}).status().message(),
              HasSubstr("@rows without columns"));
  EXPECT_THAT(ParseTemplate("SELECT 1 WHERE x IN @rows", kCols).status().message(),
              HasSubstr("must follow FROM"));
  EXPECT_THAT(ParseTemplate("SELECT u.task_ref", kCols).status().message(),
              HasSubstr("without @rows"));
}

TEST(ParseTemplateTest, QuotesAreNotParsed) {
  Result<Template> t = ParseTemplate("SELECT '$1 u.x @rows' WHERE a = $1", kCols);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->params, 1);
  EXPECT_FALSE(t->has_rows);
}

}  // namespace
}  // namespace apollo::store::sql
