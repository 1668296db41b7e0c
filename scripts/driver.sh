# The comparison drivers' common part: their result directory, the start
# of its conditions file, one guest boot, what a failed boot says, and
# the perf diff of the profiles. compare-kernels (interleaved, or paired
# in one boot) and compare-syslatency source it after lib.sh and
# guest_knobs, so that they cannot drift apart; compare-native for the
# perf diff. Source it, do not run it.
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

# profile_diff RUN BUILDID PSECS VARIANTS BASELINE LABEL...: perf diff of
# the boot-1 profiles (RUN/LABEL/VARIANT/perf.data), per variant, the
# baseline against each other label, on stdout. The kernels' kallsyms are
# in the run's build-id cache BUILDID, found by the build-id in each
# perf.data.
profile_diff() {
	_pd_run=$1 _pd_ids=$2 _pd_secs=$3 _pd_variants=$4 _pd_base=$5
	shift 5
	echo "perf diff of the boot-1 profiles (perf record -g, $_pd_secs s), per variant:"
	echo "baseline $_pd_base against each other kernel. Delta is in percentage"
	echo "points of all samples; symbols come from the run's build-id cache:"
	echo "  perf --buildid-dir $_pd_ids diff -f A/perf.data B/perf.data"
	for _pd_v in $_pd_variants; do
		for _pd_l; do
			_pd_a=$_pd_run/$_pd_base/$_pd_v/perf.data _pd_b=$_pd_run/$_pd_l/$_pd_v/perf.data
			printf '\n=== %s: %s (baseline) vs %s\n' "$_pd_v" "$_pd_base" "$_pd_l"
			if [ ! -f "$_pd_a" ] || [ ! -f "$_pd_b" ]; then
				echo "(no profile: $_pd_a or $_pd_b is missing)"
				continue
			fi
			perf --buildid-dir "$_pd_ids" diff -f "$_pd_a" "$_pd_b" 2>&1 |
				grep -v -e '^#' -e '^$' | head -n 40 >"$_pd_run/diff.tmp"
			cat "$_pd_run/diff.tmp"
			if grep -q '\[k\] 0x' "$_pd_run/diff.tmp"; then
				echo "(perf diff left kernel addresses unresolved: the top symbols of each"
				echo " profile.txt, as perf report resolved them, follow)"
				diff -u "$_pd_run/$_pd_base/$_pd_v/profile.txt" "$_pd_run/$_pd_l/$_pd_v/profile.txt" |
					grep -E '^[-+] +[0-9.]+%'
			fi
		done
	done
	rm -f "$_pd_run/diff.tmp"
}
