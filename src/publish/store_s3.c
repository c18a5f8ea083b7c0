/* store_s3.c - the S3 store (being written). */
#include "linkbot/store.h"
#include "store_impl.h"

int store_s3_open(const struct lb_config *cfg, const char *location,
		  struct lb_store **out, struct lb_error *err)
{
	(void)cfg;
	*out = NULL;
	return lb_error_set(err, LB_ECONFIG, "'%s': the S3 store is not built yet",
			    location);
}
