/*
 * million_site.c - write a synthetic site of N pages for bench/million.sh.
 *
 *     million_site DIR N VOCAB [SEED]
 *
 * VOCAB is a word list, one a line, most frequent first (million.sh makes
 * it from the Debian changelogs under /usr/share/doc). The site is a topic
 * model over it: T = N / 500 topics (at least 20), each with 60 words of
 * its own taken from the vocabulary's middle and tail; page i belongs to
 * topic i % T, leans on a second topic, and its text mixes common words
 * (the head of the vocabulary, Zipf-like), its topic's words and the second
 * topic's, in 3-6 paragraphs of sentences. Each page has a <title>, an
 * <h1>, a nav, and five links to pages of its topic, so relatedness has
 * something true to find and no two pages are the same.
 *
 * Written under DIR/htdocs:
 *     blog/<i / 1000>/<slug>-<i>.html          the pages (1000 to a folder)
 *     sitemaps/sitemap-<k>.xml                 50,000 URLs each
 *     sitemap_index.xml, robots.txt, index.html
 * URLs in sitemaps start with the token @ORIGIN@, which the nginx of
 * million.sh replaces on the fly (sub_filter), so the files never need the
 * port and the tree is served in place. DIR/site.conf is that include.
 *
 * Deterministic: the same N, VOCAB and SEED give the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOPIC_WORDS 60
#define COMMON 400		/* the head of the vocabulary: everyday words */
#define PER_SITEMAP 50000
#define LINKS 5

static char **vocab;
static size_t n_vocab;

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: fast, good enough, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(size_t n)
{
	return (size_t)(rnd() % n);
}

/* Zipf-like rank in [0, n): the product of two uniforms leans to 0. */
static size_t zipf(size_t n)
{
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	double v = (double)(rnd() >> 11) / 9007199254740992.0;

	return (size_t)(u * u * v * (double)n);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "million_site: %s '%s': %s\n", what, path,
		strerror(errno));
	exit(1);
}

static void load_vocab(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0;

	if (f == NULL)
		die("cannot open", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\r\n");

		if (len < 2)
			continue;
		line[len] = '\0';
		if (n_vocab == cap) {
			cap = cap ? cap * 2 : 4096;
			vocab = realloc(vocab, cap * sizeof(*vocab));
			if (vocab == NULL)
				die("out of memory reading", path);
		}
		vocab[n_vocab++] = strdup(line);
	}
	fclose(f);
	if (n_vocab < COMMON + 2 * TOPIC_WORDS) {
		fprintf(stderr, "million_site: '%s': %zu words, want at least %d\n",
			path, n_vocab, COMMON + 2 * TOPIC_WORDS);
		exit(1);
	}
}

static void mkdir_p(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("cannot create", path);
}

static FILE *create(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		die("cannot create", path);
	return f;
}

static void finish(FILE *f, const char *path)
{
	if (ferror(f) || fclose(f) != 0)
		die("cannot write", path);
}

/* Topic t's words: indices into vocab, fixed by t alone. */
static size_t topic_word(size_t t, size_t j)
{
	uint64_t saved = rng_state;
	size_t w;

	rng_state = (uint64_t)t * 1000003u + j * 7919u + 17;
	w = COMMON + below(n_vocab - COMMON);
	rng_state = saved;
	return w;
}

static const char *pick(size_t t, size_t t2)
{
	size_t r = below(100);

	if (r < 45)
		return vocab[zipf(COMMON)];
	if (r < 85)
		return vocab[topic_word(t, zipf(TOPIC_WORDS))];
	return vocab[topic_word(t2, zipf(TOPIC_WORDS))];
}

static void slug_of(char *out, size_t cap, size_t i, size_t t)
{
	snprintf(out, cap, "%s-%s-%zu", vocab[topic_word(t, i % 7)],
		 vocab[topic_word(t, 7 + i % 5)], i);
}

static void page_path(char *out, size_t cap, size_t i, size_t t)
{
	char slug[160];

	slug_of(slug, sizeof(slug), i, t);
	snprintf(out, cap, "/blog/%zu/%s.html", i / 1000, slug);
}

