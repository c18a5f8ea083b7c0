/* export.c - candidates as TSV for audit; format in docs/relate.md. */
#include <stdio.h>

#include "linkbot/relate.h"

/* URL of a doc for the export: url, else url_path, else "-". */
static const char *doc_url(const struct lb_doc *d)
{
	if (d->url)
		return d->url;
	return d->url_path ? d->url_path : "-";
}

int relate_export_tsv(FILE *f, const struct lb_relate_input *in,
		      const struct lb_candidates *cand, size_t row_begin,
		      struct lb_error *err)
{
	size_t r, j;

	if (row_begin + cand->n_src > in->n_src)
		return lb_error_set(err, LB_EUSAGE,
				    "export: rows beyond %zu sources",
				    in->n_src);
	if (fputs("# linkbot candidates: source_url\ttarget_url\tscore "
		  "(cosine), best first per source\n", f) == EOF)
		return lb_error_errno(err, LB_EIO, "cannot write candidates");
	for (r = 0; r < cand->n_src; r++) {
		const char *src = doc_url(in->src[row_begin + r]);

		for (j = 0; j < cand->m; j++) {
			uint32_t t = cand->target[r * cand->m + j];

			if (t == LB_NO_TARGET)
				break;
			if (t >= in->n_tgt)
				return lb_error_set(err, LB_EINVALID,
						    "export: target %u of %zu",
						    (unsigned)t, in->n_tgt);
			if (fprintf(f, "%s\t%s\t%.9g\n", src,
				    doc_url(in->tgt[t]),
				    (double)cand->score[r * cand->m + j]) < 0)
				return lb_error_errno(err, LB_EIO,
						      "cannot write candidates");
		}
	}
	if (ferror(f))
		return lb_error_errno(err, LB_EIO, "cannot write candidates");
	return 0;
}
