/*
 * relate_html - labelled corpus lines through the product's own extractor
 * (extract_html(), as a crawl would see the pages), for the relate quality
 * benchmark.
 *
 *   relate_html < LIST > CORPUS
 *
 * LIST: lines "label<TAB>file<TAB>url" (bench/relate-corpus.py writes
 * them); CORPUS: lines "label<TAB>doc JSON" as relate_quality reads them.
 * Pages without text are skipped (reported on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/doc.h"
#include "linkbot/extract.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (n + 65536 > cap) {
			cap = 2 * cap + 65536;
			buf = realloc(buf, cap + 1);
			if (buf == NULL)
				exit(1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int main(void)
{
	char *line = NULL;
	size_t cap = 0, skipped = 0, kept = 0;
	struct lb_error err;

	lb_error_init(&err);
	while (getline(&line, &cap, stdin) > 0) {
		char *path, *url, *html, *json;
		size_t len;
		struct lb_doc d;

		line[strcspn(line, "\n")] = '\0';
		path = strchr(line, '\t');
		if (path == NULL || (url = strchr(path + 1, '\t')) == NULL)
			continue;
		*path++ = '\0';
		*url++ = '\0';
		html = slurp(path, &len);
		if (html == NULL) {
			perror(path);
			return 1;
		}
		lb_doc_init(&d);
		if (extract_html(html, len, url, "utf-8", &d, &err) == -1) {
			fprintf(stderr, "%s: %s\n", path, err.msg);
			return 1;
		}
		if (d.text == NULL) {
			skipped++;
		} else {
			json = lb_doc_to_json(&d, 1, 0);
			printf("%s\t%s\n", line, json);
			free(json);
			kept++;
		}
		lb_doc_release(&d);
		free(html);
	}
	free(line);
	fprintf(stderr, "relate_html: %zu pages, %zu without text skipped\n",
		kept, skipped);
	return 0;
}
