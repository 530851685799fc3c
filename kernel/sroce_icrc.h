/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 Invariant CRC.
 *
 * The ICRC is a CRC32 (as used for the Ethernet FCS) over a phantom LRH of
 * eight 0xff bytes, the IP, UDP and transport headers with every field a
 * router may rewrite forced to all ones, and the payload plus pad. It is
 * carried as the last four bytes of the UDP payload, least significant
 * byte first.
 *
 * Typical use on a possibly non-linear packet:
 *	sroce_icrc_init(&st, hdr_copy, copy_len, 4);
 *	sroce_icrc_update(&st, <bytes after the BTH>, n);  (repeat per frag)
 *	wire_icrc = cpu_to_le32(sroce_icrc_final(&st));
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include "sroce_pure.h"
#include "sroce_wire.h"

struct sroce_icrc {
	u32 crc;	/* running CRC register, not yet inverted */
};

/*
 * sroce_icrc_init() - start an ICRC and cover IP, UDP and BTH.
 * @st: state to initialise
 * @ip_hdr: IP header followed contiguously by the UDP header and BTH
 * @len: bytes readable at @ip_hdr; at least IP + UDP + BTH
 * @ip_version: 4 or 6; must match the version nibble in @ip_hdr
 *
 * The caller continues with sroce_icrc_update() from the first byte after
 * the BTH up to, not including, the ICRC.
 *
 * Return: 0, or -EINVAL if the header is not a plain IPv4 (no options) or
 * IPv6 (no extension headers) UDP header, or @len is too short.
 */
int sroce_icrc_init(struct sroce_icrc *st, const void *ip_hdr, u32 len,
		    unsigned int ip_version);

static inline void sroce_icrc_update(struct sroce_icrc *st, const void *data,
				     u32 len)
{
	st->crc = crc32_le(st->crc, data, len);
}

/* Value to put on the wire as cpu_to_le32(). */
static inline u32 sroce_icrc_final(const struct sroce_icrc *st)
{
	return ~st->crc;
}

/* Length of IP + UDP + BTH for @ip_version, or 0 if unsupported. */
static inline u32 sroce_icrc_hdrs_len(unsigned int ip_version)
{
	if (ip_version == 4)
		return SROCE_IPV4_HDR_LEN + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN;
	if (ip_version == 6)
		return SROCE_IPV6_HDR_LEN + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN;
	return 0;
}

/*
 * sroce_icrc_compute() - ICRC of a contiguous packet.
 * @pkt: IP header; the packet runs through its trailing ICRC
 * @len: bytes from the IP header through the end of the ICRC
 * @ip_version: 4 or 6
 * @icrc: result, to be stored as cpu_to_le32() in the last four bytes
 *
 * Return: 0 or -EINVAL (see sroce_icrc_init(); also if @len leaves no
 * room for the ICRC itself).
 */
int sroce_icrc_compute(const void *pkt, u32 len, unsigned int ip_version,
		       u32 *icrc);

/* Return: 0 if the trailing ICRC is right, -EBADMSG if not, or -EINVAL. */
int sroce_icrc_check(const void *pkt, u32 len, unsigned int ip_version);

#endif /* SROCE_ICRC_H */
