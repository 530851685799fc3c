// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Placeholder until the objects role lands: no verbs for this object yet. */
#include "sroce.h"

const struct ib_device_ops sroce_qp_ops = {};
