#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Scans guest kernel logs (console captures, dmesg dumps) for anything that
# means the kernel misbehaved. Prints each offending line prefixed with its
# file, then the first report in full (its first 60 lines: registers and
# call trace, which CI's output keeps and its results folder does not),
# and exits 1 if there was any, 0 if the logs are clean.
# Usage: splat-check.sh LOG...
PATTERN='(BUG:|BUG [^ ]+ \(|kernel BUG at|Oops|WARNING:|Call Trace:|Kernel panic|'\
'general protection fault|Unable to handle kernel|INFO: task .* blocked for more than|'\
'hung_task|rcu: INFO|INFO: rcu_|soft lockup|hard LOCKUP|possible circular locking|'\
'possible recursive locking|inconsistent lock state|lock held when returning|'\
'suspicious RCU usage|UBSAN:|KASAN:|KCSAN:|suspected memory leak|unreferenced object|list_add corruption|'\
'list_del corruption|stack-protector|Poison overwritten|Redzone overwritten|'\
'Object already free|double free|refcount_t:|sleeping function called from invalid context|'\
'scheduling while atomic|bad page state|segfault at)'
found=0 first=
for f in "$@"; do
	[ -f "$f" ] || continue
	# \r from the serial console must not hide matches at line ends.
	if tr -d '\r' < "$f" | grep -aE "$PATTERN" | sed "s|^|$f: |" | head -n 20 | grep .; then
		found=1
		[ -n "$first" ] || first=$f
	fi
done
if [ -n "$first" ]; then
	echo "first report in $first:"
	tr -d '\r' < "$first" | grep -aE -A 59 -m 1 "$PATTERN" | sed 's/^/  | /'
fi
exit $found
