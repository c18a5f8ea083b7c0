/*
 * ngx_http_linkbot_module.c - linkbot's edge as a native nginx module.
 *
 * The answer rules are src/edge/answer.c (include/linkbot/answer.h), the
 * same C that `linkbot lookup` runs; this file only moves bytes between
 * nginx and those rules: it reads the store, sends the answers, and logs
 * pages not indexed (linkbot_log, $lb_side).
 *
 *   linkbot dir ROOT;    a directory store at ROOT: descriptors and pool
 *                        are read with read(2), pages are sent as files
 *                        (sendfile), gunzipped by nginx's gunzip filter for
 *                        clients without gzip ("gunzip on" in the location)
 *   linkbot s3;          an S3 store: descriptors by in-memory subrequest
 *                        to /_s3json/<key>; a page by internal redirect to
 *                        /_page/<key> (a proxy to the bucket), whose
 *                        403/404 go to a location with "linkbot miss;"
 *   linkbot miss;        the page is not in the bucket: decide again, read
 *                        random.json, answer random links or an empty list
 *   linkbot refused;     nginx refused the method or the body itself
 *                        (error_page 405 411 413): the same JSON answers
 *   linkbot_log PATH;    the side-crawl log: "time client endpoint url"
 *                        per page not indexed (also in $lb_side)
 *   linkbot_validate on; in the location proxying pages from the bucket:
 *                        nginx answers If-None-Match, If-Modified-Since,
 *                        If-Match and If-Unmodified-Since itself, from the
 *                        object's ETag and Last-Modified, as for a static
 *                        file (nginx skips them for an uncached proxied
 *                        answer, leaving them to the origin; the bucket is
 *                        asked without them: a 304/412/206 from it
 *                        could not be gunzipped nor told from a failure)
 *
 * Directory store fast path: for a url without a query the page ID does
 * not depend on the descriptor, so the module first opens
 * ROOT/<client>/<endpoint>/active-<variant>/<id>.json, through the state
 * marker the publisher keeps only while the endpoint is active with that
 * variant (docs/store.md): one open(2) checks the state and finds the page,
 * as static nginx does for a file. Such answers carry the file's ETag and
 * Last-Modified, as static files do. Anything else (no marker, no page, a
 * query, an error) takes the full sequence of answer.h.
 *
 * Hostile input: the request target is handed to answer.c as bytes with
 * its length; store keys are built there only from matched segments and
 * the hex page ID. Nothing here trusts a length it did not measure.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "linkbot/answer.h"

#define LB_MAX_OBJECT (4 << 20)	/* descriptors and pools, read whole */

enum lb_mode {
	LB_MODE_UNSET = 0,
	LB_MODE_DIR,
	LB_MODE_S3,
	LB_MODE_MISS,
	LB_MODE_REFUSED,
};

typedef struct {
	ngx_uint_t mode;
	ngx_str_t root;		/* NUL-terminated, without a trailing '/' */
	ngx_open_file_t *log;	/* linkbot_log: the side-crawl log */
	ngx_flag_t validate;	/* linkbot_validate */
} ngx_http_linkbot_loc_conf_t;

enum lb_step {
	LB_STEP_START = 0,
	LB_STEP_DESC,		/* waiting for the descriptor (s3) */
	LB_STEP_POOL,		/* waiting for random.json (s3) */
};

typedef struct {
	enum lb_step step;
	struct lb_edge_request req;
	struct lb_edge_route route;
	struct lb_edge_decision *dec;	/* the full path only (pool, cleanup) */
	/* the last subrequest's result */
	int sr_done;
	enum lb_edge_object sr_state;
	u_char *sr_body;
	size_t sr_len;
	/* the side-crawl record of this request, for $lb_side */
	ngx_str_t side;
} ngx_http_linkbot_ctx_t;

static ngx_int_t ngx_http_linkbot_preconf(ngx_conf_t *cf);
static ngx_int_t ngx_http_linkbot_postconf(ngx_conf_t *cf);
static ngx_int_t ngx_http_linkbot_init_process(ngx_cycle_t *cycle);
static void *ngx_http_linkbot_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_linkbot_merge_loc_conf(ngx_conf_t *cf, void *parent,
					     void *child);
static char *ngx_http_linkbot(ngx_conf_t *cf, ngx_command_t *cmd,
			      void *conf);
