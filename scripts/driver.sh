# The comparison drivers' common part: their result directory, the start
# of its conditions file, one guest boot, and what a failed boot says.
# compare-kernels (interleaved, or paired in one boot) and
# compare-syslatency source it after lib.sh and guest_knobs, so that they
# cannot drift apart. Source it, do not run it.
# shellcheck shell=sh

# run_dir SUFFIX: a new result directory RESULTS/<timestamp>SUFFIX, in
# $run. A run that stops before its report.txt leaves FAILED there, with
# what fail said.
run_dir() {
	mkdir -p "$RESULTS" || die "cannot create $RESULTS"
	RESULTS=$(cd "$RESULTS" && pwd)
	_rd_base=$RESULTS/$(date +%Y%m%d-%H%M%S)$1
	run=$_rd_base _rd_n=1
	while ! mkdir "$run" 2>/dev/null; do
		_rd_n=$((_rd_n + 1))
		run=$_rd_base-$_rd_n
		[ $_rd_n -lt 100 ] || die "cannot create a directory under $RESULTS"
	done
	failure=
	trap run_finish EXIT
}
fail() { failure=$*; msg "error: $*"; exit 1; }
run_finish() {
	_rf_rc=$?
	if [ $_rf_rc != 0 ] && [ ! -f "$run/report.txt" ]; then
		printf '%s\n' "${failure:-stopped with status $_rf_rc}" >"$run/FAILED"
		msg "incomplete results in $run (see FAILED)"
	fi
}

# conditions_common: the key=value lines every conditions file starts with.
conditions_common() {
	echo "machine=$(uname -m) $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "host_cores=$(ncpus)"
	echo "vcpus=$VCPUS"
	echo "guest_mem=$GUEST_MEM"
	echo "icount=${ICOUNT:-off}${ICOUNT:+ (guest clock: 2^$ICOUNT ns per instruction)}"
	echo "seconds=$DURATION"
	echo "boots=$BOOTS"
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	# what ran: the experiment (make run EXPERIMENT=), the project's
	# commit and the series, so that a number can be traced to its code
	echo "experiment=${EXPERIMENT:-none}"
	echo "project=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "series=$(series_hash)"
}

# run_accel: how the boots so far ran (qemu/run's qemu-run.env): "tcg",
# or "mixed (kvm, tcg)".
run_accel() {
	find "$run" -name qemu-run.env -exec sed -n 's/^accel=//p' {} + 2>/dev/null |
		sort -u | awk '{ a[++n] = $0 } END {
			if (!n) print "unknown"
			else if (n == 1) print a[1]
			else { s = a[1]; for (i = 2; i <= n; i++) s = s ", " a[i]; print "mixed (" s ")" }
		}'
}

# guest_boot BOOTDIR QEMU-RUN-ARGUMENT... -- CMD...: one boot under
# qemu/run --out $run, its output in BOOTDIR/run.log, its console log
# and qemu-run.env moved into BOOTDIR; qemu/run's status.
guest_boot() {
	_gb_dir=$1
	shift
	"$TOP/qemu/run" --out "$run" "$@" >"$_gb_dir/run.log" 2>&1
	_gb_rc=$?
	for _gb_f in console.log qemu-run.env; do
		[ ! -f "$run/$_gb_f" ] || mv "$run/$_gb_f" "$_gb_dir/$_gb_f"
	done
	return $_gb_rc
}

# boot_failed STATUS BOOTDIR WHAT LIMIT: say how boot WHAT failed (the end
# of its log, then one line) and stop the run.
boot_failed() {
	sed 's/^/  | /' "$2/run.log" | tail -n 15 >&2
	_bf_con=
	[ ! -s "$2/console.log" ] || _bf_con=" (console: $2/console.log)"
	case $1 in
	125) fail "$3: the kernel did not boot or crashed$_bf_con" ;;
	124) fail "$3: ran past ${4}s and was stopped$_bf_con" ;;
	*) fail "$3: the guest's command failed with status $1 (log: $2/run.log)" ;;
	esac
}
