#!/usr/bin/env python3
"""hubspot-server - a local HubSpot API for the tests, written to HubSpot's
public documentation (developers.hubspot.com: CRM custom object schemas,
objects and batch endpoints, properties, CMS blog posts, rate limits,
error bodies), not to linkbot's convenience.

    hubspot-server.py --port-file FILE --token TOKEN [--posts FILE.json]
                      [--scopes a,b,c] [--burst-max 190]
                      [--burst-window-ms 10000] [--daily N]
                      [--portal 1234]

Paths, legacy and date-versioned (any YYYY-MM):
  GET|POST /crm/v3/schemas, /crm-object-schemas/{v3|YYYY-MM}/schemas
  GET      .../schemas/{objectType}
  GET      /crm/v3/properties/{t}, /crm/properties/YYYY-MM/{t}
  POST     .../properties/{t}/batch/create
  GET      /crm/v3/objects/{t}, /crm/objects/YYYY-MM/{t}      (limit <= 100, after)
  POST     .../objects/{t}/batch/{create,update,archive,read}  (<= 100 inputs)
  GET      /cms/v3/blogs/posts, /cms/blogs/YYYY-MM/posts       (limit <= 100, after,
           state, contentGroupId, archived, prop__eq|ne|contains|icontains|in)

Behaviour as documented: Bearer auth (401 INVALID_AUTHENTICATION), scopes
(403 MISSING_SCOPES naming requiredGranularScopes), a rolling burst window
and a daily count with X-HubSpot-RateLimit-* headers on every answer (429
with policyName TEN_SECONDLY_ROLLING or DAILY), unique values (409
CONFLICT), 207 multi-status with per-input errors, error bodies with
status, message, correlationId and category.

Fault injection and inspection (not HubSpot; under /__admin):
  GET  /__admin/log          every request: method, path, status, inputs
  GET  /__admin/state        schemas and objects
  POST /__admin/reset-log
  POST /__admin/config       JSON: {"posts": [...], "storm_429": N (the next N
       requests get 429 TEN_SECONDLY_ROLLING), "daily": N (requests left
       today; 0: DAILY 429s), "fail_5xx": N (the next N get 502),
       "fail_inputs": M (batch inputs whose key hashes to 0 mod M fail once,
       207), "write_delay_ms": D, "scopes": [...], "token": "...",
       "hide_schemas": N (the next N schema listings omit every schema:
       a schema another app creates between a listing and a create),
       "lose_writes": N (the next N writes are applied but answered 502)}
Loopback only; it stops when its parent test kills it.
"""
import argparse
import base64
import hashlib
import http.server
import json
import re
import socketserver
import threading
import time
import urllib.parse
import uuid

ALL_SCOPES = ["crm.schemas.custom.read", "crm.schemas.custom.write",
              "crm.objects.custom.read", "crm.objects.custom.write", "content"]

p = argparse.ArgumentParser()
p.add_argument("--port-file", required=True)
p.add_argument("--token", required=True)
p.add_argument("--posts")
p.add_argument("--scopes", default=",".join(ALL_SCOPES))
p.add_argument("--burst-max", type=int, default=190)
p.add_argument("--burst-window-ms", type=int, default=10000)
p.add_argument("--daily", type=int, default=1000000)
p.add_argument("--portal", default="4242")
ARGS = p.parse_args()

lock = threading.Lock()
S = {
    "token": ARGS.token,
    "scopes": set(s for s in ARGS.scopes.split(",") if s),
    "posts": json.load(open(ARGS.posts)) if ARGS.posts else [],
    "schemas": {},          # objectTypeId -> schema
    "objects": {},          # objectTypeId -> {id: {"properties":..., ...}}
    "next_type": 1,
    "next_id": 100000,
    "log": [],
    "sent": [],             # send times in the burst window
    "daily": ARGS.daily,
    "storm_429": 0,
    "fail_5xx": 0,
    "fail_inputs": 0,
    "failed_once": set(),
    "write_delay_ms": 0,
    "hide_schemas": 0,
    "lose_writes": 0,
}

VER = r"(?:v3|\d{4}-\d{2})"
DATE = r"\d{4}-\d{2}"


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def err_body(status, message, category, **extra):
    b = {"status": "error", "message": message,
         "correlationId": str(uuid.uuid4()), "category": category}
    b.update(extra)
    return status, b