static char *ngx_http_linkbot_log(ngx_conf_t *cf, ngx_command_t *cmd,
				  void *conf);

static ngx_command_t ngx_http_linkbot_commands[] = {
	{ ngx_string("linkbot"),
	  NGX_HTTP_LOC_CONF | NGX_CONF_TAKE12,
	  ngx_http_linkbot,
	  NGX_HTTP_LOC_CONF_OFFSET,
	  0,
	  NULL },
	{ ngx_string("linkbot_log"),
	  NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF |
		  NGX_CONF_TAKE1,
	  ngx_http_linkbot_log,
	  NGX_HTTP_LOC_CONF_OFFSET,
	  0,
	  NULL },
	{ ngx_string("linkbot_validate"),
	  NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
	  ngx_conf_set_flag_slot,
	  NGX_HTTP_LOC_CONF_OFFSET,
	  offsetof(ngx_http_linkbot_loc_conf_t, validate),
	  NULL },
	ngx_null_command
};

static ngx_http_module_t ngx_http_linkbot_module_ctx = {
	ngx_http_linkbot_preconf,	/* preconfiguration */
	ngx_http_linkbot_postconf,	/* postconfiguration */
	NULL, NULL,			/* main conf */
	NULL, NULL,			/* server conf */
	ngx_http_linkbot_create_loc_conf,
	ngx_http_linkbot_merge_loc_conf,
};

ngx_module_t ngx_http_linkbot_module = {
	NGX_MODULE_V1,
	&ngx_http_linkbot_module_ctx,
	ngx_http_linkbot_commands,
	NGX_HTTP_MODULE,
	NULL,				/* init master */
	NULL,				/* init module */
	ngx_http_linkbot_init_process,
	NULL, NULL, NULL, NULL,
	NGX_MODULE_V1_PADDING
};

/* ---- random draws: splitmix64, seeded per worker ---- */

static uint64_t lb_rand_state;

static uint64_t lb_rand(void *arg)
{
	uint64_t z = (lb_rand_state += 0x9E3779B97F4A7C15ULL);

	(void)arg;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static ngx_int_t ngx_http_linkbot_init_process(ngx_cycle_t *cycle)
{
	struct timeval tv;

	(void)cycle;
	ngx_gettimeofday(&tv);
	lb_rand_state = ((uint64_t)tv.tv_sec << 20) ^ (uint64_t)tv.tv_usec ^
			((uint64_t)ngx_pid << 40) ^ (uint64_t)ngx_random();
	return NGX_OK;
}

/* ---- $lb_side ---- */

static ngx_int_t ngx_http_linkbot_side_var(ngx_http_request_t *r,
					   ngx_http_variable_value_t *v,
					   uintptr_t data)
{
	ngx_http_linkbot_ctx_t *ctx;

	(void)data;
	ctx = ngx_http_get_module_ctx(r->main, ngx_http_linkbot_module);
	if (ctx == NULL || ctx->side.len == 0) {
		v->not_found = 1;
		return NGX_OK;
	}
	v->data = ctx->side.data;
	v->len = ctx->side.len;
	v->valid = 1;
	v->no_cacheable = 1;
	v->not_found = 0;
	return NGX_OK;
}

static ngx_int_t ngx_http_linkbot_preconf(ngx_conf_t *cf)
{
	static ngx_str_t name = ngx_string("lb_side");
	ngx_http_variable_t *var;

	var = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_NOCACHEABLE);
	if (var == NULL)
		return NGX_ERROR;
	var->get_handler = ngx_http_linkbot_side_var;
	return NGX_OK;
}

/* ---- configuration ---- */

static void *ngx_http_linkbot_create_loc_conf(ngx_conf_t *cf)
{
	ngx_http_linkbot_loc_conf_t *c = ngx_pcalloc(cf->pool, sizeof(*c));

	if (c != NULL)
		c->validate = NGX_CONF_UNSET;
	return c;
}

static char *ngx_http_linkbot_merge_loc_conf(ngx_conf_t *cf, void *parent,
					     void *child)
{
	ngx_http_linkbot_loc_conf_t *p = parent, *c = child;

	(void)cf;
	if (c->root.data == NULL)
		c->root = p->root;
	if (c->log == NULL)
		c->log = p->log;
	ngx_conf_merge_value(c->validate, p->validate, 0);
	return NGX_CONF_OK;
}

