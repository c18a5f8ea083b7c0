/*
 * fuzz_config.c - libFuzzer target for the configuration (tests/fuzz/run):
 * config_parse() on any text. Contract: either a config or an error with
 * a message, never both, never neither.
 */
#include <stdint.h>
#include <stdlib.h>

#include "linkbot/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_config *cfg = NULL;
	struct lb_error err;
	int rc;

	lb_error_init(&err);
	rc = config_parse("fuzz.yaml", (const char *)data, size, &cfg, &err);
	if ((rc == 0) != (cfg != NULL) || (rc < 0 && err.msg[0] == '\0'))
		abort();
	config_free(cfg);
	return 0;
}