def cursor(n):
    return base64.b64encode(str(n).encode()).decode().rstrip("=")


def uncursor(s):
    try:
        return int(base64.b64decode(s + "=" * (-len(s) % 4)).decode())
    except Exception:
        return None


def find_type(t):
    for tid, sc in S["schemas"].items():
        if t in (tid, sc["fullyQualifiedName"], sc["name"]):
            return tid
    return None


def schema_view(sc):
    return sc


def prop_view(obj, names):
    props = {"hs_object_id": obj["id"], "hs_createdate": obj["createdAt"],
             "hs_lastmodifieddate": obj["updatedAt"]}
    for n in names:
        v = obj["properties"].get(n)
        props[n] = v if v not in ("",) else None
    return {"id": obj["id"], "properties": props, "createdAt": obj["createdAt"],
            "updatedAt": obj["updatedAt"], "archived": False}


def valid_prop_def(d, need_group):
    if not isinstance(d, dict):
        return "property definition must be an object"
    for k in ("name", "label", "type", "fieldType") + (("groupName",) if need_group else ()):
        if not isinstance(d.get(k), str) or not d.get(k):
            return "property definition is missing '%s'" % k
    if not re.fullmatch(r"[a-z][a-z0-9_]*", d["name"]):
        return "invalid property name '%s'" % d["name"]
    okf = {"string": ("text", "textarea", "select", "radio", "checkbox", "file", "html",
                      "phonenumber"),
           "number": ("number",), "date": ("date",), "datetime": ("date",),
           "enumeration": ("select", "radio", "checkbox", "booleancheckbox"),
           "bool": ("booleancheckbox",)}
    if d["type"] not in okf or d["fieldType"] not in okf[d["type"]]:
        return "type '%s' with fieldType '%s' is not valid" % (d["type"], d["fieldType"])
    return None


def need(scopes):
    missing = [s for s in scopes if s not in S["scopes"]]
    if not missing:
        return None
    return err_body(403, "This app hasn't been granted all required scopes to make this "
                    "call. Read more about required scopes here: "
                    "https://developers.hubspot.com/scopes.", "MISSING_SCOPES",
                    errors=[{"message": "One or more of the following scopes are required.",
                             "context": {"requiredGranularScopes": scopes}}],
                    links={"scopes": "https://developers.hubspot.com/scopes"})


# ---- handlers: (status, body) ----

def schemas_list(q, body):
    e = need(["crm.schemas.custom.read"])
    if e:
        return e
    if S["hide_schemas"] > 0:  # another app creates it after this listing
        S["hide_schemas"] -= 1
        return 200, {"results": []}
    return 200, {"results": [schema_view(s) for s in S["schemas"].values()]}


def schemas_get(q, body, t):
    e = need(["crm.schemas.custom.read"])
    if e:
        return e
    tid = find_type(t)
    if tid is None:
        return err_body(404, "Unable to find object type %s" % t, "OBJECT_NOT_FOUND")
    return 200, schema_view(S["schemas"][tid])


def schemas_create(q, body):
    e = need(["crm.schemas.custom.write"])
    if e:
        return e
    if not isinstance(body, dict):
        return err_body(400, "Invalid input JSON", "VALIDATION_ERROR")
    name = body.get("name")
    labels = body.get("labels") or {}
    props = body.get("properties")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name or ""):
        return err_body(400, "Invalid object name", "VALIDATION_ERROR")
    if not labels.get("singular") or not labels.get("plural"):
        return err_body(400, "labels.singular and labels.plural are required",
                        "VALIDATION_ERROR")
    if not isinstance(props, list) or not props:
        return err_body(400, "properties are required", "VALIDATION_ERROR")
    names = []
    for d in props:
        m = valid_prop_def(d, False)
        if m:
            return err_body(400, m, "VALIDATION_ERROR")
        names.append(d["name"])
    if len(set(names)) != len(names):
        return err_body(400, "duplicate property names", "VALIDATION_ERROR")
    for k in ("requiredProperties", "searchableProperties", "secondaryDisplayProperties"):
        for n in body.get(k, []) or []:
            if n not in names:
                return err_body(400, "%s names '%s', which is not a property" % (k, n),
                                "VALIDATION_ERROR")
    pd = body.get("primaryDisplayProperty")
    if pd is not None and pd not in names:
        return err_body(400, "primaryDisplayProperty '%s' is not a property" % pd,
                        "VALIDATION_ERROR")
    for sc in S["schemas"].values():
        if sc["name"] == name:
            return err_body(409, "Object already exists with name %s" % name, "CONFLICT",
                            context={"name": [name]})
    tid = "2-%d" % (1000000 + S["next_type"])
    S["next_type"] += 1
    t = now_iso()
    sc = {"id": tid.split("-")[1], "objectTypeId": tid, "name": name,
          "fullyQualifiedName": "p%s_%s" % (ARGS.portal, name), "labels": labels,
          "primaryDisplayProperty": pd, "requiredProperties": body.get("requiredProperties", []),
          "searchableProperties": body.get("searchableProperties", []),
          "secondaryDisplayProperties": body.get("secondaryDisplayProperties", []),
          "associations": [], "archived": False, "createdAt": t, "updatedAt": t,
          "properties": []}
    for d in props:
        sc["properties"].append({"name": d["name"], "label": d["label"], "type": d["type"],
                                 "fieldType": d["fieldType"],
                                 "hasUniqueValue": bool(d.get("hasUniqueValue")),
                                 "groupName": "%s_information" % name,
                                 "createdAt": t, "updatedAt": t, "archived": False})
    S["schemas"][tid] = sc
    S["objects"][tid] = {}
    return 201, sc