static ngx_http_output_header_filter_pt lb_next_header_filter;

/*
 * linkbot_validate: the upstream module has set disable_not_modified (an
 * uncached proxied answer); a dynamic module's filter runs before nginx's
 * own, so the not-modified filter after it sees the page as a file.
 */
static ngx_int_t lb_header_filter(ngx_http_request_t *r)
{
	ngx_http_linkbot_loc_conf_t *lc =
		ngx_http_get_module_loc_conf(r, ngx_http_linkbot_module);

	if (lc->validate == 1 && r == r->main &&
	    r->headers_out.status == NGX_HTTP_OK)
		r->disable_not_modified = 0;
	return lb_next_header_filter(r);
}

static ngx_int_t ngx_http_linkbot_postconf(ngx_conf_t *cf)
{
	(void)cf;
	lb_next_header_filter = ngx_http_top_header_filter;
	ngx_http_top_header_filter = lb_header_filter;
	return NGX_OK;
}

static ngx_int_t ngx_http_linkbot_handler(ngx_http_request_t *r);

/*
 * linkbot_log PATH: pages not indexed, one line each ("time client
 * endpoint url"), written by the module itself (opened and reopened on
 * USR1 as nginx's logs are). The same records are in $lb_side for an
 * access_log; the module's own write costs nothing on the requests that
 * log nothing, where an access_log with if= is evaluated on every one.
 */
static char *ngx_http_linkbot_log(ngx_conf_t *cf, ngx_command_t *cmd,
				  void *conf)
{
	ngx_http_linkbot_loc_conf_t *lc = conf;
	ngx_str_t *v = cf->args->elts;

	(void)cmd;
	if (lc->log != NULL)
		return "is duplicate";
	lc->log = ngx_conf_open_file(cf->cycle, &v[1]);
	return lc->log == NULL ? NGX_CONF_ERROR : NGX_CONF_OK;
}

static char *ngx_http_linkbot(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
	ngx_http_linkbot_loc_conf_t *lc = conf;
	ngx_http_core_loc_conf_t *clcf;
	ngx_str_t *v = cf->args->elts;
	size_t n;

	(void)cmd;
	if (lc->mode != LB_MODE_UNSET)
		return "is duplicate";
	if (ngx_strcmp(v[1].data, "dir") == 0)
		lc->mode = LB_MODE_DIR;
	else if (ngx_strcmp(v[1].data, "s3") == 0)
		lc->mode = LB_MODE_S3;
	else if (ngx_strcmp(v[1].data, "miss") == 0)
		lc->mode = LB_MODE_MISS;
	else if (ngx_strcmp(v[1].data, "refused") == 0)
		lc->mode = LB_MODE_REFUSED;
	else
		return "wants dir ROOT, s3, miss or refused";
	if (cf->args->nelts == 3) {
		n = v[2].len;
		while (n > 1 && v[2].data[n - 1] == '/')
			n--;
		lc->root.data = ngx_pnalloc(cf->pool, n + 1);
		if (lc->root.data == NULL)
			return NGX_CONF_ERROR;
		ngx_memcpy(lc->root.data, v[2].data, n);
		lc->root.data[n] = '\0';
		lc->root.len = n;
	}
	if (lc->mode == LB_MODE_DIR && lc->root.data == NULL)
		return "dir wants the store's directory";
	clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
	clcf->handler = ngx_http_linkbot_handler;
	return NGX_CONF_OK;
}

/* ---- sending answers ---- */

static ngx_int_t lb_header(ngx_http_request_t *r, const char *name,
			   const char *value, ngx_table_elt_t **out)
{
	ngx_table_elt_t *h = ngx_list_push(&r->headers_out.headers);

	if (h == NULL)
		return NGX_ERROR;
	h->hash = 1;
	h->key.data = (u_char *)name;
	h->key.len = ngx_strlen(name);
	h->value.data = (u_char *)value;
	h->value.len = ngx_strlen(value);
	h->lowcase_key = NULL;
	if (out != NULL)
		*out = h;
	return NGX_OK;
}

/* Status and headers of a; Content-Type and Content-Encoding where the
 * filters look for them. */
