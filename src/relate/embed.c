/* embed.c - external embeddings (OpenAI-compatible /v1/embeddings). */
#include "relate_int.h"

int embed_vectors(const struct lb_doc *const *docs, size_t n,
		  const struct lb_relate_embed *cfg, float **out, size_t *dim,
		  struct lb_error *err)
{
	(void)docs; (void)n; (void)cfg; (void)out; (void)dim;
	return lb_error_set(err, LB_EUSAGE, "embeddings: not yet");
}
