# Kernel log checks for the in-guest suites; source it.
# kernel_log_mark before a step, kernel_log_check NAME after it: one TAP
# line, and the reports with some context as comments.
# shellcheck shell=sh

# What the kernel must not say while the tests run.
KERNEL_LOG_BAD='WARNING:|BUG:|kernel BUG|Oops|general protection fault|Unable to handle|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|lockdep|KASAN|UBSAN|self-detected stall|detected stall|rcu: INFO|hung_task|blocked for more than|Bad rss-counter|Bad page|list_add corruption|list_del corruption|refcount_t:'
# Lines that match but report nothing: the debug kernel's boot banner.
KERNEL_LOG_BENIGN='RCU lockdep checking is enabled|lockdep: fixing up alternatives'
# On the KCSAN kernel (KERNEL_LOG_KCSAN=collect) its data-race reports fail
# nothing here: tests/qemu/spf-kcsan sorts them out of the console log.
[ "${KERNEL_LOG_KCSAN:-}" != collect ] ||
	KERNEL_LOG_BENIGN="$KERNEL_LOG_BENIGN|BUG: KCSAN: "

# kernel_log_reports FILE: the report lines in the kernel log FILE.
kernel_log_reports() {
	grep -E "$KERNEL_LOG_BAD" "$1" | grep -Ev "$KERNEL_LOG_BENIGN"
}

# kernel_log_mark: remember the kernel log's last line.
kernel_log_mark() {
	kernel_log_last=$(dmesg 2>/dev/null | tail -n 1)
}

# kernel_log_since FILE: what the kernel logged after the mark into FILE;
# all of the log if the mark is gone (the ring buffer wrapped).
kernel_log_since() {
	dmesg 2>/dev/null | awk -v m="$kernel_log_last" '{ l[NR] = $0 } $0 == m { at = NR }
		END { for (i = at + 1; i <= NR; i++) print l[i] }' >"$1"
}

# kernel_log_check NAME: ok if nothing was reported since the mark.
kernel_log_check() {
	kl_new=$(mktemp)
	kernel_log_since "$kl_new"
	kl_hits=$(kernel_log_reports "$kl_new" | wc -l)
	if [ "$kl_hits" = 0 ]; then
		echo "ok - $1: kernel log clean"
		rm -f "$kl_new"
		return 0
	fi
	echo "not ok - $1: kernel log reports ($kl_hits lines)"
	grep -E -A 30 "$KERNEL_LOG_BAD" "$kl_new" | head -n 300 | sed 's/^/# klog: /'
	rm -f "$kl_new"
	return 1
}