static ngx_int_t lb_set_headers(ngx_http_request_t *r,
				const struct lb_edge_answer *a)
{
	size_t i;

	r->headers_out.status = (ngx_uint_t)a->status;
	for (i = 0; i < a->n_headers; i++) {
		const char *n = a->headers[i].name, *v = a->headers[i].value;
		if (ngx_strcasecmp((u_char *)n, (u_char *)"Content-Type") == 0) {
			r->headers_out.content_type.data = (u_char *)v;
			r->headers_out.content_type.len = ngx_strlen(v);
			r->headers_out.content_type_len =
				r->headers_out.content_type.len;
			continue;
		}
		if (lb_header(r, n, v,
			      ngx_strcasecmp((u_char *)n,
					     (u_char *)"Content-Encoding") == 0 ?
				      &r->headers_out.content_encoding :
				      NULL) != NGX_OK)
			return NGX_ERROR;
	}
	return NGX_OK;
}

static ngx_int_t lb_send_answer(ngx_http_request_t *r,
				const struct lb_edge_answer *a)
{
	ngx_buf_t *b;
	ngx_chain_t out;
	ngx_int_t rc;

	if (lb_set_headers(r, a) != NGX_OK)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	/* made here (random links drawn per request, errors): no validator,
	 * so If-Match and If-Unmodified-Since have nothing to hold against;
	 * ignored, as RFC 9110 13.2.1 asks, rather than nginx's 412 */
	r->disable_not_modified = 1;
	if (a->kind != LB_BODY_JSON || a->body == NULL) {
		r->headers_out.content_length_n = 0;
		r->header_only = 1;
		return ngx_http_send_header(r);
	}
	r->headers_out.content_length_n = (off_t)a->body_len;
	rc = ngx_http_send_header(r);
	if (rc == NGX_ERROR || rc > NGX_OK || r->header_only)
		return rc;
	b = ngx_create_temp_buf(r->pool, a->body_len);
	if (b == NULL)
		return NGX_ERROR;
	b->last = ngx_cpymem(b->pos, a->body, a->body_len);
	b->last_buf = (r == r->main) ? 1 : 0;
	b->last_in_chain = 1;
	out.buf = b;
	out.next = NULL;
	return ngx_http_output_filter(r, &out);
}

static ngx_int_t lb_send_failure(ngx_http_request_t *r)
{
	struct lb_edge_answer a;
	ngx_int_t rc;

	ngx_memzero(&a, sizeof(a));
	edge_failure(&a);
	rc = lb_send_answer(r, &a);
	edge_answer_release(&a);
	return rc;
}

/* ROOT/key, NUL-terminated, in the request's pool. */
static ngx_int_t lb_path(ngx_http_request_t *r, const char *key,
			 ngx_str_t *path)
{
	ngx_http_linkbot_loc_conf_t *lc =
		ngx_http_get_module_loc_conf(r, ngx_http_linkbot_module);
	size_t kl = ngx_strlen(key);
	u_char *p;

	path->data = ngx_pnalloc(r->pool, lc->root.len + kl + 2);
	if (path->data == NULL)
		return NGX_ERROR;
	p = ngx_cpymem(path->data, lc->root.data, lc->root.len);
	*p++ = '/';
	p = ngx_cpymem(p, key, kl);
	*p = '\0';
	path->len = (size_t)(p - path->data);
	return NGX_OK;
}

/*
 * Sends the file at path as the page answer. NGX_DECLINED when it does
 * not exist (ENOENT, ENOTDIR); a file that cannot be read is the store
 * failing (500). On the fast path (static_like) every failure declines:
 * the full path then decides (a marker refused by disable_symlinks, say).
 */
static ngx_int_t lb_send_file(ngx_http_request_t *r, ngx_str_t *path,
			      enum lb_edge_variant variant, int static_like)
{
	ngx_http_core_loc_conf_t *clcf =
		ngx_http_get_module_loc_conf(r, ngx_http_core_module);
	struct lb_edge_answer a;
	ngx_open_file_info_t of;
	ngx_buf_t *b;
	ngx_chain_t out;
	ngx_int_t rc;

