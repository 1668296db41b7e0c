# TAP helpers for the test scripts; source it.
# shellcheck shell=sh
tap_failed=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; tap_failed=1; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
skip() { echo "ok - $1 # SKIP $2"; }
tap_done() { exit $tap_failed; }
