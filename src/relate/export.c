/* export.c - candidates as TSV for audit; format in docs/relate.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "linkbot/fsutil.h"
#include "linkbot/relate.h"

/* the comment line that carries cand->random_floor */
#define FLOOR_LINE "# random pairs score: "

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
	if (isfinite(cand->random_floor) &&
	    fprintf(f, "%s%.9g\n", FLOOR_LINE,
		    (double)cand->random_floor) < 0)
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

/* ---- reading an export back ---- */

struct url_ix {
	const char *url;
	uint32_t ix;
};

static int url_cmp(const void *a, const void *b)
{
	const struct url_ix *x = a, *y = b;
	int c = strcmp(x->url, y->url);

	return c ? c : (x->ix > y->ix) - (x->ix < y->ix);
}

static struct url_ix *url_index(const struct lb_doc *const *d, size_t n)
{
	struct url_ix *u = malloc((n + 1) * sizeof(*u));
	size_t i;

	if (u == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		u[i].url = doc_url(d[i]);
		u[i].ix = (uint32_t)i;
	}
	qsort(u, n, sizeof(*u), url_cmp);
	return u;
}

/* First index of url, or -1. */
static long url_find(const struct url_ix *u, size_t n, const char *url)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(u[mid].url, url) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(u[lo].url, url) == 0 ? (long)u[lo].ix : -1;
}

/* import_file()'s reader: one file's lines into out. */
struct importer {
	const char *path;
	const struct url_ix *su, *tu;
	const struct lb_relate_input *in;
	size_t m;
	uint32_t *fill;		/* each source's candidates so far */
	struct lb_candidates *out;
};

static int import_line(char *line, size_t len, size_t lineno, void *arg,
		       struct lb_error *err)
{
	struct importer *im = arg;
	struct lb_candidates *out = im->out;
	char *t1, *t2, *ep;
	long si, ti;
	float score;

	if (strncmp(line, FLOOR_LINE, strlen(FLOOR_LINE)) == 0) {
		score = strtof(line + strlen(FLOOR_LINE), &ep);
		if (*ep == '\0' && score > out->random_floor)
			out->random_floor = score;
		return 0;
	}
	if (len == 0 || line[0] == '#')
		return 0;
	t1 = strchr(line, '\t');
	t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (t2 == NULL)
		return lb_error_set(err, LB_EPARSE,
				    "%s line %zu: not 3 columns", im->path,
				    lineno);
	*t1 = *t2 = '\0';
	si = url_find(im->su, im->in->n_src, line);
	ti = url_find(im->tu, im->in->n_tgt, t1 + 1);
	score = strtof(t2 + 1, &ep);
	if (si < 0 || ti < 0 || *ep != '\0')
		return lb_error_set(err, LB_EPARSE,
				    "%s line %zu: unknown page or bad score",
				    im->path, lineno);
	if (im->fill[si] < im->m) {
		size_t k = (size_t)si * im->m + im->fill[si];

		out->target[k] = (uint32_t)ti;
		out->score[k] = score;
		im->fill[si]++;
	}
	return 0;
}

/* One file's lines into out; fill[] counts each source's candidates. */
static int import_file(const char *path, const struct url_ix *su,
		       const struct url_ix *tu, const struct lb_relate_input *in,
		       size_t m, uint32_t *fill, struct lb_candidates *out,
		       struct lb_error *err)
{
	struct importer im = { path, su, tu, in, m, fill, out };

	return lb_file_read_lines(path, 0, import_line, &im, err);
}

int relate_import_tsv(const char *const *paths, size_t n_paths,
		      const struct lb_relate_input *in, size_t m,
		      struct lb_candidates *out, struct lb_error *err)
{
	struct url_ix *su = NULL, *tu = NULL;
	uint32_t *fill = NULL;
	size_t i;
	int rc = -1;

	if (lb_candidates_init(out, in->n_src, m) == -1)
		return lb_error_set(err, LB_ENOMEM, "candidates");
	su = url_index(in->src, in->n_src);
	tu = url_index(in->tgt, in->n_tgt);
	fill = calloc(in->n_src + 1, sizeof(*fill));
	if (su == NULL || tu == NULL || fill == NULL) {
		lb_error_set(err, LB_ENOMEM, "candidates");
		goto out;
	}
	for (i = 0; i < n_paths; i++)
		if (import_file(paths[i], su, tu, in, m, fill, out, err) < 0)
			goto out;
	/* the shards' rows are not extended: every row is here now */
	if (relate_extend(out, in, err) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		lb_candidates_release(out);
	free(su);
	free(tu);
	free(fill);
	return rc;
}
