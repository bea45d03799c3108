#include "orchestrator/intent_batches.h"

#include <google/protobuf/io/coded_stream.h>

namespace apollo::orchestrator {

std::vector<apollo::v1::CenterMessage> BatchIntents(std::vector<apollo::v1::Intent> intents,
                                                    size_t max_bytes) {
  std::vector<apollo::v1::CenterMessage> out;
  size_t bytes = 0;  // of out.back()
  for (auto& intent : intents) {
    // An intent adds its own size plus its field tag and length prefix.
    const size_t size = intent.ByteSizeLong();
    const size_t framed = size + 1 + google::protobuf::io::CodedOutputStream::VarintSize64(size);
    if (out.empty() || (bytes > 0 && bytes + framed > max_bytes)) {
      out.emplace_back();
      out.back().mutable_intents();
      bytes = 0;
    }
    *out.back().mutable_intents()->add_intents() = std::move(intent);
    bytes += framed;
  }
  return out;
}

}  // namespace apollo::orchestrator
