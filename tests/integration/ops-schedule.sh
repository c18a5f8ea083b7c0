#!/usr/bin/env bash
# ops-schedule: the scheduled job as the three schedulers run it.
#   - the GitHub Actions workflow passes @action-validator/cli, the GitLab CI
#     job passes gitlab-ci-local's validation against GitLab's JSON schema,
#     the systemd units pass systemd-analyze verify (and each validator
#     rejects a broken copy, so these checks can fail);
#   - every scheduler runs ci/nightly, and ci/nightly does a real night
#     against a site on loopback: exit code, log and exit-code artifacts, the
#     operator's rebuild of one endpoint, a typo'd endpoint refused.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/origin.sh
. tests/data/crawl/lib.sh
crawl_setup
bin=$PWD/node_modules/.bin
not() { ! "$@"; }

echo "== GitHub Actions"
check "the workflow is valid" "$bin/action-validator" .github/workflows/nightly.yml
sed 's/cron: "0 0 \* \* \*"/cron: 0 0 * * */; s/runs-on:/runs_on:/' .github/workflows/nightly.yml > "$WORK/broken.yml"
check "a broken workflow is rejected" bash -c "! '$bin/action-validator' '$WORK/broken.yml' >/dev/null 2>&1"
check "it runs at 00:00 UTC" grep -q 'cron: "0 0 \* \* \*"' .github/workflows/nightly.yml
check "it can be dispatched with an endpoint" grep -q 'LINKBOT_ENDPOINT: \${{ inputs.endpoint }}' .github/workflows/nightly.yml
check "its night is ci/nightly" grep -q 'run: ci/nightly$' .github/workflows/nightly.yml

echo "== GitLab CI"
gl() { # DIR: validates DIR/.gitlab-ci.yml
	(cd "$1" && git init -q . 2>/dev/null; "$bin/gitlab-ci-local" --list) > "$1/out" 2>&1 &&
		grep -q "json schema validated" "$1/out"
}
mkdir -p "$WORK/gl" "$WORK/glbad"
cp infra/gitlab-ci.yml "$WORK/gl/.gitlab-ci.yml"
sed 's/expire_in:/expires_in:/' infra/gitlab-ci.yml > "$WORK/glbad/.gitlab-ci.yml"
check "the GitLab job is valid" gl "$WORK/gl"
check "a broken GitLab job is rejected" not gl "$WORK/glbad"
check "its script is ci/nightly" grep -q -- '- ci/nightly$' infra/gitlab-ci.yml

echo "== systemd"
sd=$WORK/systemd
mkdir -p "$sd"
for f in infra/systemd/*.service infra/systemd/*.timer; do
	sed "s#/opt/linkbot#$PWD#g; s#/etc/linkbot/env#$sd/env#; s#/var/lib/linkbot#$WORK#g" "$f" > "$sd/$(basename "$f")"
done
touch "$sd/env"
cp "$sd/linkbot-rebuild@.service" "$sd/linkbot-rebuild@t-e.service"
check "the timer and services verify" systemd-analyze verify "$sd/linkbot-nightly.timer" \
	"$sd/linkbot-nightly.service" "$sd/linkbot-rebuild@t-e.service"
sed -i 's/^OnCalendar=.*/OnCalendar=every night/' "$sd/linkbot-nightly.timer"
check "a broken timer is rejected" bash -c "! systemd-analyze verify '$sd/linkbot-nightly.timer' 2>/dev/null"
check "the timer fires at 00:00 UTC" grep -q '^OnCalendar=\*-\*-\* 00:00:00 UTC$' infra/systemd/linkbot-nightly.timer
check "the services run ci/nightly" test "$(cat infra/systemd/*.service | grep -c '^ExecStart=/opt/linkbot/ci/nightly$')" -eq 2

echo "== ci/nightly, a real night"
make_site "$WORK/site" 12
origin_start "$WORK/site/htdocs" "$WORK/site.conf" || exit 1
cfg=$WORK/linkbot.yaml
crawl_config "$cfg" "  pages_per_minute: 240" "      - sitemap: $ORIGIN_URL/sitemap.xml" \
"      blog:
        - \"/blog/{slug}/\""
art=$WORK/artifacts
LINKBOT_CONFIG=$cfg LINKBOT_ARTIFACTS=$art ci/nightly > "$WORK/night.log" 2>&1
check "the night exits 0" test $? -eq 0
check "12 answers published" test "$(ls "$WORK/public/t/e/pages" | wc -l)" -eq 12
check "the log is kept as an artifact" grep -q "run done: 1 client(s), 1 endpoint(s) done, 0 failed" "$art/run.log"
check "and the exit code" test "$(cat "$art/exit-code")" = 0
LINKBOT_CONFIG=$cfg LINKBOT_ARTIFACTS=$art LINKBOT_ENDPOINT=t/typo ci/nightly > "$WORK/typo.log" 2>&1
check "a typo'd endpoint: exit 2, named" bash -c "test $? -eq 2 && grep -q \"no client, endpoint or project 't/typo'\" '$art/run.log'"
LINKBOT_CONFIG=$cfg LINKBOT_ARTIFACTS=$art ci/nightly --endpoint t/e > "$WORK/rebuild.log" 2>&1
check "the operator's rebuild of t/e exits 0" test $? -eq 0
check "it ran only t/e" grep -q "linkbot run --config $cfg --endpoint t/e" "$art/run.log"
ci/nightly --bogus 2>/dev/null
check "an unknown argument: exit 2" test $? -eq 2

echo "ops-schedule: $FAILS failed"
[ "$FAILS" -eq 0 ]
