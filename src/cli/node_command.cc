#include "cli/node_command.h"

#include "cli/command_result.h"
#include "cli/proto_json.h"
#include "cli/text_views.h"

namespace apollo::cli {

int RunNodeList(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                std::ostream& err) {
  auto resp = client.ListNodes();
  if (!resp.ok()) return ReportError(resp.status(), err);
  out << (global.json() ? DumpJson(NodesToJson(*resp)) : NodesText(*resp));
  return kExitOk;
}

}  // namespace apollo::cli
