/*
 * vcx: HMP "info vcx" (the command table entry is grafted into QEMU's
 * hmp-commands-info.hx by build-aux/build-qemu.sh).
 *
 * It prints, for every vcx device, the same line as its read-only QOM property "state"
 * (ISSI, HCA state, pages held, objects alive), which QMP reads with qom-get.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "monitor/hmp.h"
#include "monitor/monitor.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "vcx.h"

static int vcx_monitor_print_one(Object *obj, void *opaque)
{
    Monitor *mon = opaque;
    g_autofree char *state = NULL;
    g_autofree char *path = NULL;
    Error *err = NULL;

    if (!object_dynamic_cast(obj, TYPE_VCX)) {
        return 0;
    }
    path = object_get_canonical_path(obj);
    state = object_property_get_str(obj, "state", &err);
    if (!state) {
        monitor_printf(mon, "%s: %s\n", path, error_get_pretty(err));
        error_free(err);
        return 0;
    }
    monitor_printf(mon, "%s: %s\n", path, state);
    return 0;
}

void hmp_info_vcx(Monitor *mon, const QDict *qdict)
{
    object_child_foreach_recursive(object_get_root(), vcx_monitor_print_one, mon);
}
