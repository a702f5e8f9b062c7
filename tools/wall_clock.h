// now_s(): the steady clock in seconds, for timing on the host. The one
// copy for the tools' CUDA programs (tools/bench, tools/ember-sim).
#pragma once

#include <chrono>

static inline double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
