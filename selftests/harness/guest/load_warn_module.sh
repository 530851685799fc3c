#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest half of detect_warn.sh: load the module that WARNs on init.
insmod "$REPO/selftests/harness/warn_on_load.ko"
echo "still alive after insmod: panic_on_warn did not trigger"
exit 0
