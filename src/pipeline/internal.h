/* internal.h - (internal to pipeline/) one function per stage of an endpoint. */
#ifndef LINKBOT_PIPELINE_INTERNAL_H
#define LINKBOT_PIPELINE_INTERNAL_H

#include <stdint.h>
#include "linkbot/config.h"
#include "linkbot/pipeline.h"
#include "linkbot/store.h"
#include "pages.h"

int pipeline_build_endpoint(const struct lb_config *cfg,
			    const struct lb_client *cl,
			    const struct lb_endpoint *ep,
			    const struct pages *pages,
			    const struct lb_run_opts *opts,
			    struct lb_error *err);

int pipeline_publish_endpoint(const struct lb_config *cfg,
			      const struct lb_client *cl,
			      const struct lb_endpoint *ep,
			      const struct pages *pages,
			      struct lb_store *store,
			      const struct lb_run_opts *opts,
			      struct lb_error *err);

/* The seed of an endpoint's randomness: --seed, else the UTC day. */
uint64_t pipeline_seed(const struct lb_run_opts *opts, const char *client,
		       const char *endpoint);

#endif
