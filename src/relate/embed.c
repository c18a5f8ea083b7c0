/*
 * embed.c - page vectors from an OpenAI-compatible /v1/embeddings server
 * (llama.cpp server, Ollama, vLLM, a hosted API).
 *
 * Design notes
 *
 * Input of a page: title, description and text joined by newlines, cut
 * to max_chars bytes at a UTF-8 boundary. Its key is SHA-256 over
 * "model NUL input": the same text under the same model is never embedded
 * twice, and an edited page is embedded again.
 *
 * Cache file (cache_path): records of [32-byte key][u32 dim][dim floats],
 * native byte order, read whole at start, rewritten atomically (tmp +
 * rename) with the old records plus the new ones when anything was
 * embedded. Entries of pages that disappeared stay (another endpoint may
 * share the file); delete the file to start afresh.
 *
 * Requests: POST <url>/embeddings {"model": ..., "input": [batch]} with
 * "Authorization: Bearer <key>" when a key is set; the answer's
 * data[].embedding are placed by data[].index. Network errors, 429 and
 * 5xx are retried with exponential backoff (200 ms, 400 ms, ...; the rule
 * is linkbot/retry.h's); other statuses fail at once. Every vector must
 * have the same dimension.
 * A page with no text at all gets a zero vector (scores 0) and no request.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/log.h"
#include "linkbot/retry.h"
#include "relate_int.h"

#define KEY_LEN 32
#define BODY_CAP (256u << 20)	/* answer of one batch */
#define DIM_CAP 65536

struct rec {
	unsigned char key[KEY_LEN];
	uint32_t dim;
	const float *v;		/* into the cache buffer or new vectors */
};

struct cache {
	char *file;		/* the file as read (owns old vectors) */
	struct rec *r;		/* sorted by key once loaded */
	size_t n, cap;
};

static int rec_cmp(const void *a, const void *b)
{
	return memcmp(((const struct rec *)a)->key,
		      ((const struct rec *)b)->key, KEY_LEN);
}

static int cache_push(struct cache *c, const unsigned char *key,
		      uint32_t dim, const float *v)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct rec *r = realloc(c->r, cap * sizeof(*r));

		if (r == NULL)
			return -1;
		c->r = r;
		c->cap = cap;
	}
	memcpy(c->r[c->n].key, key, KEY_LEN);
	c->r[c->n].dim = dim;
	c->r[c->n].v = v;
	c->n++;
	return 0;
}

static int cache_load(struct cache *c, const char *path, struct lb_error *err)
{
	size_t len = 0, at = 0;
	struct lb_error e2;

	lb_error_init(&e2);
	if (lb_file_read(path, (size_t)4 << 30, &c->file, &len, &e2) == -1) {
		if (e2.code == LB_ENOTFOUND)
			return 0;
		return lb_error_set(err, e2.code, "%s", e2.msg);
	}
	while (at + KEY_LEN + 4 <= len) {
		uint32_t dim;

		memcpy(&dim, c->file + at + KEY_LEN, 4);
		if (dim == 0 || dim > DIM_CAP ||
		    at + KEY_LEN + 4 + (size_t)dim * 4 > len)
			break;
		/* the file buffer is malloc'd: float-aligned when the
		 * record sizes are multiples of 4, which they are */
		if (cache_push(c, (unsigned char *)c->file + at, dim,
			       (const float *)(void *)(c->file + at +
						       KEY_LEN + 4)) == -1)
			return lb_error_set(err, LB_ENOMEM, "embedding cache");
		at += KEY_LEN + 4 + (size_t)dim * 4;
	}
	if (at != len)
		log_warnx("embedding cache '%s': %zu trailing bytes ignored",
			  path, len - at);
	qsort(c->r, c->n, sizeof(*c->r), rec_cmp);
	return 0;
}

static const struct rec *cache_find(const struct cache *c, size_t n_old,
				    const unsigned char *key)
{
	struct rec k;

	if (n_old == 0)
		return NULL;
	memcpy(k.key, key, KEY_LEN);
	return bsearch(&k, c->r, n_old, sizeof(*c->r), rec_cmp);
}

static int cache_save(const struct cache *c, const char *path,
		      struct lb_error *err)
{
	struct lb_buf b;
	size_t i;
	int rc = -1;

