# Helpers for the suites that boot guests; source it after tests/tap.sh.
# shellcheck shell=sh
. "$TOP/scripts/lib.sh"

vm_tmp=$(mktemp -d)
trap 'rm -rf "$vm_tmp"' EXIT

# What no kernel log may report: the in-guest suites check after each
# step, the console checks catch what happens outside them (boot,
# shutdown). One list for both: kernel_log_reports FILE.
. "$TOP/tests/in-guest/kernel-log.sh"

# One boot of $kernel running a suite: qemu/run's options and command.
boot_suite() { "$TOP/qemu/run" --kernel "$kernel" --out "$dir" "$@" >"$dir/tap" 2>"$dir/err"; }

# test_boot KERNEL TITLE [qemu/run options] -- CMD...
# Boot KERNEL and run CMD, whose stdout lands in $dir/tap, its stderr in
# $dir/err and the console log in $dir/console.log, with
# dir=$vm_tmp/TITLE; rc is qemu/run's status. Prints nothing but a
# "not ok" line when the kernel is not built (status 1).
test_boot() {
	kernel=$1 title=$2
	shift 2
	dir=$vm_tmp/$(printf '%s' "$title" | tr -c 'A-Za-z0-9-' '_')
	mkdir -p "$dir"
	if [ ! -f "$TOP/build/kernels/$kernel/arch/x86/boot/bzImage" ]; then
		not_ok "$title: kernel $kernel is not built"
		return 1
	fi
	rc=0
	boot_retrying "$dir" boot_suite true "$@" || rc=$?
}

# tap_with_reports FILE: the TAP lines of an in-guest suite's FILE, each
# "not ok" after the last 40 comment lines before it (the test's own
# report): all a CI log keeps of a failure.
tap_with_reports() {
	awk '/^(ok|not ok) / {
		if ($1 == "not")
			for (i = n > 40 ? n - 39 : 1; i <= n; i++) print buf[i]
		n = 0; print; next
	}
	/^#/ { buf[++n] = $0 }' "$1"
	# shellcheck disable=SC2034 # tap_done (tests/tap.sh) reads it
	! grep -q '^not ok ' "$1" || tap_failed=1
}

# guest_suite KERNEL TITLE [qemu/run options] -- CMD...
# Boot KERNEL, run an in-guest suite that prints TAP, pass its TAP lines
# through, and add one line for the boot itself and one for the console
# log. The guest's output and console log stay in $vm_tmp/TITLE/.
guest_suite() {
	test_boot "$@" || return 1
	tap_with_reports "$dir/tap"
	case $rc in
	0) ok "$title: guest suite exited 0 on $kernel" ;;
	124 | 125)
		not_ok "$title: the $kernel guest did not finish (status $rc)"
		sed 's/^/# /' "$dir/err" | tail -n 30 ;;
	*)
		not_ok "$title: guest suite exited $rc on $kernel"
		tail -n 20 "$dir/err" | sed 's/^/# /' ;;
	esac
	hits=$(kernel_log_reports "$dir/console.log" | head -n 5)
	if [ -z "$hits" ]; then
		ok "$title: $kernel console log clean"
	else
		not_ok "$title: $kernel console log reports"
		printf '%s\n' "$hits" | sed 's/^/# /'
	fi
}

# spf_delay_all US: spf_delay= with every delay point of the series
# (mm/spf_delay.c of the kernel tree, so a new point is on too) at US
# microseconds; nothing when the tree has none.
spf_delay_all() {
	sed -n 's/^\t\[SPF_DELAY_[A-Z_]*\] = "\([a-z_]*\)",$/\1/p' \
		"$BUILD/src/linux/mm/spf_delay.c" 2>/dev/null |
		awk -v us="$1" '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $1, us }'
}
