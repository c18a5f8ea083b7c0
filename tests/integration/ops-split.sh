#!/usr/bin/env bash
# ops-split: the night split over N jobs of a real scheduler (docs/scaling.md).
#   - the Kubernetes CronJob of infra/kubernetes/ passes the Kubernetes
#     OpenAPI schemas (kubernetes-models, offline: tests/lib/k8s-check.mjs)
#     and the GitHub Actions matrix of infra/github/ passes
#     @action-validator/cli; each validator rejects a broken copy;
#   - the fields the split relies on hold by value (Indexed, Forbid, N the
#     same in completions, parallelism and LINKBOT_CLIENTS, ...), and the
#     ConfigMap's configuration loads in linkbot;
#   - each scheduler's N jobs, run as it would run them (the pod's env with
#     its completion index; the matrix from the plan job's own script), are
#     ci/nightly runs that split three clients of a loopback site: every
#     client in exactly one job, the one its id predicts, each job exit 0,
#     an empty share saying so.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
bin=$PWD/node_modules/.bin
k8s=infra/kubernetes/linkbot-nightly.yaml
gha=infra/github/nightly-split.yml
json() { node tests/lib/k8s-check.mjs --json "$1"; }
# jq-like: py FILE EXPR, EXPR in Python over d (the documents of FILE)
py() { json "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

echo "== Kubernetes: schema"
check "the manifests are valid Kubernetes objects" node tests/lib/k8s-check.mjs "$k8s"
sed 's/concurrencyPolicy: Forbid/concurrencyPolicy: Never/' "$k8s" > "$WORK/k8s-enum.yaml"
sed 's/completions: 4 /completions: four /' "$k8s" > "$WORK/k8s-type.yaml"
sed '/^            - name: linkbot$/s/- name: linkbot/- image2: x/' "$k8s" > "$WORK/k8s-req.yaml"
for b in enum type req; do
	check "a broken copy ($b) is rejected" bash -c "! node tests/lib/k8s-check.mjs '$WORK/k8s-$b.yaml' >/dev/null 2>&1"
done

echo "== Kubernetes: what the split relies on"
cj='[x for x in d if x["kind"] == "CronJob"][0]'
job="$cj[\"spec\"][\"jobTemplate\"][\"spec\"]"
pod="$job[\"template\"][\"spec\"]"
ctr="$pod[\"containers\"][0]"
env="{e[\"name\"]: e for e in $ctr[\"env\"]}"
n=$(py "$k8s" "$job['completions']")
check "a CronJob at 00:00 UTC" test "$(py "$k8s" "$cj['spec']['schedule'], $cj['spec']['timeZone']")" = "0 0 * * * Etc/UTC"
check "never two nights at once (Forbid)" test "$(py "$k8s" "$cj['spec']['concurrencyPolicy']")" = Forbid
check "an Indexed Job" test "$(py "$k8s" "$job['completionMode']")" = Indexed
check "N ($n) pods at once" test "$(py "$k8s" "$job['parallelism']")" = "$n"
check "retried per index, restartPolicy Never" test "$(py "$k8s" "$job['backoffLimitPerIndex'] >= 1, $pod['restartPolicy']")" = "True Never"
check "exit 1-3 fail the index without a retry" test "$(py "$k8s" "[r['onExitCodes']['values'] for r in $job['podFailurePolicy']['rules'] if r['action'] == 'FailIndex']")" = "[[1, 2, 3]]"
check "SHARD is the completion index" test "$(py "$k8s" "$env['SHARD']['valueFrom']['fieldRef']['fieldPath']")" = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
check "LINKBOT_CLIENTS is SHARD/N, N = completions" test "$(py "$k8s" "$env['LINKBOT_CLIENTS']['value']")" = "\$(SHARD)/$n"
check "the S3 keys come from a Secret" test "$(py "$k8s" "sorted($env[k]['valueFrom']['secretKeyRef']['name'] for k in ('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'))")" = "['linkbot-s3', 'linkbot-s3']"
check "resources are requested" test "$(py "$k8s" "sorted($ctr['resources']['requests'])")" = "['cpu', 'ephemeral-storage', 'memory']"
check "the pod runs ci/nightly" test "$(py "$k8s" "$ctr['command']")" = "['/opt/linkbot/ci/nightly']"
check "the configuration is the ConfigMap's, mounted where LINKBOT_CONFIG says" test \
	"$(py "$k8s" "[v['configMap']['name'] for v in $pod['volumes'] if 'configMap' in v] == [x['metadata']['name'] for x in d if x['kind'] == 'ConfigMap'], [m['mountPath'] for m in $ctr['volumeMounts'] if m['name'] == 'config'][0] + '/linkbot.yaml' == $env['LINKBOT_CONFIG']['value']")" = "True True"
py "$k8s" "[x for x in d if x['kind'] == 'ConfigMap'][0]['data']['linkbot.yaml']" > "$WORK/cm.yaml"
"$LINKBOT" build -c "$WORK/cm.yaml" -e zz-none > "$WORK/cm.log" 2>&1
check "linkbot loads the ConfigMap's configuration (exit 2 for -e zz-none, not 3)" bash -c \
	"test $? -eq 2 && grep -q \"no client, endpoint or project 'zz-none'.*known: acme\" '$WORK/cm.log'"

echo "== GitHub Actions: schema"
check "the matrix workflow is valid" "$bin/action-validator" "$gha"
sed 's/runs-on:/runs_on:/; s/fail-fast: false/fail-fast: never/' "$gha" > "$WORK/broken.yml"
check "a broken workflow is rejected" bash -c "! '$bin/action-validator' '$WORK/broken.yml' >/dev/null 2>&1"

echo "== GitHub Actions: what the split relies on"
check "it runs at 00:00 UTC, in nightly.yml's concurrency group" test \
	"$(py "$gha" "d[0]['on']['schedule'][0]['cron'], d[0]['concurrency']['group']")" = "0 0 * * * linkbot-nightly"
check "the matrix is the plan's shards" test "$(py "$gha" "d[0]['jobs']['night']['strategy']['matrix']['shard']")" = '${{ fromJSON(needs.plan.outputs.shards) }}'
check "a failed share does not cancel the others" test "$(py "$gha" "d[0]['jobs']['night']['strategy']['fail-fast']")" = False
check "LINKBOT_CLIENTS is shard/n" test "$(py "$gha" "d[0]['jobs']['night']['env']['LINKBOT_CLIENTS']")" = '${{ matrix.shard }}/${{ needs.plan.outputs.n }}'
check "its night is ci/nightly" test "$(py "$gha" "[s['run'] for s in d[0]['jobs']['night']['steps'] if s.get('run', '').startswith('ci/nightly')]")" = "['ci/nightly']"
py "$gha" "d[0]['jobs']['plan']['steps'][0]['run']" > "$WORK/plan.sh"
plan() { # LINKBOT_SHARDS -> the step's outputs, one a line
	: > "$WORK/plan.out"
	LINKBOT_SHARDS=$1 GITHUB_OUTPUT=$WORK/plan.out bash -e "$WORK/plan.sh" > "$WORK/plan.log" 2>&1 &&
		tr '\n' ' ' < "$WORK/plan.out"
}
check "plan: LINKBOT_SHARDS=3 -> 3 shares" test "$(plan 3)" = "n=3 shards=[0,1,2] "
check "plan: LINKBOT_SHARDS=1 -> the whole night" test "$(plan 1)" = "n=1 shards=[0] "
for bad in 0 abc -2 300 "3 "; do
	check "plan: LINKBOT_SHARDS='$bad' refused, named" bash -c \
		"! (LINKBOT_SHARDS='$bad' GITHUB_OUTPUT=/dev/null bash -e '$WORK/plan.sh' > '$WORK/bad.log' 2>&1) && grep -q \"not '$bad'\" '$WORK/bad.log'"
done

echo "== the schedulers' jobs, run as they run them: ci/nightly of each share"
make_site "$WORK/site" 4
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
{
	printf 'store: %s\nstate: %s\ncrawl:\n  pages_per_minute: 240\n  bot_info_url: https://example.com/bot\n  allow_private: true\nclients:\n' \
		"$WORK/public" "$WORK/state"
	for c in t u v; do
		printf '  - id: %s\n    sources:\n      - sitemap: %s/sitemap.xml\n    sets:\n      blog: ["/blog/{slug}/"]\n    endpoints:\n      - {id: e, source: blog, links: 2, min_incoming: 1}\n' \
			"$c" "$ORIGIN_URL"
	done
} > "$cfg"
split_night() { # NAME N CLIENTS-VALUE...: the jobs, one after the other
	local name=$1 n=$2 i=0 v c want got
	shift 2
	for v in "$@"; do
		LINKBOT_CONFIG=$cfg LINKBOT_ARTIFACTS=$WORK/art-$name-$i LINKBOT_CLIENTS=$v \
			ci/nightly > "$WORK/$name-$i.log" 2>&1
		check "$name job $v exits 0" test $? -eq 0
		check "$name job $v ran linkbot run --clients $v" grep -q -- "--clients $v\$" "$WORK/art-$name-$i/run.log"
		i=$((i + 1))
	done
	for c in t u v; do
		want=$(python3 tests/lib/share.py "$n" "$c" | cut -d' ' -f2)
		got=$(for i in $(seq 0 $((n - 1))); do [ -f "$WORK/art-$name-$i/reports/$c/report.json" ] && echo "$i"; done)
		check "$name: client $c in job $want's artifacts only" test "$got" = "$want"
	done
	for i in $(seq 0 $((n - 1))); do
		if ! ls "$WORK/art-$name-$i/reports" >/dev/null 2>&1; then
			check "$name: job $i/$n, an empty share, says so" grep -q "clients $i/$n: no client .* falls in this share; nothing to do" "$WORK/art-$name-$i/run.log"
		fi
	done
}
# the pods: each container's LINKBOT_CLIENTS with its completion index
pods=()
tmpl=$(py "$k8s" "$env['LINKBOT_CLIENTS']['value']")
for i in $(seq 0 $((n - 1))); do pods+=("${tmpl/\$(SHARD)/$i}"); done
split_night k8s "$n" "${pods[@]}"
check "the Kubernetes night has an empty share (3 clients, $n pods)" bash -c "grep -l 'nothing to do' '$WORK'/art-k8s-*/run.log >/dev/null"
# the matrix: the plan's shards, LINKBOT_SHARDS=3
plan 3 > /dev/null
jobs=()
for s in $(sed -n 's/^shards=\[\(.*\)\]$/\1/p' "$WORK/plan.out" | tr , ' '); do jobs+=("$s/3"); done
split_night gha 3 "${jobs[@]}"
LINKBOT_CONFIG=$cfg LINKBOT_ARTIFACTS=$WORK/art-bad LINKBOT_CLIENTS=3/3 ci/nightly > "$WORK/bad.log" 2>&1
check "ci/nightly with LINKBOT_CLIENTS=3/3: exit 2" test $? -eq 2

echo "ops-split: $FAILS failed"
[ "$FAILS" -eq 0 ]