	ngx_memzero(&of, sizeof(of));
	of.read_ahead = clcf->read_ahead;
	of.directio = clcf->directio;
	of.valid = clcf->open_file_cache_valid;
	of.min_uses = clcf->open_file_cache_min_uses;
	of.errors = clcf->open_file_cache_errors;
	of.events = clcf->open_file_cache_events;
	if (ngx_http_set_disable_symlinks(r, clcf, path, &of) != NGX_OK)
		return lb_send_failure(r);
	if (ngx_open_cached_file(clcf->open_file_cache, path, &of, r->pool) !=
	    NGX_OK) {
		if (static_like || of.err == NGX_ENOENT ||
		    of.err == NGX_ENOTDIR || of.err == NGX_ENAMETOOLONG)
			return NGX_DECLINED;
		ngx_log_error(NGX_LOG_ERR, r->connection->log, of.err,
			      "linkbot: cannot open \"%s\"", path->data);
		return lb_send_failure(r);
	}
	if (!of.is_file && static_like)
		return NGX_DECLINED;
	if (!of.is_file) {
		ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
			      "linkbot: \"%s\" is not a file", path->data);
		return lb_send_failure(r);
	}
	ngx_memzero(&a, sizeof(a));
	edge_page_answer(variant, &a);
	if (lb_set_headers(r, &a) != NGX_OK)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	r->headers_out.content_length_n = of.size;
	/* a Range is answered 206 as static nginx does (the gunzip filter
	 * turns it off for clients that take no gzip) */
	r->allow_ranges = 1;
	if (static_like) {
		r->headers_out.last_modified_time = of.mtime;
		if (ngx_http_set_etag(r) != NGX_OK)
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}
	b = ngx_calloc_buf(r->pool);
	if (b == NULL)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	b->file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));
	if (b->file == NULL)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	rc = ngx_http_send_header(r);
	if (rc == NGX_ERROR || rc > NGX_OK || r->header_only)
		return rc;
	b->file_pos = 0;
	b->file_last = of.size;
	b->in_file = b->file_last ? 1 : 0;
	b->last_buf = (r == r->main) ? 1 : 0;
	b->last_in_chain = 1;
	b->sync = b->in_file ? 0 : 1;
	b->file->fd = of.fd;
	b->file->name = *path;
	b->file->log = r->connection->log;
	b->file->directio = of.is_directio;
	out.buf = b;
	out.next = NULL;
	return ngx_http_output_filter(r, &out);
}

/* Reads a whole small object of a directory store into the pool. */
static enum lb_edge_object lb_read_object(ngx_http_request_t *r,
					  const char *key, u_char **data,
					  size_t *len)
{
	ngx_str_t path;
	ngx_file_info_t fi;
	ngx_fd_t fd;
	ssize_t n;
	size_t got = 0, size;
	enum lb_edge_object st = LB_OBJECT_FAILED;

	*data = NULL;
	*len = 0;
	if (lb_path(r, key, &path) != NGX_OK)
		return LB_OBJECT_FAILED;
	fd = ngx_open_file(path.data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
	if (fd == NGX_INVALID_FILE) {
		if (ngx_errno == NGX_ENOENT || ngx_errno == NGX_ENOTDIR ||
		    ngx_errno == NGX_ENAMETOOLONG)
			return LB_OBJECT_MISSING;
		ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
			      "linkbot: cannot open \"%s\"", path.data);
		return LB_OBJECT_FAILED;
	}
	if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR || !ngx_is_file(&fi) ||
	    ngx_file_size(&fi) > LB_MAX_OBJECT)
		goto out;
	size = (size_t)ngx_file_size(&fi);
	*data = ngx_pnalloc(r->pool, size + 1);
	if (*data == NULL)
		goto out;
	while (got < size) {
		n = read(fd, *data + got, size - got);
		if (n < 0 && ngx_errno == NGX_EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != size)
		goto out;
	(*data)[size] = '\0';
	*len = size;
	st = LB_OBJECT_OK;
out:
	if (st != LB_OBJECT_OK)
		ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
			      "linkbot: cannot read \"%s\"", path.data);
	ngx_close_file(fd);
	return st;
}

/* ---- the request ---- */

static void lb_dec_cleanup(void *data)
{
	edge_decision_release(data);
}

/*
 * The decision of the full path, allocated only there: the fast path's
 * request pool stays small (one block, as static nginx's).
 */
