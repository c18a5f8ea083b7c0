# shellcheck shell=bash
# radosgw.sh - Ceph's S3 gateway (radosgw, Debian's ceph packages) on a
# one-node cluster made for the test on loopback: a monitor, one OSD on
# memstore (in memory), radosgw with beast, a user with fixed keys and one
# bucket whose objects anyone may read (as the edge reads them). Unlike
# s3rver it verifies SigV4 signatures, as AWS does. Source it:
#
#   . tests/lib/radosgw.sh
#   radosgw_start BUCKET   sets RGW_URL RGW_DIR; exports AWS_ACCESS_KEY_ID
#                          and AWS_SECRET_ACCESS_KEY (the user's keys)
#   radosgw_stop           (call it from your EXIT trap)
#
# Start-up takes about 15 s (monitor 1 s, OSD 4 s, radosgw 8 s); start one
# cluster per test script and reuse it.

RGW_DIR="" RGW_URL="" RGW_PIDS=""

LB_LIB_DIR=${LB_LIB_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}	# free-port.py
_rgw_port() {
	python3 "$LB_LIB_DIR/free-port.py"
}

_rgw_wait() { # what command...: 60 s by the clock (a probe may hang 5 s)
	local what=$1 t0=$SECONDS
	shift
	while [ $((SECONDS - t0)) -lt 60 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "radosgw.sh: $what did not come up in $((SECONDS - t0)) s" >&2
	return 1
}

# A one-node Ceph start can miss (an OSD that does not register in time
# was seen once in ~20 starts; on a loaded machine, twice in a row: the
# OSD's first command reached the monitor as "wrong fsid", then the next
# cluster's OSD stayed down for 60 s): up to two more tries on fresh
# ports and a fresh directory, with the OSD's and the monitor's logs
# shown, before the test fails.
radosgw_start() {
	local try
	for try in 1 2 3; do
		_radosgw_start_once "$@" && return 0
		[ "$try" -lt 3 ] && echo "radosgw.sh: the cluster did not start (try $try of 3); trying again" >&2
	done
	return 1
}

_radosgw_start_once() {
	local bucket=${1:-test} d mp rp fsid uuid
	for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool; do
		command -v "$b" >/dev/null || { echo "radosgw.sh: $b is missing (ci/install-deps)" >&2; return 1; }
	done
	d=$(mktemp -d "${TMPDIR:-/tmp}/lb-rgw.XXXXXX")
	RGW_DIR=$d
	mkdir -p "$d/run" "$d/log" "$d/mon" "$d/osd" "$d/rgw"
	mp=$(_rgw_port) rp=$(_rgw_port)
	while [ "$rp" = "$mp" ]; do rp=$(_rgw_port); done
	fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
	uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
	cat >"$d/ceph.conf" <<-CONF
	[global]
	fsid = $fsid
	mon host = v1:127.0.0.1:$mp
	public addr = 127.0.0.1
	cluster addr = 127.0.0.1
	public network = 127.0.0.0/8
	cluster network = 127.0.0.0/8
	ms bind msgr2 = false
	ms bind ipv6 = false
	auth cluster required = none
	auth service required = none
	auth client required = none
	run dir = $d/run
	admin socket = $d/run/\$name.asok
	log file = $d/log/\$name.log
	keyring = $d/keyring
	osd pool default size = 1
	osd pool default min size = 1
	osd pool default pg num = 8
	osd pool default pgp num = 8
	osd pool default pg autoscale mode = off
	mon allow pool size one = true
	mon max pg per osd = 1000
	mon warn on pool no redundancy = false
	# a test monitor's few KB must not refuse to start because the disk
	# holding /tmp is 95 % full ("monitor data filesystem reached
	# concerning levels of available storage space", seen on a shared
	# machine); the OSD keeps its data in memory
	mon data avail crit = 0
	mon data avail warn = 0
	osd crush chooseleaf type = 0
	mon data = $d/mon
	osd data = $d/osd
	osd objectstore = memstore
	# the first boot sometimes fails "init unable to update_crush_device_class:
	# (1) Operation not permitted" (the mon not yet taking the new OSD's
	# command); a one-OSD test cluster needs no device class
	osd class update on start = false
	# nor its crush location: registered below, before the OSD starts
	osd crush update on start = false
	memstore device bytes = 1073741824
	[client.rgw]
	rgw frontends = beast endpoint=127.0.0.1:$rp
	rgw data = $d/rgw
	CONF
	ceph-authtool --create-keyring "$d/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
	monmaptool --create --addv a "[v1:127.0.0.1:$mp]" --fsid "$fsid" "$d/monmap" >/dev/null &&
	timeout 30 ceph-mon -c "$d/ceph.conf" --mkfs -i a --monmap "$d/monmap" \
		--keyring "$d/keyring" </dev/null >"$d/log/mkfs.out" 2>&1 || { radosgw_stop; return 1; }
	ceph-mon -c "$d/ceph.conf" -i a -f </dev/null >"$d/log/mon.out" 2>&1 &
	RGW_PIDS="$!"
	_rgw_wait monitor timeout 5 ceph -c "$d/ceph.conf" mon stat ||
		{ tail -n 8 "$d/log/mon.out" "$d/log/mon.a.log" 3>&2 2>/dev/null >&3; radosgw_stop; return 1; }
	# The OSD is registered and placed in the crush map by the ceph CLI,
	# not by itself at its first boot: the OSD sent those commands before
	# its monitor client had the cluster's fsid, some boots on a loaded
	# machine ("handle_command on fsid 00000000-... != ...", "wrong fsid",
	# "init unable to update_crush_location"), and never came up.
	timeout 30 ceph -c "$d/ceph.conf" osd new "$uuid" 0 >/dev/null 2>&1 &&
	timeout 30 ceph -c "$d/ceph.conf" osd crush add osd.0 1 root=default host=localhost \
		>/dev/null 2>&1 || { echo "radosgw.sh: cannot register the OSD" >&2; radosgw_stop; return 1; }
	timeout 30 ceph-osd -c "$d/ceph.conf" -i 0 --mkfs --osd-uuid "$uuid" \
		</dev/null >"$d/log/osdmkfs.out" 2>&1 || { cat "$d/log/osdmkfs.out" >&2; radosgw_stop; return 1; }
	ceph-osd -c "$d/ceph.conf" -i 0 -f </dev/null >"$d/log/osd.out" 2>&1 &
	RGW_PIDS="$RGW_PIDS $!"
	_rgw_wait OSD sh -c "timeout 5 ceph -c '$d/ceph.conf' osd stat | grep -q '1 up'" ||
		{ tail -n 8 "$d/log/osd.out" "$d/log/osd.0.log" "$d/log/mon.a.log" 3>&2 2>/dev/null >&3; radosgw_stop; return 1; }
	radosgw -c "$d/ceph.conf" -n client.rgw -f </dev/null >"$d/log/rgw.out" 2>&1 &
	RGW_PIDS="$RGW_PIDS $!"
	RGW_URL="http://127.0.0.1:$rp"
	_rgw_wait radosgw curl -sf -o /dev/null "$RGW_URL/" || { tail -5 "$d/log/rgw.out" >&2; radosgw_stop; return 1; }
	export AWS_ACCESS_KEY_ID=LBTESTACCESSKEY AWS_SECRET_ACCESS_KEY=lbtest-secret-key-0123456789
	unset AWS_SESSION_TOKEN
	timeout 60 radosgw-admin -c "$d/ceph.conf" user create --uid=lbtest --display-name=lbtest \
		--access-key="$AWS_ACCESS_KEY_ID" --secret-key="$AWS_SECRET_ACCESS_KEY" \
		>"$d/log/user.out" 2>&1 || { cat "$d/log/user.out" >&2; radosgw_stop; return 1; }
	# the bucket, its objects readable by anyone (GetObject policy)
	python3 - "$RGW_URL" "$bucket" <<-'PY' || { radosgw_stop; return 1; }
	import json, os, sys
	import botocore.session, botocore.config
	c = botocore.session.get_session().create_client(
	    "s3", endpoint_url=sys.argv[1], region_name="us-east-1",
	    aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
	    aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
	    config=botocore.config.Config(s3={"addressing_style": "path"}))
	b = sys.argv[2]
	c.create_bucket(Bucket=b)
	c.put_bucket_policy(Bucket=b, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
	    {"Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:ListBucket"],
	     "Resource": ["arn:aws:s3:::%s" % b, "arn:aws:s3:::%s/*" % b]}]}))
	PY
}

radosgw_stop() {
	local p
	for p in $RGW_PIDS; do kill "$p" 2>/dev/null; done
	for p in $RGW_PIDS; do wait "$p" 2>/dev/null; done
	RGW_PIDS=""
	if [ -n "$RGW_DIR" ] && [ -z "${KEEP:-}" ]; then rm -rf "$RGW_DIR"; fi
	RGW_DIR=""
	return 0
}