def props_list(q, body, t):
    e = need(["crm.objects.custom.read"])
    if e:
        return e
    tid = find_type(t)
    if tid is None:
        return err_body(404, "Unable to find object type %s" % t, "OBJECT_NOT_FOUND")
    return 200, {"results": S["schemas"][tid]["properties"]}


def props_batch_create(q, body, t):
    e = need(["crm.schemas.custom.write"])
    if e:
        return e
    tid = find_type(t)
    if tid is None:
        return err_body(404, "Unable to find object type %s" % t, "OBJECT_NOT_FOUND")
    inputs = (body or {}).get("inputs")
    if not isinstance(inputs, list) or not inputs:
        return err_body(400, "inputs are required", "VALIDATION_ERROR")
    if len(inputs) > 100:
        return err_body(400, "Batch input limit is 100", "VALIDATION_ERROR")
    sc = S["schemas"][tid]
    groups = {p["groupName"] for p in sc["properties"]}
    results, errors = [], []
    for d in inputs:
        m = valid_prop_def(d, True)
        if not m and d["groupName"] not in groups:
            m = "property group %s does not exist" % d["groupName"]
        if not m and any(p["name"] == d["name"] for p in sc["properties"]):
            m = "Property named %s already exists" % d["name"]
        if m:
            errors.append({"status": "error", "category": "VALIDATION_ERROR", "message": m,
                           "context": {"name": [str(d.get("name"))]}})
            continue
        t2 = now_iso()
        pr = {"name": d["name"], "label": d["label"], "type": d["type"],
              "fieldType": d["fieldType"], "groupName": d["groupName"],
              "hasUniqueValue": bool(d.get("hasUniqueValue")), "createdAt": t2,
              "updatedAt": t2, "archived": False}
        sc["properties"].append(pr)
        results.append(pr)
    out = {"status": "COMPLETE", "results": results, "startedAt": now_iso(),
           "completedAt": now_iso()}
    if errors:
        out.update(numErrors=len(errors), errors=errors)
        return 207, out
    return 201, out


def objects_list(q, body, t):
    e = need(["crm.objects.custom.read"])
    if e:
        return e
    tid = find_type(t)
    if tid is None:
        return err_body(404, "Unable to infer object type from: %s" % t, "OBJECT_NOT_FOUND")
    try:
        limit = int(q.get("limit", ["10"])[0])
    except ValueError:
        return err_body(400, "limit must be a number", "VALIDATION_ERROR")
    if limit < 1 or limit > 100:
        return err_body(400, "limit must be between 1 and 100", "VALIDATION_ERROR")
    off = 0
    if "after" in q:
        off = uncursor(q["after"][0])
        if off is None:
            return err_body(400, "invalid after cursor", "VALIDATION_ERROR")
    names = []
    for v in q.get("properties", []):
        names += [n for n in v.split(",") if n]
    objs = sorted(S["objects"][tid].values(), key=lambda o: int(o["id"]))
    page = objs[off:off + limit]
    out = {"results": [prop_view(o, names) for o in page]}
    if off + limit < len(objs):
        c = cursor(off + limit)
        out["paging"] = {"next": {"after": c, "link": "?after=" + c}}
    return 200, out


