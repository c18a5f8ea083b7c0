/*
 * links.c - links.tsv, the record between build and publish, and bonus.tsv:
 * the one writer and the one reader (the format: links.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "linkbot/fsutil.h"
#include "linkbot/render.h"
#include "linkbot/links.h"

/* A URL that fits on a line of its own. */
static int url_clean(const char *u)
{
	for (; *u != '\0'; u++)
		if ((unsigned char)*u < 0x20)
			return 0;
	return 1;
}

/*
 * "%.6f" of a float by integer arithmetic: |x| = m 2^e (m < 2^24), so
 * |x| 10^6 = m 10^6 2^e with m 10^6 < 2^44; for e < 0 the quotient of
 * the shift is the integer part and its remainder decides the rounding
 * (half to even, as glibc rounds the exact binary value in the default
 * rounding mode); below 2^-64 of that numerator the value is under
 * 2^-20, so 0. A negative float, -0 included, keeps its sign ("-0.000000",
 * as printf). Infinities, NaN and |x| >= 2^40 go to snprintf. links.tsv
 * writes one a link: fprintf's "%.6f" was ~3.5 k instructions a line, 4 %
 * of a small site's build (bench/RESULTS.md, "the tail, round 5").
 */
size_t links_score_text(char *out, float score)
{
	uint32_t u, ex;
	uint64_t m, n, r, half;
	int e, neg;
	char *p = out, dig[24];
	size_t k = 0, i;

	memcpy(&u, &score, sizeof(u));
	neg = (int)(u >> 31);
	ex = (u >> 23) & 0xff;
	m = u & 0x7fffff;
	if (ex == 0xff || ex >= 127 + 40)
		return (size_t)snprintf(out, 64, "%.6f", (double)score);
	if (ex == 0) {
		e = -149;	/* subnormal */
	} else {
		m |= 0x800000;
		e = (int)ex - 150;
	}
	m *= 1000000;
	if (e >= 0) {
		n = m << e;
	} else if (-e >= 64) {
		n = 0;
	} else {
		n = m >> -e;
		r = m & ((UINT64_C(1) << -e) - 1);
		half = UINT64_C(1) << (-e - 1);
		if (r > half || (r == half && (n & 1)))
			n++;
	}
	if (neg)
		*p++ = '-';
	for (i = 0; i < 6; i++, n /= 10)
		dig[k++] = (char)('0' + n % 10);
	dig[k++] = '.';
	do {
		dig[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	while (k > 0)
		*p++ = dig[--k];
	*p = '\0';
	return (size_t)(p - out);
}

struct links_writer {
	const struct page_list *src, *tgt;
	const struct lb_assignment *asg;
};

static int links_writer(FILE *f, void *arg, struct lb_error *err)
{
	const struct links_writer *w = arg;
	const struct lb_assignment *asg = w->asg;
	size_t i, j, nl;
	char num[65];

	(void)err;	/* write errors: the caller checks the stream */
	fputs("# linkbot links: source_url\ttarget_url\ttype\tscore\n", f);
	for (i = 0; i < asg->n_src; i++) {
		const char *s = w->src->docs[i]->url;

		if (!url_clean(s))
			continue;
		for (j = 0; j < asg->l; j++) {
			const struct lb_link *lk = &asg->links[i * asg->l + j];

			if (lk->target == LB_NO_TARGET)
				break;
			if (!url_clean(w->tgt->docs[lk->target]->url))
				continue;
			/* as fprintf(f, "%s\t%s\t%s\t%.6f\n", ...) */
			nl = links_score_text(num, lk->score);
			fputs(s, f);
			putc('\t', f);
			fputs(w->tgt->docs[lk->target]->url, f);
			fputs(lk->type == LB_LINK_RANDOM ? "\trandom\t" :
							   "\trelated\t", f);
			num[nl++] = '\n';
			fwrite(num, 1, nl, f);
		}
	}
	return 0;
}

int links_write(const char *path, const struct page_list *src,
		const struct page_list *tgt, const struct lb_assignment *asg,
		struct lb_error *err)
{
	struct links_writer w = { src, tgt, asg };

	return lb_file_write_stream(path, links_writer, &w, err);
}

/* Splits a line in place into its 4 tab-separated fields. */
static int split_line(char *line, char *f[4])
{
	int i;

	for (i = 0; i < 3; i++) {
		f[i] = line;
		line = strchr(line, '\t');
		if (line == NULL)
			return -1;
		*line++ = '\0';
	}
	f[3] = line;
	return 0;
}

/* links_read()'s state between lines: the source being grouped. */
struct links_reader {
	const struct pages *pages;
	size_t max_links;
	links_visit_fn fn;
	void *arg;
	struct lb_render_link *links;
	const struct lb_doc *cur;
	char *cur_url;
	size_t n;
};

static int links_line(char *line, size_t len, size_t lineno, void *arg,
		      struct lb_error *err)
{
	struct links_reader *r = arg;
	char *fl[4];
	long si, ti;

	(void)len;
	(void)lineno;
	if (line[0] == '#' || split_line(line, fl) < 0)
		return 0;
	if (r->cur_url == NULL || strcmp(r->cur_url, fl[0]) != 0) {
		if (r->cur != NULL && r->fn(r->cur, r->links, r->n, r->arg) < 0)
			return -1;
		r->n = 0;
		free(r->cur_url);
		if ((r->cur_url = strdup(fl[0])) == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		si = pages_find(r->pages, fl[0]);
		r->cur = si >= 0 ? &r->pages->rec[si].doc : NULL;
	}
	ti = pages_find(r->pages, fl[1]);
	if (r->cur == NULL || ti < 0 || r->n >= r->max_links)
		return 0;
	r->links[r->n].doc = &r->pages->rec[ti].doc;
	r->links[r->n].type = strcmp(fl[2], "random") == 0 ? LB_LINK_RANDOM :
							     LB_LINK_RELATED;
	r->n++;
	return 0;
}

int links_read(const char *path, const struct pages *pages,
	       size_t max_links, links_visit_fn fn, void *arg,
	       struct lb_error *err)
{
	struct links_reader r = { pages, max_links, fn, arg, NULL, NULL,
				  NULL, 0 };
	int rc = -1;

	r.links = calloc(max_links + 1, sizeof(*r.links));
	if (r.links == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	/* line by line: a million pages' links need not sit in memory */
	rc = lb_file_read_lines(path, 1, links_line, &r, err);
	if (rc == 0 && r.cur != NULL && fn(r.cur, r.links, r.n, arg) < 0)
		rc = -1;
	free(r.links);
	free(r.cur_url);
	return rc;
}

struct bonus_reader {
	void (*fn)(const char *url, double bonus, void *arg);
	void *arg;
};

static int bonus_line(char *line, size_t len, size_t lineno, void *arg,
		      struct lb_error *err)
{
	struct bonus_reader *r = arg;
	char *tab, *end;
	double v;

	(void)len;
	(void)lineno;
	(void)err;
	if (line[0] == '#' || (tab = strchr(line, '\t')) == NULL)
		return 0;
	*tab = '\0';
	v = strtod(tab + 1, &end);
	if (end == tab + 1 || !isfinite(v) || v < 0)
		return 0;
	r->fn(line, v, r->arg);
	return 0;
}

int links_read_bonus(const char *path,
		     void (*fn)(const char *url, double bonus, void *arg),
		     void *arg, struct lb_error *err)
{
	struct bonus_reader r = { fn, arg };

	return lb_file_read_lines(path, 1, bonus_line, &r, err);
}

struct bonus_writer {
	const struct page_list *tgt;
	const double *bonus;
	size_t n;
};

static int bonus_writer(FILE *f, void *arg, struct lb_error *err)
{
	const struct bonus_writer *w = arg;
	size_t t;

	(void)err;	/* write errors: the caller checks the stream */
	fputs("# linkbot bonuses: target_url\tbonus\n", f);
	for (t = 0; t < w->n && t < w->tgt->n; t++)
		if (strpbrk(w->tgt->docs[t]->url, "\t\r\n") == NULL)
			fprintf(f, "%s\t%.17g\n", w->tgt->docs[t]->url,
				w->bonus[t]);
	return 0;
}

int links_write_bonus(const char *path, const struct page_list *tgt,
		      const double *bonus, size_t n, struct lb_error *err)
{
	struct bonus_writer w = { tgt, bonus, n };

	return lb_file_write_stream(path, bonus_writer, &w, err);
}
