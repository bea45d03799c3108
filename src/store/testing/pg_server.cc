#include "store/testing/pg_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <libpq-fe.h>

namespace apollo::store::testing {
namespace {

std::string PgBin() {
  const char* env = std::getenv("APOLLO_PG_BIN");
  return env && *env ? env : "/usr/lib/postgresql/15/bin";
}

// Runs argv (as `postgres` when we are root), output appended to `log`.
// Returns the exit status, or -1 if it could not run.
int Run(std::vector<std::string> argv, const std::string& log) {
  if (geteuid() == 0) argv.insert(argv.begin(), {"runuser", "-u", "postgres", "--"});
  // Everything the child needs is built before fork(): the parent may have
  // other threads, so the child only opens, dups and execs.
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A loopback port nobody listens on right now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

Result<std::unique_ptr<PgServer>> PgServer::Start(const Options& options) {
  char tmpl[] = "/tmp/apollo-pg-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Status::Internal("mkdtemp failed");
  std::unique_ptr<PgServer> s(new PgServer(tmpl, options));
  if (geteuid() == 0) {
    passwd* pw = getpwnam("postgres");
    if (pw == nullptr) return Status::FailedPrecondition("running as root but no postgres user");
    if (chown(tmpl, pw->pw_uid, pw->pw_gid) != 0) return Status::Internal("chown temp dir");
  }
  APOLLO_RETURN_IF_ERROR(s->InitDb());
  Status st;
  for (int attempt = 0; attempt < 3; ++attempt) {  // a port may be taken meanwhile
    st = s->StartOn(FreePort());
    if (st.ok()) return s;
  }
  return st;
}

PgServer::~PgServer() {
  (void)Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status PgServer::InitDb() {
  int rc = Run({PgBin() + "/initdb", "-D", dir_ + "/data", "-A", "trust", "-U", "apollo", "-E",
                "UTF8", "--no-sync", "--no-instructions"},
               dir_ + "/initdb.log");
  if (rc != 0) {
    return Status::FailedPrecondition("initdb failed (exit " + std::to_string(rc) + ", binaries " +
                                      PgBin() + "): " + LogTail());
  }
  return Status::Ok();
}

Status PgServer::StartOn(int port) {
  if (port == 0) return Status::Unavailable("no free loopback port");
  std::string opts = "-p " + std::to_string(port) + " -k " + dir_ +
                     " -c listen_addresses=127.0.0.1 -c max_connections=200";
  if (!options_.durable) opts += " -c fsync=off -c full_page_writes=off";
  int rc = Run({PgBin() + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/server.log", "-w",
                "-t", std::to_string(options_.start_timeout_s), "-o", opts, "start"},
               dir_ + "/pg_ctl.log");
  if (rc != 0) {
    return Status::Unavailable("PostgreSQL did not start on port " + std::to_string(port) +
                               ": " + LogTail());
  }
  port_ = port;
  running_ = true;
  return Status::Ok();
}

Status PgServer::Stop() {
  if (!running_) return Status::Ok();
  int rc = Run({PgBin() + "/pg_ctl", "-D", dir_ + "/data", "-m", "fast", "-w", "-t", "60",
                "stop"},
               dir_ + "/pg_ctl.log");
  if (rc != 0) return Status::Internal("pg_ctl stop failed: " + LogTail());
  running_ = false;
  return Status::Ok();
}

Status PgServer::Restart() {
  if (running_) return Status::Ok();
  return StartOn(port_);
}

std::string PgServer::Url(const std::string& db) const {
  return "postgresql://apollo@127.0.0.1:" + std::to_string(port_) + "/" + db;
}

Result<std::string> PgServer::CreateDatabase(const std::string& name) {
  PGconn* c = PQconnectdb(Url("postgres").c_str());
  Status st;
  if (PQstatus(c) != CONNECTION_OK) {
    st = Status::Unavailable("creating database " + name + ": " + PQerrorMessage(c));
  } else {
    char* quoted = PQescapeIdentifier(c, name.c_str(), name.size());
    PGresult* r = PQexec(c, ("CREATE DATABASE " + std::string(quoted ? quoted : name)).c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      st = Status::Unavailable("creating database " + name + ": " + PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfreemem(quoted);
  }
  PQfinish(c);
  if (!st.ok()) return st;
  return Url(name);
}

Result<std::string> PgServer::NewDatabase() {
  return CreateDatabase("apollo_test_" + std::to_string(++next_db_));
}

std::string PgServer::LogTail() const {
  std::string out;
  for (const char* name : {"/initdb.log", "/pg_ctl.log", "/server.log"}) {
    std::ifstream in(dir_ + name);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > 1500) text = text.substr(text.size() - 1500);
    if (!text.empty()) out += std::string("[") + (name + 1) + "] " + text;
  }
  return out;
}

}  // namespace apollo::store::testing