def unique_props(tid):
    return [p["name"] for p in S["schemas"][tid]["properties"] if p.get("hasUniqueValue")]


def check_props(tid, props):
    known = {p["name"] for p in S["schemas"][tid]["properties"]}
    if not isinstance(props, dict):
        return "properties must be an object"
    for k, v in props.items():
        if k not in known:
            return "Property \"%s\" does not exist" % k
        if v is not None and not isinstance(v, str):
            return "Property \"%s\" must be a string" % k
    return None


def should_fail(key):
    m = S["fail_inputs"]
    if not m or key in S["failed_once"]:
        return False
    if int(hashlib.sha256(key.encode()).hexdigest(), 16) % m != 0:
        return False
    S["failed_once"].add(key)
    return True


def batch(q, body, t, verb):
    e = need(["crm.objects.custom.read" if verb == "read" else "crm.objects.custom.write"])
    if e:
        return e
    tid = find_type(t)
    if tid is None:
        return err_body(404, "Unable to infer object type from: %s" % t, "OBJECT_NOT_FOUND")
    inputs = (body or {}).get("inputs") if isinstance(body, dict) else None
    if not isinstance(inputs, list):
        return err_body(400, "Invalid input JSON on line 1: inputs are required",
                        "VALIDATION_ERROR")
    if len(inputs) > 100:
        return err_body(400, "Batch input limit is 100, got %d" % len(inputs),
                        "VALIDATION_ERROR", context={"limit": ["100"]})
    if not inputs:
        return err_body(400, "inputs must not be empty", "VALIDATION_ERROR")
    objs = S["objects"][tid]
    sc = S["schemas"][tid]
    uniq = unique_props(tid)
    results, errors = [], []
    t0 = now_iso()
    if verb == "archive":
        for i in inputs:
            objs.pop(str((i or {}).get("id")), None)
        return 204, None
    if verb == "read":
        names = (body.get("properties") or [])
        for i in inputs:
            o = objs.get(str((i or {}).get("id")))
            if o:
                results.append(prop_view(o, names))
        return 200, {"status": "COMPLETE", "results": results}
    if verb == "create":
        seen = {}
        for i in inputs:
            props = (i or {}).get("properties")
            m = check_props(tid, props)
            if m:
                return err_body(400, m, "VALIDATION_ERROR")
            for r in sc["requiredProperties"]:
                if not props.get(r):
                    return err_body(400, "Required property \"%s\" is missing" % r,
                                    "VALIDATION_ERROR")
            for u in uniq:
                v = props.get(u)
                if v is None:
                    continue
                if v in seen.get(u, set()) or any(o["properties"].get(u) == v
                                                  for o in objs.values()):
                    return err_body(409, "Unique value for %s: %s already exists" % (u, v),
                                    "CONFLICT", context={"property": [u]})
                seen.setdefault(u, set()).add(v)
        for i in inputs:
            props = i["properties"]
            key = props.get("blog_post_url") or json.dumps(props, sort_keys=True)
            if should_fail(key):
                errors.append({"status": "error", "category": "INTERNAL_ERROR",
                               "message": "Failed to create object; try again",
                               "context": {"blog_post_url": [key]}})
                continue
            oid = str(S["next_id"])
            S["next_id"] += 1
            o = {"id": oid, "properties": {k: v for k, v in props.items()},
                 "createdAt": t0, "updatedAt": t0}
            objs[oid] = o
            results.append(prop_view(o, list(props.keys())))
    else:  # update
        ids = [str((i or {}).get("id")) for i in inputs]
        if len(set(ids)) != len(ids):
            return err_body(400, "Duplicate IDs found in batch input", "VALIDATION_ERROR")
        for i in inputs:
            m = check_props(tid, (i or {}).get("properties"))
            if m:
                return err_body(400, m, "VALIDATION_ERROR")
        for i in inputs:
            oid = str(i.get("id"))
            o = objs.get(oid)
            if o is None:
                errors.append({"status": "error", "category": "OBJECT_NOT_FOUND",
                               "message": "Object not found. objectId are usually numeric.",
                               "context": {"ids": [oid]}})
                continue
            if should_fail(oid):
                errors.append({"status": "error", "category": "INTERNAL_ERROR",
                               "message": "Failed to update object; try again",
                               "context": {"ids": [oid]}})
                continue
            for u in uniq:
                v = i["properties"].get(u)
                if v is not None and any(x["properties"].get(u) == v and x["id"] != oid
                                         for x in objs.values()):
                    return err_body(409, "Unique value for %s: %s already exists" % (u, v),
                                    "CONFLICT")
            o["properties"].update(i["properties"])
            o["updatedAt"] = t0
            results.append(prop_view(o, list(i["properties"].keys())))
    out = {"status": "COMPLETE", "results": results, "startedAt": t0,
           "completedAt": now_iso()}
    if errors:
        out.update(numErrors=len(errors), errors=errors)
        return 207, out
    return (201 if verb == "create" else 200), out