static ngx_int_t lb_dec_new(ngx_http_request_t *r, ngx_http_linkbot_ctx_t *ctx)
{
	ngx_pool_cleanup_t *cln = ngx_pool_cleanup_add(r->pool, 0);

	ctx->dec = ngx_pcalloc(r->pool, sizeof(*ctx->dec));
	if (cln == NULL || ctx->dec == NULL)
		return NGX_ERROR;
	cln->handler = lb_dec_cleanup;
	cln->data = ctx->dec;
	return NGX_OK;
}

static ngx_http_linkbot_ctx_t *lb_ctx_new(ngx_http_request_t *r)
{
	ngx_http_linkbot_ctx_t *ctx;
	ngx_table_elt_t *auth = r->headers_in.authorization;

	ctx = ngx_pcalloc(r->pool, sizeof(*ctx));
	if (ctx == NULL)
		return NULL;
	/* the raw target, as the client sent it (nginx keeps it) */
	ctx->req.target = (const char *)r->unparsed_uri.data;
	ctx->req.target_len = r->unparsed_uri.len;
	if (ctx->req.target == NULL) {
		ctx->req.target = "";
		ctx->req.target_len = 0;
	}
	ctx->req.method = (const char *)ngx_pnalloc(r->pool,
						    r->method_name.len + 1);
	if (ctx->req.method == NULL)
		return NULL;
	ngx_memcpy((u_char *)ctx->req.method, r->method_name.data,
		   r->method_name.len);
	((u_char *)ctx->req.method)[r->method_name.len] = '\0';
	if (auth != NULL) {
		ctx->req.authorization = (const char *)auth->value.data;
		ctx->req.authorization_len = auth->value.len;
	}
	ngx_http_set_ctx(r, ctx, ngx_http_linkbot_module);
	return ctx;
}

/* One line of the side-crawl log: "time record\n", one write(2). */
static void lb_write_side(ngx_http_request_t *r, const ngx_str_t *rec)
{
	ngx_http_linkbot_loc_conf_t *lc =
		ngx_http_get_module_loc_conf(r, ngx_http_linkbot_module);
	size_t tl = ngx_cached_http_log_iso8601.len;
	u_char *line, *p;

	if (lc->log == NULL || lc->log->fd == NGX_INVALID_FILE)
		return;
	line = ngx_pnalloc(r->pool, tl + rec->len + 2);
	if (line == NULL)
		return;
	p = ngx_cpymem(line, (u_char *)ngx_cached_http_log_iso8601.data, tl);
	*p++ = ' ';
	p = ngx_cpymem(p, rec->data, rec->len);
	*p++ = '\n';
	if (ngx_write_fd(lc->log->fd, line, (size_t)(p - line)) < 0)
		ngx_log_error(NGX_LOG_ALERT, r->connection->log, ngx_errno,
			      "linkbot: cannot write the side-crawl log");
}

/* Remembers the side-crawl record ($lb_side) and logs it (linkbot_log). */
static void lb_keep_side(ngx_http_request_t *r, ngx_http_linkbot_ctx_t *ctx)
{
	size_t n;

	if (ctx->dec->side == NULL)
		return;
	n = ngx_strlen(ctx->dec->side);
	ctx->side.data = ngx_pnalloc(r->pool, n);
	if (ctx->side.data == NULL)
		return;
	ngx_memcpy(ctx->side.data, ctx->dec->side, n);
	ctx->side.len = n;
	lb_write_side(r, &ctx->side);
}

/* The page is not indexed: random links, an empty list or {}. */
static ngx_int_t lb_answer_miss(ngx_http_request_t *r,
				ngx_http_linkbot_ctx_t *ctx,
				enum lb_edge_object st, const u_char *pool,
				size_t len)
{
	struct lb_edge_answer a;
	ngx_int_t rc;

	ngx_memzero(&a, sizeof(a));
	edge_miss(ctx->dec, st, (const char *)pool, len, lb_rand, NULL, &a);
	if (a.status == 200)
		lb_keep_side(r, ctx);
	rc = lb_send_answer(r, &a);
	edge_answer_release(&a);
	return rc;
}

