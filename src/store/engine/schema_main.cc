// store_schema: prints <repo>/schema.sql (the PostgreSQL rendering of
// engine/schema.cc), or with --dialect sqlite the tables SQLite gets.
#include <cstdio>
#include <cstring>
#include <string>

#include "store/engine/schema.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--dialect") == 0 && std::strcmp(argv[2], "sqlite") == 0) {
    std::fputs(apollo::store::engine::RenderSchema("sqlite").c_str(), stdout);
    return 0;
  }
  if (argc != 1) {
    std::fputs("usage: store_schema [--dialect sqlite]\n", stderr);
    return 2;
  }
  std::fputs(apollo::store::engine::SchemaFile().c_str(), stdout);
  return 0;
}
