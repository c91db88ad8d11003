/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: portable accessors for PRM (mlx5 programming interface) layouts.
 *
 * Every PRM structure is a big-endian byte buffer. A field is named by its bit offset from
 * the start of its structure, counted from the most significant bit of byte 0 (the
 * convention of the PRM tables and of mlx5_ifc.h), and its width in bits:
 *
 *     #define VCX_EQC_LOG_EQ_SIZE   VCX_FLD(0x063, 5)    dword 3, bits 28:24
 *
 *     n = vcx_get(eqc, VCX_EQC_LOG_EQ_SIZE);
 *     vcx_set(out, VCX_CMD_OUT_STATUS, VCX_CMD_STAT_BAD_PARAM);
 *
 * Fields of up to 32 bits never straddle a dword (true of every PRM layout); 64-bit fields
 * start on a dword and use vcx_get64()/vcx_set64(). Byte arrays (MACs, PAS lists, nested
 * structures) are reached with VCX_FLD_BYTE(). Nested structures have their own field sets
 * relative to their own start; the enclosing layout gives their byte offset.
 *
 * Pure C99 on byte buffers, no allocation: compiles in QEMU, the Linux kernel and userspace.
 */
#ifndef VCX_PRM_H
#define VCX_PRM_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

struct vcx_fld {
	uint32_t bit;		/* offset of the field's most significant bit */
	uint32_t width;		/* width in bits, 1..32 or 64 */
};

#define VCX_FLD(bit, width)	((struct vcx_fld){ (bit), (width) })
/* Byte offset of a byte-aligned field (arrays, nested structures, 64-bit words). */
#define VCX_FLD_BYTE(f)		((f).bit / 8)

static inline uint32_t vcx_be32_load(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void vcx_be32_store(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint32_t vcx_fld_mask(struct vcx_fld f)
{
	return f.width >= 32 ? 0xffffffffu : (1u << f.width) - 1;
}

static inline uint32_t vcx_fld_shift(struct vcx_fld f)
{
	return 32 - (f.bit % 32) - (f.width >= 32 ? 32 : f.width);
}

/* Read a field of up to 32 bits. */
static inline uint32_t vcx_get(const void *buf, struct vcx_fld f)
{
	const uint8_t *p = (const uint8_t *)buf + (f.bit / 32) * 4;

	return (vcx_be32_load(p) >> vcx_fld_shift(f)) & vcx_fld_mask(f);
}

/* Write a field of up to 32 bits; other bits of the dword are preserved. */
static inline void vcx_set(void *buf, struct vcx_fld f, uint32_t v)
{
	uint8_t *p = (uint8_t *)buf + (f.bit / 32) * 4;
	uint32_t mask = vcx_fld_mask(f) << vcx_fld_shift(f);
	uint32_t dw = vcx_be32_load(p);

	dw = (dw & ~mask) | ((v << vcx_fld_shift(f)) & mask);
	vcx_be32_store(p, dw);
}

/* 64-bit fields (addresses, GUIDs, bitmasks) start on a dword boundary. */
static inline uint64_t vcx_get64(const void *buf, struct vcx_fld f)
{
	const uint8_t *p = (const uint8_t *)buf + f.bit / 8;

	return (uint64_t)vcx_be32_load(p) << 32 | vcx_be32_load(p + 4);
}

static inline void vcx_set64(void *buf, struct vcx_fld f, uint64_t v)
{
	uint8_t *p = (uint8_t *)buf + f.bit / 8;

	vcx_be32_store(p, (uint32_t)(v >> 32));
	vcx_be32_store(p + 4, (uint32_t)v);
}

/* Pointer to a byte-aligned field (array or nested structure). */
static inline void *vcx_ptr(void *buf, struct vcx_fld f)
{
	return (uint8_t *)buf + f.bit / 8;
}

static inline const void *vcx_cptr(const void *buf, struct vcx_fld f)
{
	return (const uint8_t *)buf + f.bit / 8;
}

/* XOR of len bytes, the building block of command-interface signatures. */
static inline uint8_t vcx_xor8(const void *buf, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)buf;
	uint8_t x = 0;

	while (len--) {
		x ^= *p++;
	}
	return x;
}

#endif /* VCX_PRM_H */
