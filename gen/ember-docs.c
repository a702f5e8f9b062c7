/* ember-docs: print the EMBER_* table of shim/config/config.def as Markdown. */
#include <stdio.h>

#include "config.h"

int main(void)
{
	puts("# Ember's environment variables\n\n"
	     "Generated from `shim/config/config.def` by `ember-docs`; `ember-run --help` prints the same "
	     "table. A bad value gets one error line naming the variable and the accepted form, "
	     "and Ember then passes every call straight to the driver.\n");
	ember_config_describe(stdout, true);
	return ferror(stdout) != 0;
}
