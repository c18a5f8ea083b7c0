/*
 * preview.c - linkbot preview: serve a store through the real edge.
 *
 * Renders templates/nginx-edge.conf.in into a prefix directory (a new
 * /tmp/linkbot-preview.XXXXXX unless --prefix is given) and execs nginx in
 * the foreground (daemon off) with linkbot's nginx module
 * (ngx_http_linkbot_module.so, src/edge/nginx/). The template is found
 * through $LINKBOT_SHARE, else next to the executable (build/linkbot -> the
 * source tree; bin/linkbot -> share/linkbot). nginx is $LINKBOT_NGINX or
 * "nginx" on the PATH; the module is $LINKBOT_EDGE_MODULE, else the one
 * next to the executable (build/), in the share directory, or in nginx's
 * modules directory.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <netdb.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkbot/cmd.h"
#include "linkbot/fsutil.h"

#define PREVIEW_TEMPLATE "templates/nginx-edge.conf.in"
#define PREVIEW_MAX_TEMPLATE (1 << 20)
#define MODULE_NAME "ngx_http_linkbot_module.so"
#define SYSTEM_MODULES "/usr/lib/nginx/modules"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot preview [options]\n\n"
		"Serves a store through the edge (nginx + linkbot's module) in the\n"
		"foreground, exactly as a CDN would: every route, status and header of the API.\n\n"
		"  -s, --store LOCATION   a directory, or s3://bucket/prefix\n"
		"                         (default: public)\n"
		"  -l, --listen HOST:PORT (default: 127.0.0.1:8080; a bare PORT\n"
		"                         listens on 127.0.0.1)\n"
		"      --s3-endpoint URL  bucket endpoint, path style (default:\n"
		"                         $AWS_ENDPOINT_URL, else\n"
		"                         https://s3.amazonaws.com); the bucket must\n"
		"                         allow anonymous reads of the prefix\n"
		"      --prefix DIR       nginx prefix for the config, logs, pid\n"
		"                         (default: a new /tmp/linkbot-preview.*)\n"
		"      --workers N        nginx worker processes (default: auto)\n"
		"  -h, --help\n\n"
		"Pages not indexed are logged to PREFIX/logs/unindexed.log as\n"
		"\"time client endpoint url\" (docs/edge.md).\n");
}

/* snprintf that fails (-1) instead of truncating. */
static int fmt(char *buf, size_t cap, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static int fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, cap, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A value spliced into nginx.conf must not end or open a directive. */
static int conf_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if (strchr(" \t\r\n;{}\"'$#\\", *s) != NULL)
			return 0;
	return 1;
}

struct subst {
	const char *name;	/* without the @ */
	const char *value;
};

/* Replaces every @NAME@ of tpl; unknown names are an error. */
static char *render(const char *tpl, const struct subst *s, size_t n)
{
	size_t cap = strlen(tpl) * 2 + 4096, len = 0, i;
	char *out = malloc(cap);
	const char *p = tpl;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		const char *end;
		const char *val = NULL;

		if (*p == '@' && (end = strchr(p + 1, '@')) != NULL &&
		    end - p > 1 && end - p < 32 &&
		    strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
			    (size_t)(end - p - 1)) {
			for (i = 0; i < n; i++)
				if (strlen(s[i].name) == (size_t)(end - p - 1) &&
				    strncmp(s[i].name, p + 1,
					    (size_t)(end - p - 1)) == 0)
					val = s[i].value;
			if (val == NULL) {
				fprintf(stderr, "linkbot: template names an "
						"unknown @%.*s@\n",
					(int)(end - p - 1), p + 1);
				free(out);
				return NULL;
			}
			if (len + strlen(val) + 1 > cap) {
				free(out);
				return NULL;
			}
			memcpy(out + len, val, strlen(val));
			len += strlen(val);
			p = end + 1;
			continue;
		}
		if (len + 2 > cap) {
			free(out);
			return NULL;
		}
		out[len++] = *p++;
	}
	out[len] = '\0';
	return out;
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Finds the share directory (holding templates/) and the edge module.
 * Returns 0 and fills share and module (PATH_MAX each).
 */