static ngx_int_t lb_dir(ngx_http_request_t *r, ngx_http_linkbot_ctx_t *ctx)
{
	char id[LB_PAGEID_LEN + 1];
	u_char *text;
	size_t len;
	enum lb_edge_object st;
	ngx_str_t path;
	ngx_int_t rc;

	/* the fast path through the state marker */
	if (edge_fast_id(&ctx->req, &ctx->route, id) == 0) {
		ngx_http_linkbot_loc_conf_t *lc =
			ngx_http_get_module_loc_conf(r, ngx_http_linkbot_module);
		const char *m = ctx->route.variant == LB_EDGE_ENTERPRISE ?
					"active-enterprise/" : "active-standard/";
		size_t bl = ngx_strlen(ctx->route.base), ml = ngx_strlen(m);
		u_char *p;

		/* ROOT/<client>/<endpoint>/active-<variant>/<id>.json */
		path.data = ngx_pnalloc(r->pool, lc->root.len + bl + ml +
						 LB_PAGEID_LEN + 8);
		if (path.data == NULL)
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		p = ngx_cpymem(path.data, lc->root.data, lc->root.len);
		*p++ = '/';
		p = ngx_cpymem(p, ctx->route.base, bl);
		p = ngx_cpymem(p, m, ml);
		p = ngx_cpymem(p, id, LB_PAGEID_LEN);
		p = ngx_cpymem(p, ".json", 5);
		*p = '\0';
		path.len = (size_t)(p - path.data);
		rc = lb_send_file(r, &path, ctx->route.variant, 1);
		if (rc != NGX_DECLINED)
			return rc;
	}
	st = lb_read_object(r, ctx->route.desc_key, &text, &len);
	if (lb_dec_new(r, ctx) != NGX_OK)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	if (edge_decide(&ctx->req, &ctx->route, st, (const char *)text, len,
			ctx->dec) == 1)
		return lb_send_answer(r, &ctx->dec->answer);
	if (lb_path(r, ctx->dec->page_key, &path) != NGX_OK)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	rc = lb_send_file(r, &path, ctx->route.variant, 0);
	if (rc != NGX_DECLINED)
		return rc;
	text = NULL;
	len = 0;
	st = LB_OBJECT_MISSING;
	if (ctx->dec->needs_pool)
		st = lb_read_object(r, ctx->dec->pool_key, &text, &len);
	return lb_answer_miss(r, ctx, st, text, len);
}

/* An in-memory subrequest is done: keep what it found, resume the parent. */
static ngx_int_t lb_sr_done(ngx_http_request_t *sr, void *data, ngx_int_t rc)
{
	ngx_http_linkbot_ctx_t *ctx = data;
	ngx_uint_t status = sr->headers_out.status;
	ngx_chain_t *cl;
	size_t len = 0;
	u_char *p;

	ctx->sr_done = 1;
	ctx->sr_state = LB_OBJECT_FAILED;
	ctx->sr_body = NULL;
	ctx->sr_len = 0;
	sr->parent->write_event_handler = ngx_http_core_run_phases;
	if (rc == NGX_ERROR || rc >= NGX_HTTP_SPECIAL_RESPONSE ||
	    sr->connection->error)
		return rc;
	if (status == NGX_HTTP_NOT_FOUND || status == NGX_HTTP_FORBIDDEN) {
		ctx->sr_state = LB_OBJECT_MISSING;
		return rc;
	}
	if (status != NGX_HTTP_OK)
		return rc;
	for (cl = sr->out; cl != NULL; cl = cl->next)
		if (cl->buf != NULL && !cl->buf->in_file)
			len += (size_t)(cl->buf->last - cl->buf->pos);
	p = ngx_pnalloc(sr->parent->pool, len + 1);
	if (p == NULL)
		return rc;
	ctx->sr_body = p;
	for (cl = sr->out; cl != NULL; cl = cl->next)
		if (cl->buf != NULL && !cl->buf->in_file)
			p = ngx_cpymem(p, cl->buf->pos,
				       cl->buf->last - cl->buf->pos);
	*p = '\0';
	ctx->sr_len = len;
	ctx->sr_state = LB_OBJECT_OK;
	return rc;
}

