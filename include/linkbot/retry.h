/*
 * retry.h - the one HTTP retry policy: when a request is tried again and
 * how long to wait first.
 *
 * Every HTTP client of linkbot (the crawler's fetcher, the S3 store, the
 * embeddings client, the HubSpot client) asks here. The rule is one; what
 * differs between clients is data, a struct lb_retry_policy each caller
 * spells next to its client:
 *
 *   1. classify the outcome: lb_retry_classify(curl code, HTTP status);
 *      a caller that knows more maps its own transport errors to a class
 *      (the fetcher: UNSUPPORTED_PROTOCOL there is an answer without a
 *      status line, a transport error; S3's SlowDown code is throttling);
 *   2. lb_retry_allowed(policy, class, retries so far): 1 to try again;
 *   3. lb_retry_wait_ms(policy, class, retries so far, Retry-After, rnd):
 *      the wait; -1 when the server asks for longer than the policy waits.
 *
 * The wait: the server's Retry-After (429, 503) when the policy honours it,
 * else first_ms doubling per retry up to cap_ms, with full jitter (uniform
 * in [0, wait]) when many clients retry at once (the S3 store's requests).
 * Politeness (how a host is slowed down after an answer) is the fetcher's.
 * Stateless, no I/O; names curl's error codes but calls no libcurl.
 */
#ifndef LINKBOT_RETRY_H
#define LINKBOT_RETRY_H

#include <stdint.h>

enum lb_retry_class {
	LB_RETRY_FINAL = 0,	/* an answer to keep (2xx-4xx but 429), or a
				 * transport error that would fail again */
	LB_RETRY_TRANSPORT,	/* DNS, connect, reset, garbage answer */
	LB_RETRY_TIMEOUT,	/* the transfer outlived its timeout */
	LB_RETRY_THROTTLED,	/* 429 Too Many Requests (S3: SlowDown) */
	LB_RETRY_UNAVAILABLE,	/* 503 Service Unavailable */
	LB_RETRY_SERVER,	/* any other 5xx */
	LB_RETRY_N_CLASSES
};

struct lb_retry_policy {
	int retries[LB_RETRY_N_CLASSES];	/* retries after the first
						 * attempt, per class; 0: none */
	long first_ms;		/* wait before the first retry; doubles */
	long cap_ms;		/* never longer (0: no cap) */
	int jitter;		/* full jitter: rnd % (wait + 1) */
	long max_retry_after_s;	/* honour Retry-After of 429 and 503 up to
				 * this long, give up beyond (0: ignore it) */
};

/*
 * The class of an outcome: curl_code (a CURLcode; 0 = CURLE_OK) first,
 * then the HTTP status. Transport errors that would fail the same way again
 * (a malformed URL, an unsupported scheme, a body over the caller's cap,
 * a callback that aborted) are FINAL.
 */
enum lb_retry_class lb_retry_classify(int curl_code, long status);

/* 1 if an outcome of class c, after `tries` retries already, is retried. */
int lb_retry_allowed(const struct lb_retry_policy *p, enum lb_retry_class c,
		     int tries);

/*
 * Milliseconds to wait before retry tries + 1 (see above). retry_after_s:
 * the server's Retry-After in seconds, -1 if none. rnd: a random number
 * (used with jitter only). -1: the server's Retry-After exceeds the policy.
 */
long lb_retry_wait_ms(const struct lb_retry_policy *p, enum lb_retry_class c,
		      int tries, long retry_after_s, uint64_t rnd);

/*
 * A Retry-After header value: delay-seconds or an HTTP-date (RFC 9110
 * 10.2.3), as seconds from now (a past date: 0); -1 if unreadable.
 */
long lb_retry_after_parse(const char *v, int64_t now);

#endif
