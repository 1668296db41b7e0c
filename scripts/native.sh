# Native mode's common part: the benchmark on the kernel the machine
# booted, no QEMU. compare-native (the variants, the report) and
# native-sweep (faults/s by thread count) source it after lib.sh: the
# knobs, the label, the result directory a label at a time, its
# conditions, the sysctls, one run of guest/run. Source it after lib.sh
# and driver.sh (fail), do not run it.
# shellcheck shell=sh

# native_knobs BOOTS RUNS VARIANTS: the knobs, defaulted as given and
# checked as make run's (guest_knobs). VCPUS, GUEST_MEM and ICOUNT are a
# guest's: natively the thread counts follow the online CPUs, in VCPUS.
native_knobs() {
	for _nk in VCPUS GUEST_MEM ICOUNT; do
		eval "_nv=\${$_nk:-}"
		[ -z "$_nv" ] ||
			die_usage "$_nk is a QEMU guest's; natively the machine has what it has ($(ncpus) online CPUs; NAME-Nt for fewer threads)"
	done
	guest_knobs "$1"
	RUNS=${RUNS:-$2} VARIANTS=${VARIANTS:-$3}
	knob_posint RUNS "$RUNS"
}

# native_label ITEM: LABEL[+SYSCTL=VALUE...] into $label and $sysctls
# (space-separated SYSCTL=VALUE), as compare-kernels takes a kernel's.
native_label() {
	[ -n "$1" ] || die_usage "no LABEL: name what the machine booted, e.g. make $NATIVE_TARGET LABEL=spf"
	label=${1%%+*} sysctls=
	if [ "$label" != "$1" ]; then
		_nl_rest=${1#*+}
		while :; do
			_nl_piece=${_nl_rest%%+*}
			printf '%s\n' "$_nl_piece" | grep -Eqx '[a-z][a-z0-9_]*([./][a-z0-9_-]+)+=[^[:space:]]+' ||
				die_usage "'+$_nl_piece' in '$1' is not +SYSCTL=VALUE (e.g. +vm.speculative_page_fault=0)"
			sysctls="${sysctls:+$sysctls }$_nl_piece"
			[ "$_nl_piece" != "$_nl_rest" ] || break
			_nl_rest=${_nl_rest#*+}
		done
	fi
	printf '%s\n' "$label" | grep -Eqx '[A-Za-z0-9][A-Za-z0-9_.-]*' ||
		die_usage "label '$label' must be letters, digits, '_', '.', '-' (starting with a letter or digit)"
	# The result directory's own files and directories beside the labels.
	case $label in
	perf-buildid | conditions | *.txt | *.png | *.gp | *.dat)
		die_usage "label '$label' is reserved: the result directory has a file of that name" ;;
	esac
}

# native_dir NAME: $dir, RESULTS/NAME, where every label of a comparison
# lands, one invocation (one boot of the machine) at a time.
native_dir() {
	dir=$RESULTS/$1
	case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
}

# native_labels: the labels of $dir that ran to the end, in the order
# they ran (the conditions' kernels= line), the first the baseline.
native_labels() {
	[ ! -f "$dir/conditions" ] || sed -n 's/^kernels=//p' "$dir/conditions"
}

# native_condition KEY: its value in $dir/conditions.
native_condition() {
	awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$dir/conditions"
}

# native_shared: the conditions every label of $dir must share, one
# key=value a line; the caller's extra ones (NATIVE_SHARED_EXTRA lines)
# follow.
native_shared() {
	echo "mode=native, no QEMU: each label ran on the kernel the machine had booted; boot-N is the N-th repetition within that one boot"
	echo "machine=$(uname -m) $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "cpus=$VCPUS online of $(getconf _NPROCESSORS_CONF 2>/dev/null || echo "$VCPUS") (the variants' thread counts)"
	echo "seconds=$DURATION"
	echo "runs=$RUNS"
	echo "boots=$BOOTS (repetitions in one boot)"
	echo "bench_thp=$THP"
	[ -z "${NATIVE_SHARED_EXTRA:-}" ] || printf '%s\n' "$NATIVE_SHARED_EXTRA"
}

# native_claim: check that LABEL can join $dir (not there yet, the same
# machine and knobs as the labels before it: status 2 otherwise, the
# knob named), and with NATIVE_CLAIM=1 create $dir/$label and, in a new
# $dir, the conditions' shared part.
native_claim() {
	[ ! -e "$dir/$label" ] ||
		die_usage "label '$label' is in $dir already: another label, or remove $dir/$label to run it again"
	if [ -f "$dir/conditions" ]; then
		native_shared | while IFS= read -r _nc_line; do
			_nc_key=${_nc_line%%=*}
			_nc_was=$(native_condition "$_nc_key")
			[ "$_nc_was" = "${_nc_line#*=}" ] && continue
			case $_nc_key in
			seconds) _nc_why="DURATION=${_nc_was}" ;;
			runs) _nc_why="RUNS=${_nc_was}" ;;
			boots) _nc_why="BOOTS=${_nc_was%% *}" ;;
			bench_thp) _nc_why="THP=${_nc_was}" ;;
			profile_duration) _nc_why="PROFILE_DURATION=${_nc_was}" ;;
			*) _nc_why="$_nc_key=$_nc_was, here ${_nc_line#*=}" ;;
			esac
			die_usage "$dir ran $(native_labels) with $_nc_why: every label the same, or another RESULTS"
		done || exit 2
	fi
	[ "${NATIVE_CLAIM:-0}" = 1 ] || return 0
	mkdir -p "$dir" || die "cannot create $dir"
	mkdir "$dir/$label" 2>/dev/null ||
		die_usage "label '$label' is in $dir already: another label, or remove $dir/$label to run it again"
	[ -f "$dir/conditions" ] || { native_shared && echo "kernels="; } >"$dir/conditions" ||
		die "cannot write $dir/conditions"
	claimed=1
}