/* Reads key from the bucket by subrequest; the handler runs again. */
static ngx_int_t lb_s3_get(ngx_http_request_t *r, ngx_http_linkbot_ctx_t *ctx,
			   const char *key, enum lb_step step)
{
	static const char pfx[] = "/_s3json/";
	ngx_http_post_subrequest_t *ps;
	ngx_http_request_t *sr;
	ngx_str_t uri;
	size_t kl = ngx_strlen(key);

	ps = ngx_palloc(r->pool, sizeof(*ps));
	uri.data = ngx_pnalloc(r->pool, sizeof(pfx) + kl);
	if (ps == NULL || uri.data == NULL)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	ngx_memcpy(uri.data, pfx, sizeof(pfx) - 1);
	ngx_memcpy(uri.data + sizeof(pfx) - 1, key, kl);
	uri.len = sizeof(pfx) - 1 + kl;
	ps->handler = lb_sr_done;
	ps->data = ctx;
	ctx->step = step;
	ctx->sr_done = 0;
	if (ngx_http_subrequest(r, &uri, NULL, &sr, ps,
				NGX_HTTP_SUBREQUEST_IN_MEMORY |
					NGX_HTTP_SUBREQUEST_WAITED) != NGX_OK)
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	/* a HEAD must still read the descriptor's body */
	sr->header_only = 0;
	/* the parent waits: one more reference, released by the
	 * finalization of NGX_DONE (the subrequest holds its own) */
	r->main->count++;
	return NGX_DONE;
}

static ngx_int_t lb_s3(ngx_http_request_t *r, ngx_http_linkbot_ctx_t *ctx,
		       int miss)
{
	static const char pfx[] = "/_page/";
	ngx_str_t uri;
	size_t kl;

	switch (ctx->step) {
	case LB_STEP_START:
		return lb_s3_get(r, ctx, ctx->route.desc_key, LB_STEP_DESC);
	case LB_STEP_DESC:
		if (!ctx->sr_done)
			return NGX_DONE;
		if (lb_dec_new(r, ctx) != NGX_OK)
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		if (edge_decide(&ctx->req, &ctx->route, ctx->sr_state,
				(const char *)ctx->sr_body, ctx->sr_len,
				ctx->dec) == 1)
			return lb_send_answer(r, &ctx->dec->answer);
		if (miss) {
			if (!ctx->dec->needs_pool)
				return lb_answer_miss(r, ctx, LB_OBJECT_MISSING,
						      NULL, 0);
			return lb_s3_get(r, ctx, ctx->dec->pool_key,
					 LB_STEP_POOL);
		}
		/* the page, proxied from the bucket; 403/404 -> miss */
		kl = ngx_strlen(ctx->dec->page_key);
		uri.data = ngx_pnalloc(r->pool, sizeof(pfx) + kl);
		if (uri.data == NULL)
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		ngx_memcpy(uri.data, pfx, sizeof(pfx) - 1);
		ngx_memcpy(uri.data + sizeof(pfx) - 1, ctx->dec->page_key, kl);
		uri.len = sizeof(pfx) - 1 + kl;
		return ngx_http_internal_redirect(r, &uri, NULL);
	case LB_STEP_POOL:
		if (!ctx->sr_done)
			return NGX_DONE;
		return lb_answer_miss(r, ctx, ctx->sr_state, ctx->sr_body,
				      ctx->sr_len);
	}
	return NGX_HTTP_INTERNAL_SERVER_ERROR;
}

static ngx_int_t ngx_http_linkbot_handler(ngx_http_request_t *r)
{
	ngx_http_linkbot_loc_conf_t *lc =
		ngx_http_get_module_loc_conf(r, ngx_http_linkbot_module);
	ngx_http_linkbot_ctx_t *ctx;
	struct lb_edge_answer a;
	ngx_int_t rc;

	ctx = ngx_http_get_module_ctx(r, ngx_http_linkbot_module);
	if (ctx == NULL) {
		if (r != r->main)
			return NGX_HTTP_NOT_FOUND;
		rc = ngx_http_discard_request_body(r);
		if (rc != NGX_OK)
			return rc;
		ctx = lb_ctx_new(r);
		if (ctx == NULL)
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		ngx_memzero(&a, sizeof(a));
		if (lc->mode == LB_MODE_REFUSED) {
			edge_refused(&ctx->req, &a);
			rc = lb_send_answer(r, &a);
			edge_answer_release(&a);
			return rc;
		}
		if (edge_route(&ctx->req, &ctx->route, &a) == 1) {
			rc = lb_send_answer(r, &a);
			edge_answer_release(&a);
			return rc;
		}
		if (lc->mode == LB_MODE_DIR)
			return lb_dir(r, ctx);
	}
	return lb_s3(r, ctx, lc->mode == LB_MODE_MISS);
}
