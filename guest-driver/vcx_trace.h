/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx tracepoints (events/vcx/): SRQ life and events.
 *
 *   echo 1 > /sys/kernel/tracing/events/vcx/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vcx

#if !defined(VCX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define VCX_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(vcx_srq_create,
	TP_PROTO(const char *dev, u32 srqn, bool rmp, bool user, u32 wqes, u32 stride,
		 u32 limit),
	TP_ARGS(dev, srqn, rmp, user, wqes, stride, limit),
	TP_STRUCT__entry(
		__array(char, dev, 20)
		__field(u32, srqn)
		__field(bool, rmp)
		__field(bool, user)
		__field(u32, wqes)
		__field(u32, stride)
		__field(u32, limit)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, sizeof(__entry->dev));
		__entry->srqn = srqn;
		__entry->rmp = rmp;
		__entry->user = user;
		__entry->wqes = wqes;
		__entry->stride = stride;
		__entry->limit = limit;
	),
	TP_printk("%s srqn 0x%x %s %s wqes %u stride %u limit %u", __entry->dev,
		  __entry->srqn, __entry->rmp ? "rmp" : "srq",
		  __entry->user ? "user" : "kernel", __entry->wqes, __entry->stride,
		  __entry->limit)
);

DECLARE_EVENT_CLASS(vcx_srq_num_class,
	TP_PROTO(u32 srqn, u32 value),
	TP_ARGS(srqn, value),
	TP_STRUCT__entry(
		__field(u32, srqn)
		__field(u32, value)
	),
	TP_fast_assign(
		__entry->srqn = srqn;
		__entry->value = value;
	),
	TP_printk("srqn 0x%x value %u", __entry->srqn, __entry->value)
);

/* value: the limit armed */
DEFINE_EVENT(vcx_srq_num_class, vcx_srq_arm,
	TP_PROTO(u32 srqn, u32 value), TP_ARGS(srqn, value));
/* value: the limit that fired */
DEFINE_EVENT(vcx_srq_num_class, vcx_srq_limit_reached,
	TP_PROTO(u32 srqn, u32 value), TP_ARGS(srqn, value));
/* value: the EQE type */
DEFINE_EVENT(vcx_srq_num_class, vcx_srq_error,
	TP_PROTO(u32 srqn, u32 value), TP_ARGS(srqn, value));
/* value: the command's result */
DEFINE_EVENT(vcx_srq_num_class, vcx_srq_destroy,
	TP_PROTO(u32 srqn, u32 value), TP_ARGS(srqn, value));

#endif /* VCX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vcx_trace
#include <trace/define_trace.h>
