// The background checkpointer against a real SQLite file, opened in the
// order the driver opens it: the checkpointer's connection first, on a file
// not yet in WAL mode, then the writer's, which turns WAL mode on.
#include "store/sqlite/checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "store/sqlite/sqlite_conn.h"

namespace apollo::store::sqlite {
namespace {

constexpr int kSoftPages = 20;
constexpr std::chrono::milliseconds kMinInterval{5};

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo_ckpt_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store.db";
    Result<sqlite3*> ckpt_db = OpenHandle(path_, /*create=*/true);
    ASSERT_TRUE(ckpt_db.ok()) << ckpt_db.status().ToString();
    checkpointer_ = std::make_unique<Checkpointer>(*ckpt_db, kSoftPages, kMinInterval);
    Result<sqlite3*> db = OpenHandle(path_, /*create=*/true);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
    Exec(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
        "CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)");
    checkpointer_->Attach(db_);
  }

  void TearDown() override {
    if (db_ != nullptr) sqlite3_wal_hook(db_, nullptr, nullptr);
    checkpointer_.reset();
    if (db_ != nullptr) sqlite3_close(db_);
    std::filesystem::remove_all(dir_);
  }

  void Exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    ASSERT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in " << sql;
  }

  // One transaction of about one page.
  void CommitOnePage() { Exec("INSERT INTO t (body) VALUES (zeroblob(3000))"); }
  // One transaction that writes one WAL frame (the same leaf page again).
  void CommitOneFrame() { Exec("INSERT INTO t (body) VALUES (zeroblob(10))"); }

  // Waits up to 5 s for the thread to have run `n` checkpoints.
  bool WaitForCheckpoints(uint64_t n) {
    for (int i = 0; i < 500; ++i) {
      if (checkpointer_->stats().checkpoints >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::string dir_;
  std::string path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Checkpointer> checkpointer_;
};

// Before the fix the thread's connection had never read the file, so its
// pager did not know about the WAL and every checkpoint returned SQLITE_OK
// having copied nothing (log -1): only the writer's hard limit ever
// checkpointed.
TEST_F(CheckpointerTest, CheckpointsAWalItsConnectionDidNotOpen) {
  for (int i = 0; i < kSoftPages + 5; ++i) CommitOnePage();
  ASSERT_TRUE(WaitForCheckpoints(1)) << "no checkpoint reached the WAL";
  Checkpointer::Stats s = checkpointer_->stats();
  EXPECT_GE(s.last_log, kSoftPages);
  EXPECT_GT(s.last_checkpointed, 0);
}

// With the writer pausing between transactions, the thread copies every
// frame and the next commit restarts the WAL: the file stays near the soft
// limit, never reaches the hard one (8x), and the writer never has to
// checkpoint itself.
TEST_F(CheckpointerTest, KeepsTheWalNearTheSoftLimit) {
  constexpr int kCommits = 12 * kSoftPages;
  for (int i = 0; i < kCommits; ++i) {
    CommitOnePage();
    if (checkpointer_->WriterMustCheckpoint()) {
      ADD_FAILURE() << "the WAL reached the hard limit at commit " << i;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_GE(checkpointer_->stats().checkpoints, 2u);
  // Without checkpoints the WAL would hold every commit's frames.
  auto wal_bytes = std::filesystem::file_size(path_ + "-wal");
  EXPECT_LT(wal_bytes, static_cast<uintmax_t>(4 * kSoftPages * 4096)) << wal_bytes;
}

// Woken once per quarter of the soft limit, not by every commit past it,
// when a reader holds the WAL and no checkpoint can restart it.
TEST_F(CheckpointerTest, AHeldWalDoesNotWakeItEveryCommit) {
  Result<sqlite3*> reader = OpenHandle(path_, /*create=*/false);
  ASSERT_TRUE(reader.ok());
  for (int i = 0; i < 3; ++i) CommitOnePage();
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(*reader, "SELECT id FROM t", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);  // a read transaction stays open
  constexpr int kCommits = 3 * kSoftPages;
  for (int i = 0; i < kCommits; ++i) {
    CommitOneFrame();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  uint64_t runs = checkpointer_->stats().checkpoints;
  sqlite3_finalize(st);
  sqlite3_close(*reader);
  EXPECT_GE(runs, 1u);
  // Past the soft limit every commit used to wake it: ~2 * kSoftPages runs;
  // now one per kSoftPages / 4 frames.
  EXPECT_LE(runs, static_cast<uint64_t>(kCommits / (kSoftPages / 4) + 1));
}

}  // namespace
}  // namespace apollo::store::sqlite