# native_root WHAT: status 1 unless root, which perf and the sysctls need.
native_root() {
	[ "$(id -u)" = 0 ] ||
		die "$1 needs root (perf on the kernel's events and tracepoints, /proc/sys writes): run it as root, e.g. sudo make $NATIVE_TARGET LABEL=$label"
}

# native_ready VARIANT-Nt: what a QEMU guest gets from qemu/run for the
# variant (configs/variants) must be there on the machine; status 1 saying
# what is missing.
native_ready() {
	case " $(variant_qemu_args "$1") " in
	*" --ext4 "*)
		_nr_fs=$(findmnt -n -o FSTYPE --target /run/ext4 2>/dev/null)
		[ -d /run/ext4 ] && [ "$_nr_fs" = ext4 ] ||
			die "variant $1 writes its file in /run/ext4, which must be an ext4 mount (qemu/run --ext4 makes one in a guest): mount one there" ;;
	esac
	case " $(variant_qemu_args "$1") " in
	*" --swap "*)
		[ "$(wc -l </proc/swaps)" -gt 1 ] ||
			die "variant $1 pages out to swap and this machine has none (qemu/run --swap gives a guest zram): swapon a device first" ;;
	esac
	case " $(variant_qemu_args "$1") " in
	*" numa_balancing=enable "*)
		_nr_nodes=0
		for _nr_n in /sys/devices/system/node/node[0-9]*; do
			[ -d "$_nr_n" ] && _nr_nodes=$((_nr_nodes + 1))
		done
		_nr_bal=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo absent)
		if [ "$_nr_nodes" -lt 2 ] || [ "$_nr_bal" = 0 ] || [ "$_nr_bal" = absent ]; then
			die "variant $1 needs NUMA balancing on a machine with two NUMA nodes or more (this one has $_nr_nodes; kernel.numa_balancing=$_nr_bal)"
		fi ;;
	esac
}

# native_sysctls_ready: each of $sysctls exists on this kernel (status 1
# naming it otherwise); their values now go to $sysctls_before, PATH=VALUE
# lines, which native_finish writes back: the machine is left as it was.
native_sysctls_ready() {
	sysctls_before=
	for _ns in $sysctls; do
		_ns_name=${_ns%%=*}
		_ns_path=/proc/sys/$(printf '%s' "$_ns_name" | tr . /)
		[ -f "$_ns_path" ] ||
			die "sysctl $_ns_name does not exist on this kernel ($(uname -r)): boot one that has it, or leave +$_ns out of the label"
		sysctls_before="$sysctls_before$_ns_path=$(cat "$_ns_path")
"
	done
}

# native_tools: perf and the project's programs, built here.
native_tools() {
	command -v perf >/dev/null || die "perf not found: run 'make deps-native'"
	make -s -C "$TOP/bench/multi-fault-all" >&2 || die "cannot build bench/multi-fault-all"
	make -s -C "$TOP/guest/slab-peak" >&2 || die "cannot build guest/slab-peak"
	make -s -C "$TOP/report" >&2 || die "cannot build report"
}

