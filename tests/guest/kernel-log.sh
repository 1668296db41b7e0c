# Kernel log checks for the in-guest suites; source it.
# shellcheck shell=sh

# What a clean run must not leave in the kernel log.
KERNEL_LOG_SPLATS='WARNING:|BUG:|Oops|general protection fault|Kernel panic|KASAN|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|lockdep|self-detected stall|rcu: INFO|blocked for more than|Bad rss-counter|Bad page'

# kernel_log_mark: remember how long the kernel log is now.
kernel_log_mark() {
	kernel_log_lines=$(dmesg | wc -l)
}

# kernel_log_check NAME: one TAP line for the log written since the mark.
kernel_log_check() {
	new=$(dmesg | tail -n +$((kernel_log_lines + 1)))
	hits=$(printf '%s\n' "$new" | grep -E "$KERNEL_LOG_SPLATS")
	if [ -z "$hits" ]; then
		echo "ok - $1: kernel log clean"
		return 0
	fi
	echo "not ok - $1: kernel log reports"
	printf '%s\n' "$new" | grep -E -A 12 "$KERNEL_LOG_SPLATS" | head -n 60 | sed 's/^/# /'
	return 1
}