	lb_buf_init(&b, (size_t)8 << 30);
	for (i = 0; i < c->n; i++)
		if (lb_buf_add(&b, c->r[i].key, KEY_LEN, err) == -1 ||
		    lb_buf_add(&b, &c->r[i].dim, 4, err) == -1 ||
		    lb_buf_add(&b, c->r[i].v, (size_t)c->r[i].dim * 4, err) ==
			    -1)
			goto out;
	rc = lb_file_write_atomic(path, b.data ? b.data : "", b.len, err);
out:
	lb_buf_release(&b);
	return rc;
}

/* ---- input and key of a page ---- */

static char *page_input(const struct lb_doc *d, const char *text, size_t max)
{
	const char *part[3] = { d->title, d->description, text };
	size_t len = 0, i, k;
	char *s = malloc(max + 1);

	if (s == NULL)
		return NULL;
	for (i = 0; i < 3; i++) {
		if (part[i] == NULL || *part[i] == '\0')
			continue;
		if (len && len < max)
			s[len++] = '\n';
		k = strlen(part[i]);
		if (k > max - len)
			k = max - len;
		memcpy(s + len, part[i], k);
		len += k;
	}
	/* do not cut a UTF-8 sequence */
	if (len == max)
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	s[len] = '\0';
	return s;
}

static int page_key(const char *model, const char *input,
		    unsigned char key[KEY_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;
	int ok;

	if (ctx == NULL)
		return -1;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, model, strlen(model) + 1) &&
	     EVP_DigestUpdate(ctx, input, strlen(input)) &&
	     EVP_DigestFinal_ex(ctx, key, &n);
	EVP_MD_CTX_free(ctx);
	return ok && n == KEY_LEN ? 0 : -1;
}

/* ---- HTTP ---- */

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct lb_buf *b = arg;

	return lb_buf_add(b, p, size * n, NULL) == -1 ? 0 : size * n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* POST body; *status and the answer in ans. Returns the CURLcode: not
 * CURLE_OK, no answer at all (why says why). */
static int post(CURL *h, const char *url, struct curl_slist *hdr,
		const char *body, long timeout_ms, struct lb_buf *ans,
		long *status, char *why, size_t why_len)
{
	CURLcode cc;

	lb_buf_reset(ans);
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, ans);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		snprintf(why, why_len, "%s", curl_easy_strerror(cc));
		return (int)cc;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	return CURLE_OK;
}

