#pragma once

// How often agents heartbeat, by fleet size. Every heartbeat costs the
// center a read, a callback and a store row; a fleet large enough would
// spend a core on saying "alive" (issue 18: 10,000 agents every 10 s). Like
// Nomad's max_heartbeats_per_second, the center names each agent its
// interval in the Welcome: the configured heartbeat_interval, or longer so
// the whole fleet sends at most `max_per_s` heartbeats a second. Liveness
// thresholds (suspect_after, lost_after) and the silence that closes a
// session stretch by the same factor, so a large fleet's nodes do not look
// silent between beats. Only a silent cut (no FIN, no RST) waits for it; an
// agent that dies or closes its link is seen at once.
//
// The fleet is the larger of the sessions connected now, the most connected
// at once since start, and the nodes the store knew at start, so agents
// reconnecting after a restart are paced for the fleet coming back, not for
// the few that came first.

#include <cstdint>

#include "core/clock.h"

namespace apollo::orchestrator {

// The interval to name an agent: max(configured, fleet / max_per_s),
// rounded up to a whole second, at most 5 minutes (the agents' own ceiling).
// `max_per_s` <= 0: always the configured one.
Duration HeartbeatPace(Duration configured, int64_t fleet, int64_t max_per_s);

}  // namespace apollo::orchestrator
