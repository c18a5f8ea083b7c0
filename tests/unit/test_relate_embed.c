/*
 * relate/ external embeddings against a real local server speaking the
 * OpenAI /v1/embeddings protocol (tests/lib/embed-server.py on a free
 * loopback port): batches, retries, bearer key, the content-hash cache.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/relate.h"

static char dir[] = "/tmp/linkbot-embed-XXXXXX";
static pid_t server = -1;
static char base[128], stats_url[128], cache[256];

static pid_t start_server(const char *key, const char *fail_first)
{
	char portfile[256], *port = NULL;
	struct lb_error err;
	pid_t pid;
	int i;

	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	unlink(portfile);
	pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		execlp("python3", "python3", "tests/lib/embed-server.py",
		       "--port-file", portfile, "--key", key, "--fail-first",
		       fail_first, "--max-seconds", "120", (char *)NULL);
		_exit(127);
	}
	lb_error_init(&err);
	for (i = 0; i < 200 && !lb_file_exists(portfile); i++)
		usleep(50000);
	if (lb_file_read(portfile, 64, &port, NULL, &err) == -1)
		return -1;
	snprintf(base, sizeof(base), "http://127.0.0.1:%s/v1", port);
	snprintf(stats_url, sizeof(stats_url), "http://127.0.0.1:%s/stats",
		 port);
	free(port);
	return pid;
}

static void stop_server(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
		server = -1;
	}
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(cache, sizeof(cache), "%s/cache/embeddings.bin", dir);
	server = start_server("sekret", "1");
	return server > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	stop_server();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	lb_buf_add(arg, p, size * n, NULL);
	return size * n;
}

/* A counter of the server's /stats. */
static int stat_of(const char *name)
{
	CURL *h = curl_easy_init();
	struct lb_buf b;
	cJSON *j;
	int v;

	lb_buf_init(&b, 1 << 16);
	curl_easy_setopt(h, CURLOPT_URL, stats_url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	j = cJSON_Parse(b.data);
	assert_non_null(j);
	v = cJSON_GetObjectItem(j, name)->valueint;
	cJSON_Delete(j);
	lb_buf_release(&b);
	return v;
}

static const char *words[3] = {
	"cats kitten purr whiskers feline mice",
	"sql database table index query transaction",
	"guitar strings chords frets capo strum",
};

enum { N = 24 };
static struct lb_doc docs[N];
static const struct lb_doc *p[N];

static void make_docs(void)
{
	char buf[256];
	size_t i;

	for (i = 0; i < N - 1; i++) {
		lb_doc_init(&docs[i]);
		snprintf(buf, sizeof(buf), "page %zu", i);
		docs[i].title = strdup(buf);
		snprintf(buf, sizeof(buf), "%s %s variant%zu", words[i % 3],
			 words[i % 3], i);
		docs[i].text = strdup(buf);
		p[i] = &docs[i];
	}
	lb_doc_init(&docs[N - 1]);	/* an empty page: no request */
	p[N - 1] = &docs[N - 1];
}

static void free_docs(void)
{
	size_t i;

	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

static int run(const char *key, int retries, struct lb_candidates *c,
	       struct lb_error *err)
{
	struct lb_relate_embed e = { .url = base, .model = "toy",
				     .api_key = key, .cache_path = cache,
				     .batch = 5, .retries = retries,
				     .timeout_ms = 5000 };
	struct lb_relate_input in = { .src = p, .n_src = N, .tgt = p,
				      .n_tgt = N };
	struct lb_relate_opts o = { .m = 4, .method = LB_RELATE_EMBED,
				    .embed = &e };

	lb_error_init(err);
	return relate_candidates(&in, &o, c, err);
}

static void test_embed_cache_retry(void **state)
{
	struct lb_candidates c, c2;
	struct lb_error err;
	size_t i, j;

	(void)state;
	make_docs();
	/* the first POST gets 503 and is retried */
	assert_int_equal(run("sekret", 2, &c, &err), 0);
	assert_int_equal(stat_of("failed"), 1);
	assert_int_equal(stat_of("inputs"), N - 1);	/* 23 in batches of 5 */
	assert_int_equal(stat_of("requests"), 1 + 5);
	for (i = 0; i < N - 1; i++)
		for (j = 0; j < 3; j++) {
			uint32_t t = c.target[i * 4 + j];

			assert_int_not_equal(t, i);
			assert_int_equal(t % 3, i % 3);
		}

	/* again: everything from the cache, nothing embedded */
	assert_int_equal(run("sekret", 2, &c2, &err), 0);
	assert_int_equal(stat_of("inputs"), N - 1);
	assert_memory_equal(c.target, c2.target, N * 4 * 4);
	assert_memory_equal(c.score, c2.score, N * 4 * 4);
	lb_candidates_release(&c2);

	/* one page changes: one input embedded */
	free(docs[4].text);
	docs[4].text = strdup("guitar strings chords frets");
	assert_int_equal(run("sekret", 2, &c2, &err), 0);
	assert_int_equal(stat_of("inputs"), N);
	assert_int_equal(c2.target[4 * 4] % 3, 2);	/* now a guitar page */
	lb_candidates_release(&c2);

	/* a wrong key fails at once with the status, no retry */
	free(docs[5].text);
	docs[5].text = strdup("uncached words");
	i = (size_t)stat_of("requests");
	assert_int_equal(run("wrong", 3, &c2, &err), -1);
	assert_int_equal(err.code, LB_EHTTP);
	assert_non_null(strstr(err.msg, "401"));
	assert_int_equal((size_t)stat_of("requests"), i + 1);

	/* server gone: cached pages still work, an uncached one fails */
	stop_server();
	free(docs[5].text);
	docs[5].text = strdup("guitar strings chords frets capo strum "
			      "guitar strings chords frets capo strum "
			      "variant5");	/* as first cached */
	assert_int_equal(run("sekret", 1, &c2, &err), 0);
	assert_memory_equal(c.target + 8 * 4, c2.target + 8 * 4, 4 * 4);
	lb_candidates_release(&c2);
	free(docs[5].text);
	docs[5].text = strdup("never seen");
	assert_int_equal(run("sekret", 1, &c2, &err), -1);
	assert_int_equal(err.code, LB_ENETWORK);
	lb_candidates_release(&c);
	free_docs();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed_cache_retry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