def match_filter(post, key, vals):
    prop, _, op = key.partition("__")
    op = op or "eq"
    v = post.get(prop)
    if v is None:
        return op in ("ne", "not_null") and op != "not_null"
    v = str(v)
    want = vals[0]
    if op == "eq":
        return v == want
    if op == "ne":
        return v != want
    if op == "contains":
        return want in v
    if op == "icontains":
        return want.lower() in v.lower()
    if op == "in":
        return v in want.split(",")
    if op == "startswith":
        return v.startswith(want)
    return True


POST_PROPS = {"id", "name", "url", "state", "contentGroupId", "slug", "authorName",
              "publishDate", "htmlTitle", "language", "currentState"}


def posts_list(q, body):
    e = need(["content"])
    if e:
        return e
    try:
        limit = int(q.get("limit", ["20"])[0])
    except ValueError:
        return err_body(400, "limit must be a number", "VALIDATION_ERROR")
    if limit < 1 or limit > 100:
        return err_body(400, "limit must be between 1 and 100", "VALIDATION_ERROR")
    off = 0
    if "after" in q:
        off = uncursor(q["after"][0])
        if off is None:
            return err_body(400, "invalid after cursor", "VALIDATION_ERROR")
    archived = q.get("archived", ["false"])[0] == "true"
    posts = [p for p in S["posts"] if bool(p.get("archived")) == archived]
    for k, vals in q.items():
        if k in ("limit", "after", "archived", "sort", "property"):
            continue
        if k.partition("__")[0] not in POST_PROPS:
            return err_body(400, "Unknown filter property '%s'" % k, "VALIDATION_ERROR")
        posts = [p for p in posts if match_filter(p, k, vals)]
    posts.sort(key=lambda p: p.get("createdAt", ""))
    page = posts[off:off + limit]
    out = {"total": len(posts), "results": page}
    if off + limit < len(posts):
        c = cursor(off + limit)
        out["paging"] = {"next": {"after": c, "link": "?after=" + c}}
    return 200, out


ROUTES = [
    ("GET", r"/crm/v3/schemas|/crm-object-schemas/%s/schemas" % VER, schemas_list),
    ("POST", r"/crm/v3/schemas|/crm-object-schemas/%s/schemas" % VER, schemas_create),
    ("GET", r"(?:/crm/v3/schemas|/crm-object-schemas/%s/schemas)/([^/]+)" % VER, schemas_get),
    ("GET", r"(?:/crm/v3/properties|/crm/properties/%s)/([^/]+)" % DATE, props_list),
    ("POST", r"(?:/crm/v3/properties|/crm/properties/%s)/([^/]+)/batch/create" % DATE,
     props_batch_create),
    ("GET", r"(?:/crm/v3/objects|/crm/objects/%s)/([^/]+)" % DATE, objects_list),
    ("POST", r"(?:/crm/v3/objects|/crm/objects/%s)/([^/]+)/batch/(create|update|archive|read)"
     % DATE, batch),
    ("GET", r"/cms/v3/blogs/posts|/cms/blogs/%s/posts" % DATE, posts_list),
]