static int find_share(char *share, char *module)
{
	const char *env = getenv("LINKBOT_SHARE");
	const char *menv = getenv("LINKBOT_EDGE_MODULE");
	char exe[PATH_MAX], cand[PATH_MAX + 64], *slash;
	const char *rel[] = { "..", "../share/linkbot", "." };
	ssize_t n;
	size_t i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	if (env != NULL && *env != '\0') {
		if (realpath(env, share) == NULL)
			return -1;
	} else {
		share[0] = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			fmt(cand, sizeof(cand), "%s/%s/%s", exe, rel[i],
				 PREVIEW_TEMPLATE);
			if (is_file(cand)) {
				fmt(cand, sizeof(cand), "%s/%s", exe, rel[i]);
				if (realpath(cand, share) == NULL)
					return -1;
				break;
			}
		}
		if (share[0] == '\0')
			return -1;
	}
	if (menv != NULL && *menv != '\0')
		return fmt(module, PATH_MAX, "%s", menv);
	/* build/ beside build/linkbot, the share directory, nginx's own */
	{
		const char *dirs[] = { exe, share, SYSTEM_MODULES };
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			fmt(cand, sizeof(cand), "%s/%s", dirs[i], MODULE_NAME);
			if (is_file(cand))
				return fmt(module, PATH_MAX, "%s", cand);
		}
	}
	return -1;
}

/* s3://bucket/prefix + endpoint URL -> origin server, scheme, host, path. */
static int s3_origin(const char *store, const char *endpoint, char *server,
		     char *scheme, char *host, char *path, size_t cap)
{
	const char *b = store + 5, *e, *hp;
	size_t hl;

	if (strncmp(endpoint, "http://", 7) == 0) {
		fmt(scheme, cap, "http");
		hp = endpoint + 7;
	} else if (strncmp(endpoint, "https://", 8) == 0) {
		fmt(scheme, cap, "https");
		hp = endpoint + 8;
	} else {
		fprintf(stderr, "linkbot: the S3 endpoint '%s' is not an "
				"http(s) URL\n", endpoint);
		return -1;
	}
	hl = strcspn(hp, "/");
	if (hl == 0 || hl >= cap) {
		fprintf(stderr, "linkbot: the S3 endpoint '%s' has no host\n",
			endpoint);
		return -1;
	}
	fmt(host, cap, "%.*s", (int)hl, hp);
	if (memchr(hp, ':', hl) != NULL || host[0] == '[')
		fmt(server, cap, "%s", host);
	else
		fmt(server, cap, "%s:%s", host,
			 strcmp(scheme, "https") == 0 ? "443" : "80");
	e = b + strlen(b);
	while (e > b && e[-1] == '/')
		e--;
	if (e == b || *b == '/') {
		fprintf(stderr, "linkbot: '%s' names no bucket "
				"(s3://bucket/prefix)\n", store);
		return -1;
	}
	fmt(path, cap, "/%.*s", (int)(e - b), b);
	return 0;
}

/*
 * Can nginx bind HOST:PORT? Checked before anything is said, so a busy
 * port is one clear error and not "serving" followed by nginx's failure.
 */
