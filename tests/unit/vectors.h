/*
 * vectors.h - a shared vectors file (tests/data/<contract>/vectors.json,
 * read by the C unit tests and the JS tests alike) as a cmocka group
 * setup: VECTORS_GROUP(load, unload, path) defines the two, and the tests
 * read the file's cJSON tree from `vectors`.
 */
#ifndef LINKBOT_TEST_VECTORS_H
#define LINKBOT_TEST_VECTORS_H

#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "linkbot/fsutil.h"

static cJSON *vectors;

static int vectors_load(const char *path)
{
	struct lb_error err;
	char *text = NULL;

	lb_error_init(&err);
	if (lb_file_read(path, 1 << 22, &text, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	vectors = cJSON_Parse(text);
	free(text);
	if (vectors == NULL)
		fprintf(stderr, "%s: not JSON\n", path);
	return vectors ? 0 : -1;
}

#define VECTORS_GROUP(load, unload, path)				\
	static int load(void **state)					\
	{								\
		(void)state;						\
		return vectors_load(path);				\
	}								\
	static int unload(void **state)					\
	{								\
		(void)state;						\
		cJSON_Delete(vectors);					\
		return 0;						\
	}

#endif
