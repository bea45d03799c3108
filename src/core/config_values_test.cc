#include "core/config_values.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/config_reader.h"

namespace apollo {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(HostPortTest, AcceptsNamesIpv4AndBracketedIpv6) {
  auto a = ParseHostPort("127.0.0.1:7011");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7011);
  EXPECT_EQ(a->ToString(), "127.0.0.1:7011");

  auto b = ParseHostPort("orchestrator.example-site_1.net:1");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->port, 1);

  auto c = ParseHostPort("[::1]:65535");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->ToString(), "[::1]:65535");
}

TEST(HostPortTest, RefusesBadForms) {
  for (const char* bad : {"", "localhost", "localhost:", ":7011", "host:0", "host:65536",
                          "host:70a", "host:-1", "host:+1", "::1:7011", "[::1]7011", "[::1",
                          "[]:1", "ho st:1", "host:1:2", "h\xc3\xa9:1"}) {
    auto r = ParseHostPort(bad);
    EXPECT_FALSE(r.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(ParseHostPort("localhost").status().message(),
            "'localhost' has no port; expected host:port such as 127.0.0.1:7011");
  auto any = ParseHostPort("127.0.0.1:0", /*allow_any_port=*/true);
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->port, 0);
  EXPECT_FALSE(ParseHostPort("h:65536", true).ok());
  EXPECT_EQ(ParseHostPort("h:99999").status().message(),
            "'h:99999' has a port outside 1..65535; expected host:port such as 127.0.0.1:7011");
}

TEST(DurationTest, BareIntegersAreSecondsAndUnitsCombine) {
  EXPECT_EQ(*ParseDuration("10"), Duration(10s));
  EXPECT_EQ(*ParseDuration("0"), Duration(0));
  EXPECT_EQ(*ParseDuration("10s"), Duration(10s));
  EXPECT_EQ(*ParseDuration("500ms"), Duration(500ms));
  EXPECT_EQ(*ParseDuration("2m"), Duration(2min));
  EXPECT_EQ(*ParseDuration("1h"), Duration(1h));
  EXPECT_EQ(*ParseDuration("1h30m"), Duration(90min));
  EXPECT_EQ(*ParseDuration("7d"), Duration(168h));
  EXPECT_EQ(*ParseDuration("1m30s250ms"), Duration(90250ms));
}

TEST(DurationTest, RefusesNegativesFractionsUnknownUnitsAndOverflow) {
  for (const char* bad : {"", "-1", "+1", "1.5s", "10 s", "s", "10x", "1y", "10S", "ms10",
                          "99999999999999999999", "9223372036854775807s", "1h-5m"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << "accepted '" << bad << "'";
  }
  EXPECT_EQ(ParseDuration("1.5s").status().message(),
            "'1.5s' is not a duration; use whole seconds (10) or a number with a unit ms, s, "
            "m, h, d (500ms, 10s, 2m, 1h30m)");
}

TEST(DurationTest, FormatIsTheShortestExactFormAndRoundTrips) {
  EXPECT_EQ(FormatDuration(Duration(0)), "0");
  EXPECT_EQ(FormatDuration(90s), "1m30s");
  EXPECT_EQ(FormatDuration(1500ms), "1s500ms");
  EXPECT_EQ(FormatDuration(168h), "7d");
  EXPECT_EQ(FormatDuration(Duration(3)), "3us");
  for (Duration d : {Duration(1s), Duration(90min), Duration(25h + 1ms)}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(d)), d);
  }
}

class ReadConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-config-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReadConfigFileTest, ReadsAFileWithinItsBound) {
  std::ofstream(dir_ / "a.yaml") << "node_id: n1\n";
  auto r = ReadConfigFile((dir_ / "a.yaml").string(), 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "node_id: n1\n");
}

TEST_F(ReadConfigFileTest, SaysApartMissingDirectoryAndTooLarge) {
  EXPECT_EQ(ReadConfigFile((dir_ / "nope.yaml").string()).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ReadConfigFile(dir_.string()).status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir_ / "big.yaml") << std::string(101, 'x');
  auto big = ReadConfigFile((dir_ / "big.yaml").string(), 100);
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("larger than 100 bytes"), std::string::npos);
  // An endless file is cut at the bound, not read to the end.
  EXPECT_EQ(ReadConfigFile("/dev/zero", 1000).status().code(), StatusCode::kInvalidArgument);
}

// The YAML helpers, through a tiny document.
std::vector<Diagnostic> ParseWith(std::string_view yaml,
                                  const std::function<void(internal::YamlReader&,
                                                           const YAML::Node&)>& body) {
  std::vector<Diagnostic> errors;
  internal::ParseConfigDocument(yaml, "t.yaml", &errors, body);
  return errors;
}

TEST(ConfigReaderTest, TypedValuesAndRanges) {
  Duration d{0};
  double f = 0;
  HostPort hp;
  auto errors = ParseWith("a: 2m\nb: 0.5\nc: 'x:1'\nd: 10x\ne: 1.5\nf: 1\n",
                          [&](internal::YamlReader& r, const YAML::Node& root) {
                            EXPECT_TRUE(internal::ReadDuration(r, root["a"], "a", 1s, 1h, &d));
                            EXPECT_TRUE(internal::ReadNumber(r, root["b"], "b", 0, 1, &f));
                            EXPECT_TRUE(internal::ReadHostPort(r, root["c"], "c", &hp));
                            EXPECT_FALSE(internal::ReadDuration(r, root["d"], "d", 1s, 1h, &d));
                            EXPECT_FALSE(internal::ReadNumber(r, root["e"], "e", 0, 1, &f));
                            EXPECT_FALSE(internal::ReadDuration(r, root["f"], "f", 5s, 1h, &d));
                          });
  EXPECT_EQ(d, Duration(2min));
  EXPECT_EQ(f, 0.5);
  EXPECT_EQ(hp.ToString(), "x:1");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].ToString(),
            "t.yaml:4:4: 'd': '10x' is not a duration; use whole seconds (10) or a number with "
            "a unit ms, s, m, h, d (500ms, 10s, 2m, 1h30m)");
  EXPECT_EQ(errors[1].ToString(), "t.yaml:5:4: 'e' must be between 0 and 1, got 1.5");
  EXPECT_EQ(errors[2].ToString(), "t.yaml:6:4: 'f' must be between 5s and 1h, got 1s");
}

TEST(ConfigReaderTest, EmptyDocumentIsValidAndNonMappingIsNot) {
  bool ran = false;
  EXPECT_TRUE(ParseWith("", [&](internal::YamlReader&, const YAML::Node& root) {
                ran = root.IsNull();
              }).empty());
  EXPECT_TRUE(ran);
  auto errors = ParseWith("- a\n- b\n", [](internal::YamlReader&, const YAML::Node&) {});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].ToString(),
            "t.yaml:1:1: expected a mapping of settings (key: value lines), got a list");
}

TEST(HasDotComponentTest, OnlyWholeDotComponents) {
  for (const char* p : {".", "..", "/a/./b", "/a/../b", "a/..", "/a/b/."}) {
    EXPECT_TRUE(HasDotComponent(p)) << p;
  }
  for (const char* p : {"", "/", "/a/b", "/a/.hidden", "/a/b..c", "/a/...", "a.b/c"}) {
    EXPECT_FALSE(HasDotComponent(p)) << p;
  }
}

}  // namespace
}  // namespace apollo