static int can_listen(const char *listen)
{
	struct addrinfo hints, *ai = NULL, *a;
	const char *colon = strrchr(listen, ':');
	char host[256];
	size_t hl;
	long port;
	char *end;
	int rc = LB_EXIT_ENV, fd, one = 1, e = 0;

	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535) {
		fprintf(stderr, "linkbot: --listen wants HOST:PORT with a port "
				"from 1 to 65535, not '%s'\n", listen);
		return LB_EXIT_USAGE;
	}
	hl = (size_t)(colon - listen);
	if (hl >= 2 && listen[0] == '[' && listen[hl - 1] == ']') {
		listen++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		fprintf(stderr, "linkbot: --listen wants HOST:PORT, not '%s'\n",
			listen);
		return LB_EXIT_USAGE;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((e = getaddrinfo(strcmp(host, "*") ? host : NULL, colon + 1, &hints,
			     &ai)) != 0) {
		fprintf(stderr, "linkbot: cannot listen on '%s': %s\n", host,
			gai_strerror(e));
		return LB_EXIT_USAGE;
	}
	for (a = ai; a != NULL; a = a->ai_next) {
		if ((fd = socket(a->ai_family, a->ai_socktype, 0)) < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
			close(fd);
			rc = LB_EXIT_OK;
			break;
		}
		e = errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (rc != LB_EXIT_OK)
		fprintf(stderr, "linkbot: cannot listen on %s: %s\n", listen,
			strerror(e));
	return rc;
}

int cmd_preview(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "s3-endpoint", required_argument, NULL, 'E' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *store = "public", *listen = "127.0.0.1:8080";
	const char *endpoint = NULL, *prefix_opt = NULL, *workers = "auto";
	const char *nginx;
	char share[PATH_MAX], module[PATH_MAX], prefix[PATH_MAX], root[PATH_MAX];
	char tpl_path[PATH_MAX + 64], conf[PATH_MAX + 64], sock[PATH_MAX + 64];
	char dir[PATH_MAX + 64], server[512], scheme[16], host[512], path[1024];
	char *tpl = NULL, *out = NULL, listen_buf[64];
	struct lb_error err;
	int c, rc = LB_EXIT_ENV, s3;
	size_t i;

	optind = 0;
	while ((c = getopt_long(argc, argv, "s:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': store = optarg; break;
		case 'l': listen = optarg; break;
		case 'E': endpoint = optarg; break;
		case 'P': prefix_opt = optarg; break;
		case 'w': workers = optarg; break;
		case 'h': usage(stdout); return LB_EXIT_OK;
		default: usage(stderr); return LB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	/* a bare port listens on loopback */
	if (*listen != '\0' && strspn(listen, "0123456789") == strlen(listen)) {
		if (fmt(listen_buf, sizeof(listen_buf), "127.0.0.1:%s",
			listen) < 0)
			return LB_EXIT_USAGE;
		listen = listen_buf;
	}
	if (!conf_safe(listen) || strchr(listen, ':') == NULL ||
	    !conf_safe(workers)) {
		fprintf(stderr, "linkbot: --listen wants HOST:PORT\n");
		return LB_EXIT_USAGE;
	}
	if (strcmp(workers, "auto") != 0 &&
	    (strspn(workers, "0123456789") != strlen(workers) ||
	     atoi(workers) < 1 || atoi(workers) > 64 || strlen(workers) > 2)) {
		fprintf(stderr, "linkbot: --workers wants 'auto' or a count from "
				"1 to 64, not '%s'\n", workers);
		return LB_EXIT_USAGE;
	}
	if ((rc = can_listen(listen)) != LB_EXIT_OK)
		return rc;
	rc = LB_EXIT_ENV;
	if (find_share(share, module) < 0) {
		fprintf(stderr, "linkbot: cannot find %s and %s (set "
				"LINKBOT_SHARE to the linkbot source tree, "
				"LINKBOT_EDGE_MODULE to the module; `make` "
				"builds it)\n", PREVIEW_TEMPLATE, MODULE_NAME);
		return LB_EXIT_ENV;
	}
	lb_error_init(&err);
	if (prefix_opt != NULL) {
		if (lb_mkdirs(prefix_opt, &err) < 0 ||
		    realpath(prefix_opt, prefix) == NULL) {
			fprintf(stderr, "linkbot: cannot use prefix '%s': %s\n",
				prefix_opt, err.msg[0] ? err.msg : strerror(errno));
			return LB_EXIT_ENV;
		}
	} else {
		fmt(prefix, sizeof(prefix), "/tmp/linkbot-preview.XXXXXX");
		if (mkdtemp(prefix) == NULL) {
			fprintf(stderr, "linkbot: cannot create a prefix: %s\n",
				strerror(errno));
			return LB_EXIT_ENV;
		}
	}
	{
		const char *sub[] = { "logs", "tmp", "empty" };
		for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
			fmt(dir, sizeof(dir), "%s/%s", prefix, sub[i]);
			if (lb_mkdirs(dir, &err) < 0) {
				fprintf(stderr, "linkbot: %s\n", err.msg);
				return LB_EXIT_ENV;
			}
		}
	}
	s3 = strncmp(store, "s3://", 5) == 0;
	fmt(sock, sizeof(sock), "unix:%s/raw.sock", prefix);
	if (s3) {
		if (endpoint == NULL)
			endpoint = getenv("AWS_ENDPOINT_URL");
		if (endpoint == NULL || *endpoint == '\0')
			endpoint = "https://s3.amazonaws.com";
		if (s3_origin(store, endpoint, server, scheme, host, path,
			      sizeof(server)) < 0)
			return LB_EXIT_USAGE;
		fmt(root, sizeof(root), "%s/empty", prefix);
	} else {
		if (!is_dir(store) || realpath(store, root) == NULL) {
			fprintf(stderr, "linkbot: the store '%s' is not a "
					"directory\n", store);
			return LB_EXIT_ENV;
		}
		fmt(server, sizeof(server), "%s", sock);
		fmt(scheme, sizeof(scheme), "http");
		fmt(host, sizeof(host), "localhost");
		path[0] = '\0';
	}
	{
		const char *check[] = { prefix, root, module, server, host, path };
		for (i = 0; i < sizeof(check) / sizeof(check[0]); i++)
			if (!conf_safe(check[i])) {
				fprintf(stderr, "linkbot: '%s' cannot go into "
						"nginx.conf (white space or "
						"quotes)\n", check[i]);
				return LB_EXIT_USAGE;
			}
	}
	{
		const struct subst sub[] = {
			{ "PREFIX", prefix }, { "LISTEN", listen },
			{ "MODULE", module },
			{ "WORKERS", workers }, { "MODE", s3 ? "s3" : "dir" },
			{ "ROOT", root }, { "ORIGIN_SERVER", server },
			{ "ORIGIN_SCHEME", scheme }, { "ORIGIN_HOST", host },
			{ "ORIGIN_PATH", path },
			{ "USER", geteuid() == 0 ? "user root;" : "" },
		};
		fmt(tpl_path, sizeof(tpl_path), "%s/%s", share,
			 PREVIEW_TEMPLATE);
		if (lb_file_read(tpl_path, PREVIEW_MAX_TEMPLATE, &tpl, NULL,
				 &err) < 0) {
			fprintf(stderr, "linkbot: %s\n", err.msg);
			goto out;
		}
		out = render(tpl, sub, sizeof(sub) / sizeof(sub[0]));
		if (out == NULL) {
			fprintf(stderr, "linkbot: cannot render %s\n", tpl_path);
			goto out;
		}
	}
	fmt(conf, sizeof(conf), "%s/nginx.conf", prefix);
	if (lb_file_write_atomic(conf, out, strlen(out), &err) < 0) {
		fprintf(stderr, "linkbot: %s\n", err.msg);
		goto out;
	}
	/* a stale socket from an earlier run would stop nginx from binding */
	unlink(sock + 5);
	fprintf(stderr, "linkbot: preview of %s on http://%s/ (nginx prefix "
			"%s)\n", store, listen, prefix);
	fflush(stderr);
	nginx = getenv("LINKBOT_NGINX");
	if (nginx == NULL || *nginx == '\0')
		nginx = "nginx";
	fmt(dir, sizeof(dir), "%s/", prefix);
	{
		char elog[PATH_MAX + 64];
		char *const args[] = { (char *)nginx, "-p", dir, "-c", conf,
				       "-e", elog, NULL };
		fmt(elog, sizeof(elog), "%s/logs/error.log", prefix);
		free(tpl);
		free(out);
		execvp(nginx, args);
		fprintf(stderr, "linkbot: cannot run %s: %s\n", nginx,
			strerror(errno));
		return LB_EXIT_ENV;
	}
out:
	free(tpl);
	free(out);
	return rc;
}