static void write_page(const char *root, size_t i, size_t n, size_t n_topics)
{
	char rel[256], path[1024], title[256], link[256];
	size_t t = i % n_topics, t2 = (t * 31 + 7 + i / n_topics) % n_topics;
	size_t p, s, w, k, paras, sentences, words;
	FILE *f;

	page_path(rel, sizeof(rel), i, t);
	snprintf(path, sizeof(path), "%s/htdocs%s", root, rel);
	snprintf(title, sizeof(title), "%s %s and %s, note %zu",
		 vocab[topic_word(t, i % 7)], vocab[topic_word(t, 7 + i % 5)],
		 vocab[topic_word(t2, i % 3)], i);
	title[0] = (char)(title[0] >= 'a' && title[0] <= 'z' ?
			  title[0] - 32 : title[0]);
	f = create(path);
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>%s | Million</title>"
		   "<meta name=\"description\" content=\"A note on %s and %s.\">"
		   "</head>\n<body><nav><a href=\"/\">Home</a> "
		   "<a href=\"/blog/%zu/\">Archive %zu</a> "
		   "<a href=\"/about.html\">About</a></nav>\n<main><article>"
		   "<h1>%s</h1>\n",
		title, vocab[topic_word(t, 0)], vocab[topic_word(t, 1)],
		i / 1000, i / 1000, title);
	paras = 3 + below(4);
	for (p = 0; p < paras; p++) {
		fputs("<p>", f);
		sentences = 2 + below(4);
		for (s = 0; s < sentences; s++) {
			words = 6 + below(12);
			for (w = 0; w < words; w++) {
				const char *word = pick(t, t2);

				if (w == 0)
					fprintf(f, "%c%s", word[0] >= 'a' && word[0] <= 'z' ?
						word[0] - 32 : word[0], word + 1);
				else
					fprintf(f, " %s", word);
			}
			fputs(s + 1 < sentences ? ". " : ".", f);
		}
		fputs("</p>\n", f);
	}
	fputs("<h2>Related notes</h2><ul>", f);
	for (k = 1; k <= LINKS; k++) {
		/* pages of the same topic: i +- multiples of n_topics */
		size_t j = (i + k * n_topics * (1 + below(50))) % n;

		j -= j % n_topics;
		j += t;
		if (j >= n)
			j = t;
		page_path(link, sizeof(link), j, t);
		fprintf(f, "<li><a href=\"%s\">note %zu</a></li>", link, j);
	}
	fputs("</ul></article></main>\n<footer>Million, a synthetic site</footer>"
	      "</body></html>\n", f);
	finish(f, path);
}

int main(int argc, char **argv)
{
	char path[1024], rel[256];
	const char *root;
	size_t n, n_topics, i, k, n_maps;
	FILE *f, *map = NULL;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: million_site DIR N VOCAB [SEED]\n");
		return 2;
	}
	root = argv[1];
	n = strtoul(argv[2], NULL, 10);
	if (n < 10) {
		fprintf(stderr, "million_site: N must be at least 10\n");
		return 2;
	}
	load_vocab(argv[3]);
	rng_state = argc == 5 ? strtoull(argv[4], NULL, 10) : 1;
	n_topics = n / 500 < 20 ? 20 : n / 500;
	n_maps = (n + PER_SITEMAP - 1) / PER_SITEMAP;

	mkdir_p(root);
	snprintf(path, sizeof(path), "%s/htdocs", root);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/htdocs/blog", root);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/htdocs/sitemaps", root);
	mkdir_p(path);

	for (i = 0; i < n; i++) {
		if (i % 1000 == 0) {
			snprintf(path, sizeof(path), "%s/htdocs/blog/%zu", root,
				 i / 1000);
			mkdir_p(path);
		}
		if (i % PER_SITEMAP == 0) {
			if (map != NULL) {
				fputs("</urlset>\n", map);
				finish(map, path);
			}
			snprintf(path, sizeof(path),
				 "%s/htdocs/sitemaps/sitemap-%zu.xml", root,
				 i / PER_SITEMAP);
			map = create(path);
			fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
			      map);
		}
		page_path(rel, sizeof(rel), i, i % n_topics);
		fprintf(map, "<url><loc>@ORIGIN@%s</loc><lastmod>2026-11-01</lastmod></url>\n",
			rel);
		write_page(root, i, n, n_topics);
	}
	fputs("</urlset>\n", map);
	snprintf(path, sizeof(path), "%s/htdocs/sitemaps/sitemap-%zu.xml", root,
		 (n - 1) / PER_SITEMAP);
	finish(map, path);

	snprintf(path, sizeof(path), "%s/htdocs/sitemap_index.xml", root);
	f = create(path);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n", f);
	for (k = 0; k < n_maps; k++)
		fprintf(f, "<sitemap><loc>@ORIGIN@/sitemaps/sitemap-%zu.xml</loc></sitemap>\n", k);
	fputs("</sitemapindex>\n", f);
	finish(f, path);

	snprintf(path, sizeof(path), "%s/htdocs/robots.txt", root);
	f = create(path);
	fputs("User-agent: *\nDisallow: /private/\n"
	      "Sitemap: @ORIGIN@/sitemap_index.xml\n", f);
	finish(f, path);

	snprintf(path, sizeof(path), "%s/htdocs/index.html", root);
	f = create(path);
	fputs("<!DOCTYPE html><html lang=\"en\"><head><title>Million</title></head>"
	      "<body><h1>Million</h1><p><a href=\"/sitemap_index.xml\">sitemap</a></p>"
	      "</body></html>\n", f);
	finish(f, path);

	/* nginx include: serve in place; @ORIGIN@ replaced on the fly */
	snprintf(path, sizeof(path), "%s/site.conf", root);
	f = create(path);
	fputs("types { text/html html; application/xml xml; text/plain txt; }\n"
	      "absolute_redirect off;\n"
	      "location ~ \\.(xml|txt)$ {\n"
	      "\tsub_filter_types application/xml text/plain;\n"
	      "\tsub_filter_once off;\n"
	      "\tsub_filter '@ORIGIN@' 'http://$http_host';\n"
	      "}\n"
	      "location / { try_files $uri $uri/ =404; }\n", f);
	finish(f, path);
	printf("%zu pages, %zu topics, %zu sitemaps, %zu words\n", n, n_topics,
	       n_maps, n_vocab);
	return 0;
}