/* Parses the answer into out[idx[k] * dim ...] for k < nb. */
static int parse_answer(const char *body, size_t nb, const size_t *idx,
			float *vec, size_t *dim, struct lb_error *err)
{
	cJSON *root = cJSON_Parse(body), *data, *it;
	size_t got = 0;
	int rc = -1;

	data = root ? cJSON_GetObjectItemCaseSensitive(root, "data") : NULL;
	if (!cJSON_IsArray(data)) {
		lb_error_set(err, LB_EPARSE, "embeddings: no data array");
		goto out;
	}
	cJSON_ArrayForEach(it, data) {
		cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "embedding");
		cJSON *ix = cJSON_GetObjectItemCaseSensitive(it, "index");
		size_t k = got, n = 0;
		cJSON *x;

		if (cJSON_IsNumber(ix))
			k = (size_t)ix->valuedouble;
		if (!cJSON_IsArray(e) || k >= nb) {
			lb_error_set(err, LB_EPARSE,
				     "embeddings: bad item %zu", got);
			goto out;
		}
		n = (size_t)cJSON_GetArraySize(e);
		if (*dim == 0) {
			if (n == 0 || n > DIM_CAP) {
				lb_error_set(err, LB_EPARSE,
					     "embeddings: dimension %zu", n);
				goto out;
			}
			*dim = n;
		}
		if (n != *dim) {
			lb_error_set(err, LB_EPARSE,
				     "embeddings: dimension %zu, expected %zu",
				     n, *dim);
			goto out;
		}
		n = 0;
		cJSON_ArrayForEach(x, e)
			vec[idx[k] * *dim + n++] =
				cJSON_IsNumber(x) ? (float)x->valuedouble : 0;
		got++;
	}
	if (got != nb) {
		lb_error_set(err, LB_EPARSE, "embeddings: %zu of %zu vectors",
			     got, nb);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

int embed_vectors(const struct lb_doc *const *docs, size_t n,
		  const struct lb_text_source *src,
		  const struct lb_relate_embed *cfg, float **out, size_t *dim,
		  struct lb_error *err)
{
	size_t batch = cfg->batch ? cfg->batch : 32;
	size_t max = cfg->max_chars ? cfg->max_chars : 8000;
	int retries = cfg->retries > 0 ? cfg->retries : 3;
	/* transport errors, 429 and 5xx: 200 ms, 400 ms, ... 12.8 s */
	struct lb_retry_policy policy = {
		.retries = { [LB_RETRY_TRANSPORT] = retries,
			     [LB_RETRY_TIMEOUT] = retries,
			     [LB_RETRY_THROTTLED] = retries,
			     [LB_RETRY_UNAVAILABLE] = retries,
			     [LB_RETRY_SERVER] = retries },
		.first_ms = 200, .cap_ms = 200L << 6,
	};
	long timeout = cfg->timeout_ms > 0 ? cfg->timeout_ms : 60000;
	const char *model = cfg->model ? cfg->model : "";
	struct cache c = { 0 };
	char **input = NULL, *url = NULL;
	unsigned char (*key)[KEY_LEN] = NULL;
	size_t *todo = NULL, n_todo = 0, n_old, i, d = 0, done, empty = 0;
	float *vec = NULL, *fresh = NULL;
	struct curl_slist *hdr = NULL;
	struct lb_buf ans;
	CURL *h = NULL;
	void *reader = NULL;
	unsigned char *blank = NULL;
	int rc = -1;

	*out = NULL;
	*dim = 0;
	lb_buf_init(&ans, BODY_CAP);
	if (cfg->url == NULL || *cfg->url == '\0')
		return lb_error_set(err, LB_ECONFIG, "embeddings: no url");
	if (cfg->cache_path && cache_load(&c, cfg->cache_path, err) == -1)
		goto out;
	n_old = c.n;
	input = calloc(n + 1, sizeof(*input));
	key = malloc((n + 1) * sizeof(*key));
	todo = malloc((n + 1) * sizeof(*todo));
	blank = calloc(n + 1, 1);
	if (input == NULL || key == NULL || todo == NULL || blank == NULL)
		goto nomem;
	if (src && (reader = src->open(src->arg, err)) == NULL)
		goto out;

	/* keys; the dimension from any cached page; only the inputs still
	 * to embed stay in memory */
	for (i = 0; i < n; i++) {
		const struct rec *r;
		char *text = NULL;

		if (reader && src->get(reader, docs[i], &text, NULL, err) == -1)
			goto out;
		input[i] = page_input(docs[i], reader ? text : docs[i]->text,
				      max);
		free(text);
		if (input[i] == NULL || page_key(model, input[i], key[i]) == -1)
			goto nomem;
		r = NULL;
		if (*input[i] == '\0') {
			blank[i] = 1;
			empty++;
		} else if ((r = cache_find(&c, n_old, key[i])) == NULL ||
			   (d != 0 && r->dim != d)) {
			todo[n_todo++] = i;
			continue;
		} else {
			d = r->dim;
		}
		free(input[i]);
		input[i] = NULL;
	}
	log_info("embeddings: %zu pages: %zu from the cache, %zu empty, %zu "
		 "to embed", n, n - n_todo - empty, empty, n_todo);

	if (n_todo) {
		size_t len = strlen(cfg->url);

		url = malloc(len + sizeof("/embeddings"));
		h = curl_easy_init();
		if (url == NULL || h == NULL)
			goto nomem;
		memcpy(url, cfg->url, len);
		while (len && url[len - 1] == '/')
			len--;
		memcpy(url + len, "/embeddings", sizeof("/embeddings"));
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		if (cfg->api_key && *cfg->api_key) {
			struct lb_buf a;

			lb_buf_init(&a, 8192);
			if (lb_buf_printf(&a, err, "Authorization: Bearer %s",
					  cfg->api_key) == -1)
				goto out;
			hdr = curl_slist_append(hdr, a.data);
			lb_buf_release(&a);
		}
	}
	for (done = 0; done < n_todo; done += batch) {
		size_t nb = n_todo - done < batch ? n_todo - done : batch;
		size_t bd = d, k;
		cJSON *req = cJSON_CreateObject(), *arr;
		char *body, why[256];
		long status = 0;
		int try;

		if (req == NULL)
			goto nomem;
		cJSON_AddStringToObject(req, "model", model);
		arr = cJSON_AddArrayToObject(req, "input");
		for (k = 0; k < nb; k++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(
						     input[todo[done + k]]));
		body = cJSON_PrintUnformatted(req);
		cJSON_Delete(req);
		if (body == NULL)
			goto nomem;
		for (try = 0;; try++) {
			int r = post(h, url, hdr, body, timeout, &ans, &status,
				     why, sizeof(why));
			enum lb_retry_class cls;

			if (r == 0 && status == 200)
				break;
			cls = lb_retry_classify(r, status);
			if (r == 0 && cls == LB_RETRY_FINAL) {
				lb_error_set(err, LB_EHTTP,
					     "embeddings: '%s' answered %ld: "
					     "%.200s", url, status,
					     ans.data ? ans.data : "");
				free(body);
				goto out;
			}
			if (r == 0)
				snprintf(why, sizeof(why), "HTTP %ld", status);
			if (!lb_retry_allowed(&policy, cls, try)) {
				lb_error_set(err, r ? LB_ENETWORK : LB_EHTTP,
					     "embeddings: '%s': %s after %d "
					     "tries", url, why, try + 1);
				free(body);
				goto out;
			}
			log_warnx("embeddings: '%s': %s, retrying", url, why);
			sleep_ms(lb_retry_wait_ms(&policy, cls, try, -1,
						  0));
		}
		free(body);
		if (fresh == NULL) {
			/* the first answer fixes the dimension */
			cJSON *root = cJSON_Parse(ans.data);
			cJSON *e = cJSON_GetArrayItem(
				cJSON_GetObjectItemCaseSensitive(root, "data"),
				0);

			e = cJSON_GetObjectItemCaseSensitive(e, "embedding");
			if (bd == 0 && cJSON_IsArray(e))
				bd = (size_t)cJSON_GetArraySize(e);
			cJSON_Delete(root);
			if (bd == 0 || bd > DIM_CAP) {
				lb_error_set(err, LB_EPARSE,
					     "embeddings: no vector in answer");
				goto out;
			}
			d = bd;
			fresh = calloc(n_todo * d, sizeof(*fresh));
			if (fresh == NULL)
				goto nomem;
		}
		{
			size_t *idx = malloc(nb * sizeof(*idx));

			if (idx == NULL)
				goto nomem;
			for (k = 0; k < nb; k++)
				idx[k] = done + k;
			bd = d;
			if (parse_answer(ans.data, nb, idx, fresh, &bd, err) ==
			    -1) {
				free(idx);
				goto out;
			}
			free(idx);
		}
	}

	if (d == 0)
		d = 1;		/* nothing to embed at all: zero vectors */
	vec = calloc(n * d + 1, sizeof(*vec));
	if (vec == NULL)
		goto nomem;
	for (i = 0, done = 0; i < n; i++) {
		const struct rec *r;

		if (done < n_todo && todo[done] == i) {
			memcpy(vec + i * d, fresh + done * d,
			       d * sizeof(*vec));
			if (cfg->cache_path &&
			    cache_push(&c, key[i], (uint32_t)d,
				       fresh + done * d) == -1)
				goto nomem;
			done++;
		} else if (!blank[i] && (r = cache_find(&c, n_old, key[i])))
			memcpy(vec + i * d, r->v, d * sizeof(*vec));
	}
	if (cfg->cache_path && c.n > n_old) {
		qsort(c.r, c.n, sizeof(*c.r), rec_cmp);
		if (cache_save(&c, cfg->cache_path, err) == -1)
			goto out;
	}
	rows_normalize(vec, n, d);
	*out = vec;
	*dim = d;
	vec = NULL;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "embeddings of %zu pages", n);
out:
	if (input)
		for (i = 0; i < n; i++)
			free(input[i]);
	free(input);
	free(blank);
	if (reader)
		src->close(reader);
	free(key);
	free(todo);
	free(vec);
	free(fresh);
	free(url);
	free(c.file);
	free(c.r);
	curl_slist_free_all(hdr);
	if (h)
		curl_easy_cleanup(h);
	lb_buf_release(&ans);
	return rc;
}
