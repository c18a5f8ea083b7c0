/*
 * links.c - reading back links.tsv, the record between build and publish:
 * "source_url \t target_url \t type \t score" lines, grouped by source.
 */
#include <stdlib.h>
#include <string.h>

#include "linkbot/fsutil.h"
#include "linkbot/render.h"
#include "internal.h"

#define LINKS_MAX_BYTES ((size_t)4 << 30)

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

int pipeline_read_links(const char *path, const struct pages *pages,
			size_t max_links, links_visit_fn fn, void *arg,
			struct lb_error *err)
{
	struct lb_render_link *links = NULL;
	struct lb_error rerr;
	const struct lb_doc *cur = NULL;
	char *text = NULL, *line, *next, *cur_url = NULL;
	size_t n = 0, len = 0;
	int rc = -1;

	lb_error_init(&rerr);
	if (lb_file_read(path, LINKS_MAX_BYTES, &text, &len, &rerr) < 0) {
		if (rerr.code == LB_ENOTFOUND)
			return 1;
		return lb_error_set(err, rerr.code, "%s", rerr.msg);
	}
	links = calloc(max_links + 1, sizeof(*links));
	if (links == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (line = text; line != NULL && *line != '\0'; line = next) {
		char *f[4];
		long si, ti;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '#' || split_line(line, f) < 0)
			continue;
		if (cur_url == NULL || strcmp(cur_url, f[0]) != 0) {
			if (cur != NULL && fn(cur, links, n, arg) < 0)
				goto out;
			n = 0;
			cur_url = f[0];
			si = pages_find(pages, f[0]);
			cur = si >= 0 ? &pages->rec[si].doc : NULL;
		}
		ti = pages_find(pages, f[1]);
		if (cur == NULL || ti < 0 || n >= max_links)
			continue;
		links[n].doc = &pages->rec[ti].doc;
		links[n].type = strcmp(f[2], "random") == 0 ? LB_LINK_RANDOM :
							       LB_LINK_RELATED;
		n++;
	}
	if (cur != NULL && fn(cur, links, n, arg) < 0)
		goto out;
	rc = 0;
out:
	free(links);
	free(text);
	return rc;
}
