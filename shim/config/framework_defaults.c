/* The frameworks' settings that EMBER_MANAGE_ALL needs (framework_defaults.h). */
#include <stdlib.h>

#include "framework_defaults.h"

const struct ember_framework_default ember_framework_defaults[] = {
	/*
	 * JAX's preallocation is one cuMemCreate of 75% of the card: larger
	 * than any budget and not convertible (the program maps it itself), so
	 * it stays the driver's and JAX's arrays stay on the GPU past the
	 * budget. Without it, JAX's pool grows in pieces the budget places.
	 */
	{ "XLA_PYTHON_CLIENT_PREALLOCATE", "false",
	  "JAX's preallocation would be one allocation larger than the budget, left on the GPU" },
};
const size_t ember_framework_default_count = sizeof ember_framework_defaults / sizeof ember_framework_defaults[0];

unsigned ember_framework_defaults_apply(void)
{
	unsigned set = 0;
	for (size_t i = 0; i < ember_framework_default_count; i++) /* the program's own choice stands */
		if (!getenv(ember_framework_defaults[i].var) &&
		    setenv(ember_framework_defaults[i].var, ember_framework_defaults[i].value, 1) == 0)
			set |= 1u << i;
	return set;
}