def rate_headers():
    return {"X-HubSpot-RateLimit-Daily": str(ARGS.daily),
            "X-HubSpot-RateLimit-Daily-Remaining": str(max(S["daily"], 0)),
            "X-HubSpot-RateLimit-Interval-Milliseconds": str(ARGS.burst_window_ms),
            "X-HubSpot-RateLimit-Max": str(ARGS.burst_max),
            "X-HubSpot-RateLimit-Remaining": str(max(ARGS.burst_max - len(S["sent"]), 0))}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json;charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def admin(self, path, raw):
        with lock:
            if path == "/__admin/log" and self.command == "GET":
                return self.send(200, S["log"])
            if path == "/__admin/state" and self.command == "GET":
                return self.send(200, {"schemas": list(S["schemas"].values()),
                                       "objects": {t: list(o.values())
                                                   for t, o in S["objects"].items()}})
            if path == "/__admin/reset-log" and self.command == "POST":
                S["log"] = []
                return self.send(200, {})
            if path == "/__admin/config" and self.command == "POST":
                cfg = json.loads(raw or b"{}")
                for k in ("posts", "storm_429", "daily", "fail_5xx", "fail_inputs",
                          "write_delay_ms", "token", "hide_schemas", "lose_writes"):
                    if k in cfg:
                        S[k] = cfg[k]
                if "scopes" in cfg:
                    S["scopes"] = set(cfg["scopes"])
                if "fail_inputs" in cfg:
                    S["failed_once"] = set()
                return self.send(200, {})
        return self.send(404, {"message": "no such admin path"})

    def handle_any(self):
        u = urllib.parse.urlsplit(self.path)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if u.path.startswith("/__admin/"):
            return self.admin(u.path, raw)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        entry = {"method": self.command, "path": u.path, "query": u.query}
        status, body, headers = self.dispatch(u.path, q, raw, entry)
        entry["status"] = status
        with lock:
            S["log"].append(entry)
            headers.update(rate_headers())
        if self.command != "GET" and S["write_delay_ms"]:
            time.sleep(S["write_delay_ms"] / 1000.0)
        self.send(status, body, headers)

    def dispatch(self, path, q, raw, entry):
        with lock:
            auth = self.headers.get("Authorization", "")
            if auth != "Bearer " + S["token"]:
                s, b = err_body(401, "Authentication credentials not found. This API "
                                "supports OAuth 2.0 authentication and you can find more "
                                "details at https://developers.hubspot.com/docs/methods/auth/"
                                "oauth-overview", "INVALID_AUTHENTICATION")
                return s, b, {}
            t = time.monotonic()
            win = ARGS.burst_window_ms / 1000.0
            S["sent"] = [x for x in S["sent"] if t - x < win]
            if S["daily"] <= 0:
                s, b = err_body(429, "You have reached your daily limit.", "RATE_LIMITS",
                                errorType="RATE_LIMIT", policyName="DAILY")
                return s, b, {}
            S["daily"] -= 1
            if S["storm_429"] > 0 or len(S["sent"]) >= ARGS.burst_max:
                if S["storm_429"] > 0:
                    S["storm_429"] -= 1
                entry["rate_limited"] = True
                s, b = err_body(429, "You have reached your ten_secondly_rolling limit.",
                                "RATE_LIMITS", errorType="RATE_LIMIT",
                                policyName="TEN_SECONDLY_ROLLING")
                return s, b, {}
            S["sent"].append(t)
            if S["fail_5xx"] > 0:
                S["fail_5xx"] -= 1
                s, b = err_body(502, "Bad Gateway", "INTERNAL_ERROR")
                return s, b, {}
            body = None
            if self.command == "POST":
                ct = self.headers.get("Content-Type", "")
                if not ct.startswith("application/json"):
                    s, b = err_body(415, "Content-Type must be application/json",
                                    "VALIDATION_ERROR")
                    return s, b, {}
                try:
                    body = json.loads(raw)
                except ValueError:
                    s, b = err_body(400, "Invalid input JSON", "VALIDATION_ERROR")
                    return s, b, {}
                if isinstance(body, dict) and isinstance(body.get("inputs"), list):
                    entry["inputs"] = len(body["inputs"])
            for method, pat, fn in ROUTES:
                m = re.fullmatch(pat, path)
                if m and method == self.command:
                    s, b = fn(q, body, *m.groups())
                    if self.command != "GET" and S["lose_writes"] > 0:
                        # applied, but the answer is lost on the way back
                        S["lose_writes"] -= 1
                        s, b = err_body(502, "Bad Gateway", "INTERNAL_ERROR")
                    return s, b, {}
            s, b = err_body(404, "No route for %s %s" % (self.command, path), "OBJECT_NOT_FOUND")
            return s, b, {}

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
with open(ARGS.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402
os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
srv.serve_forever()
