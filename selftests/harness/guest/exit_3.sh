#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest half of exit_status.sh.
echo "output before exiting 3"
exit 3
