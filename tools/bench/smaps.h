// smaps: a field of /proc/self/smaps for the host mapping that holds an
// address, as the probes report how the host backs memory (ember-backing-probe,
// ember-pageable-probe).
#pragma once

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

// The kB that field ("Rss", "AnonHugePages", "KernelPageSize", ...) gives the mapping holding p; -1 where
// there is no such mapping or field.
static inline long smaps_kb(const void *p, const char *field)
{
	std::ifstream f("/proc/self/smaps");
	std::string line, name = std::string(field) + ":";
	bool inside = false;
	while (std::getline(f, line)) {
		unsigned long lo, hi;
		if (sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
			if (inside)
				break;
			inside = (unsigned long)p >= lo && (unsigned long)p < hi;
			continue;
		}
		long kb;
		if (inside && !line.compare(0, name.size(), name) && sscanf(line.c_str() + name.size(), "%ld", &kb) == 1)
			return kb;
	}
	return -1;
}
