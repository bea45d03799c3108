#include "cli/tls_command.h"

#include <nlohmann/json.hpp>

#include "cli/command_result.h"
#include "tls/cert_authority.h"
#include "tls/cert_identity.h"

namespace apollo::cli {
namespace {

int Usage(const std::string& why, std::ostream& err) {
  err << "apollo-cli: " << why << "\n";
  return kExitUsage;
}

// "created A and B (...)" or the JSON document.
void Report(const TlsOptions& opts, const tls::CreatedPair& made, const std::string& what,
            std::ostream& out) {
  if (opts.output == "json") {
    out << nlohmann::json{{"cert", made.paths.cert},
                          {"key", made.paths.key},
                          {"what", what},
                          {"not_after", made.not_after},
                          {"ends_with_ca", made.clamped_to_ca}}
               .dump(2)
        << "\n";
    return;
  }
  out << "created " << made.paths.cert << " and " << made.paths.key
      << " (private key, mode 0600): " << what << ", valid until " << made.not_after
      << (made.clamped_to_ca ? " (shortened: a certificate cannot outlive its CA)" : "") << "\n";
}

// The kind asked for, or a usage error on `err` (then nullopt).
std::optional<tls::CertKind> KindOf(const TlsOptions& opts, std::ostream& err) {
  int kinds = (opts.server ? 1 : 0) + (opts.node.empty() ? 0 : 1) + (opts.client ? 1 : 0);
  if (kinds != 1) {
    Usage("tls cert create needs exactly one of --server, --node NODE_ID, --client", err);
    return std::nullopt;
  }
  if (!opts.hosts.empty() && !opts.server) {
    Usage("--host names a server certificate's addresses; it goes with --server", err);
    return std::nullopt;
  }
  if (opts.client && opts.name.empty()) {
    Usage("--client needs --name NAME (the operator's name; files NAME.pem, NAME-key.pem)", err);
    return std::nullopt;
  }
  if (opts.server) return tls::CertKind::kServer;
  return opts.client ? tls::CertKind::kClient : tls::CertKind::kNode;
}

}  // namespace

int RunTlsCaCreate(const TlsOptions& opts, TimePoint now, std::ostream& out, std::ostream& err) {
  if (opts.dir.empty()) return Usage("--dir: empty path", err);
  auto made =
      tls::CreateCa(opts.dir, opts.days > 0 ? opts.days : tls::kDefaultCaDays, opts.force, now);
  if (!made.ok()) return ReportError(made.status(), err);
  Report(opts, *made, "certificate authority", out);
  return kExitOk;
}

int RunTlsCertCreate(const TlsOptions& opts, TimePoint now, std::ostream& out, std::ostream& err) {
  if (opts.dir.empty()) return Usage("--dir: empty path", err);
  std::optional<tls::CertKind> kind = KindOf(opts, err);
  if (!kind) return kExitUsage;
  tls::CertRequest req;
  req.kind = *kind;
  req.node_id = opts.node;
  req.hosts = opts.hosts;
  req.days = opts.days > 0 ? opts.days : tls::kDefaultCertDays;
  req.name = !opts.name.empty() ? opts.name : opts.server ? "server" : opts.node;
  auto made = tls::CreateCert(opts.dir, req, opts.force, now);
  if (!made.ok()) return ReportError(made.status(), err);
  std::string what;
  switch (*kind) {
    case tls::CertKind::kServer: {
      std::string hosts;
      for (const auto& h : req.hosts.empty() ? tls::DefaultServerHosts() : req.hosts) {
        hosts += (hosts.empty() ? "" : ", ") + h;
      }
      what = "server certificate for " + hosts;
      break;
    }
    case tls::CertKind::kNode:
      what = "node certificate for " + opts.node + " (URI " + std::string(tls::kNodeUriPrefix) +
             opts.node + ")";
      break;
    case tls::CertKind::kClient:
      what = "operator client certificate for " + opts.name;
      break;
  }
  Report(opts, *made, what, out);
  return kExitOk;
}

}  // namespace apollo::cli