# native_start: after native_claim with NATIVE_CLAIM=1: a failure or an
# interruption from here on leaves $dir/$label/FAILED saying why, and the
# sysctls are set back in any case.
native_start() {
	failure=
	load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
	date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	_ns_load=${load_start%% *}
	if [ "$(awk -v l="$_ns_load" -v n="$VCPUS" 'BEGIN { print (l >= n / 2) }')" = 1 ]; then
		msg "warning: load average $_ns_load at the start: something else runs; expect noise"
	fi
	trap native_finish EXIT
	trap 'failure="interrupted"; exit 130' INT TERM HUP
}
native_finish() {
	_nf_rc=$?
	printf '%s' "${sysctls_before:-}" | while IFS= read -r _nf; do
		printf '%s\n' "${_nf#*=}" >"${_nf%%=*}" 2>/dev/null ||
			msg "warning: could not set ${_nf%%=*} back to '${_nf#*=}'"
	done
	if [ "$_nf_rc" != 0 ] && [ "${claimed:-0}" = 1 ]; then
		printf '%s\n' "${failure:-stopped with status $_nf_rc}" >"$dir/$label/FAILED"
		msg "incomplete: $dir/$label (see FAILED); remove it to run '$label' again"
	fi
}

# native_run [--profile] VARIANT-Nt BOOT: one run of guest/run on this
# machine into $dir/$label, its messages in the boot's run.log, then
# report/extract of its output, as compare-kernels does after a guest's
# boot.
native_run() {
	_nr_prof=
	[ "$1" != --profile ] || { _nr_prof=--profile; shift; }
	_nr_boot=$dir/$label/$1/boot-$2
	mkdir -p "$_nr_boot" || fail "cannot create $_nr_boot"
	# shellcheck disable=SC2086 # $_nr_prof and $sysctls: lists of words
	if ! DURATION=$DURATION RUNS=$RUNS THP=$THP PROFILE_DURATION=${psecs:-} \
		PERF_BUILDID_DIR=$dir/perf-buildid \
		"$TOP/guest/run" --native $_nr_prof "$dir/$label" "$1" "$2" $sysctls \
		>"$_nr_boot/run.log" 2>&1; then
		sed 's/^/  | /' "$_nr_boot/run.log" | tail -n 15 >&2
		fail "$label: $1, boot $2: guest/run failed (log: $_nr_boot/run.log)"
	fi
	if [ -n "$_nr_prof" ] && [ -f "$dir/$label/$1/lock.txt" ]; then
		"$TOP/report/extract" --lock "$dir/$label/$1/lock.txt" "$_nr_boot"
	else
		"$TOP/report/extract" "$_nr_boot"
	fi || fail "$label: $1, boot $2: its output could not be read"
}

# native_done VARIANTS: the label's conditions into $dir/conditions, the
# label last on its kernels= line: from now on it is part of the reports.
native_done() {
	_nd_guest=$dir/$label/guest
	_nd_key() { sed -n "s/^$1: //p" "$_nd_guest" | head -n 1; }
	_nd_btime=$(awk '$1 == "btime" { print $2 }' /proc/stat)
	{
		awk -v l="$label" '/^kernels=/ { $0 = $0 (length($0) > 8 ? " " : "") l } { print }' \
			"$dir/conditions"
		echo "kernel.$label=$(uname -r), $(uname -v)"
		echo "booted.$label=$(date -u -d "@$_nd_btime" +%Y-%m-%dT%H:%M:%SZ)"
		echo "cmdline.$label=$(cat /proc/cmdline)"
		echo "date.$label=$date_start"
		echo "project.$label=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
		echo "sysctls.$label=${sysctls:-none}"
		echo "host_load.$label=$load_start at the start, $(cut -d ' ' -f 1-3 /proc/loadavg) at the end (1, 5, 15 min)"
		echo "mem_total.$label=$(_nd_key mem_total)"
		echo "thp.$label=$(_nd_key thp) (transparent_hugepage/enabled)"
		echo "clocksource.$label=$(_nd_key clocksource)"
		echo "variants.$label=$1"
	} >"$dir/conditions.new" && mv "$dir/conditions.new" "$dir/conditions" ||
		fail "cannot write $dir/conditions"
	# Complete: a report that fails from here on leaves no FAILED.
	claimed=0
}

# native_pick_labels [LABEL...]: the labels a report covers, into
# $labels: those given (each one that ran to the end in $dir; status 2
# otherwise), or all of them in the order they ran.
native_pick_labels() {
	labels=$(native_labels)
	[ -n "$labels" ] || die_usage "$dir has no label that ran to the end: make $NATIVE_TARGET LABEL=NAME first"
	[ $# = 0 ] && return 0
	for _np; do
		case " $labels " in *" $_np "*) ;; *) die_usage "no label '$_np' in $dir (it has: $labels)" ;; esac
	done
	labels=$*
}
