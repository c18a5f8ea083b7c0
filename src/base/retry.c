/* retry.c - the one HTTP retry policy; see retry.h. */
#define _XOPEN_SOURCE 700	/* strptime */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the CURLcode names only: nothing here calls libcurl */
#include <curl/curl.h>

#include "linkbot/retry.h"

enum lb_retry_class lb_retry_classify(int curl_code, long status)
{
	switch (curl_code) {
	case CURLE_OK:
		break;
	case CURLE_OPERATION_TIMEDOUT:
		return LB_RETRY_TIMEOUT;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_WRITE_ERROR:		/* our write callback said stop */
	case CURLE_FILESIZE_EXCEEDED:
	case CURLE_ABORTED_BY_CALLBACK:
		return LB_RETRY_FINAL;
	default:
		return LB_RETRY_TRANSPORT;
	}
	if (status == 429)
		return LB_RETRY_THROTTLED;
	if (status == 503)
		return LB_RETRY_UNAVAILABLE;
	if (status >= 500 && status < 600)
		return LB_RETRY_SERVER;
	return LB_RETRY_FINAL;
}

int lb_retry_allowed(const struct lb_retry_policy *p, enum lb_retry_class c,
		     int tries)
{
	return c > LB_RETRY_FINAL && c < LB_RETRY_N_CLASSES &&
	       tries < p->retries[c];
}

long lb_retry_wait_ms(const struct lb_retry_policy *p, enum lb_retry_class c,
		      int tries, long retry_after_s, uint64_t rnd)
{
	long wait = p->first_ms;
	int i;

	if (p->max_retry_after_s > 0 && retry_after_s >= 0 &&
	    (c == LB_RETRY_THROTTLED || c == LB_RETRY_UNAVAILABLE)) {
		if (retry_after_s > p->max_retry_after_s)
			return -1;
		return retry_after_s * 1000;
	}
	for (i = 0; i < tries && wait < LONG_MAX / 2; i++)
		wait *= 2;
	if (p->cap_ms > 0 && wait > p->cap_ms)
		wait = p->cap_ms;
	if (p->max_retry_after_s > 0 && wait / 1000 > p->max_retry_after_s)
		return -1;
	if (p->jitter)
		wait = (long)(rnd % ((uint64_t)wait + 1));
	return wait;
}

long lb_retry_after_parse(const char *v, int64_t now)
{
	char *end;
	long s;
	struct tm tm;

	while (*v == ' ')
		v++;
	if (isdigit((unsigned char)*v)) {
		s = strtol(v, &end, 10);
		while (*end == ' ')
			end++;
		return *end == '\0' && s >= 0 ? s : -1;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL)
		return -1;
	s = (long)(timegm(&tm) - (time_t)now);
	return s < 0 ? 0 : s;
}
