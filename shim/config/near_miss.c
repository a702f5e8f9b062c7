/*
 * EMBER_* names in the environment that the table does not define but one
 * of its names nearly matches (EMBER_BUDGTE for EMBER_BUDGET): a typo that
 * would otherwise be ignored without a word. Names far from every known
 * one are left alone: they belong to other tools (scripts' EMBER_BUILD).
 */
#include <string.h>

#include "config.h"

enum { NAME_MAX_LEN = 64 };

/* Edit distance (insert, delete, substitute, swap neighbours) of two short strings. */
static unsigned distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

bool ember_config_known_name(const char *name, size_t len)
{
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *v = &ember_var_docs[i];
		size_t n = strlen(v->name);
		if (!v->per_gpu && n == len && !memcmp(v->name, name, len))
			return true;
		if (v->per_gpu && len > n && !memcmp(v->name, name, n) && strspn(name + n, "0123456789") == len - n)
			return true;
	}
	return false;
}

const char *ember_config_near_miss(const char *entry, char *name, size_t namelen)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t)(eq - entry) : strlen(entry);
	/* only names a shell can export (so one logged cannot forge a line) */
	if (strncmp(entry, "EMBER_", 6) || len > NAME_MAX_LEN || len + 1 > namelen ||
	    strspn(entry, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != len || ember_config_known_name(entry, len))
		return NULL;
	memcpy(name, entry, len);
	name[len] = 0;
	const char *nearest = NULL;
	unsigned best = 3; /* at most two edits, and fewer than a third of the name */
	for (size_t i = 0; i < ember_var_count; i++) {
		const char *candidate = ember_var_docs[i].name;
		size_t n = strlen(candidate);
		if (n > NAME_MAX_LEN)
			continue;
		unsigned d = distance(name, len, candidate, n);
		if (d < best && 3 * d < len) {
			best = d;
			nearest = candidate;
		}
	}
	return nearest;
}
