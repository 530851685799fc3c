// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * RoCEv2 ICRC (IBA Annex A17). Pure computation over caller-provided
 * bytes; the caller walks skb fragments and feeds them in order.
 */
#include "sroce_icrc.h"

/* Byte offsets of the fields the ICRC treats as variant. */
#define IP4_OFF_TOS		1
#define IP4_OFF_TTL		8
#define IP4_OFF_PROTO		9
#define IP4_OFF_CSUM		10
#define IP6_OFF_NEXTHDR		6
#define IP6_OFF_HOPLIMIT	7
#define UDP_OFF_CSUM		6

int sroce_icrc_init(struct sroce_icrc *st, const void *ip_hdr, u32 len,
		    unsigned int ip_version)
{
	static const u8 phantom_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u8 copy[SROCE_IPV6_HDR_LEN + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN];
	const u8 *ip = ip_hdr;
	u32 hdrs = sroce_icrc_hdrs_len(ip_version);
	u32 iplen;
	u8 *udp;

	if (!hdrs || len < hdrs || (ip[0] >> 4) != ip_version)
		return -EINVAL;

	memcpy(copy, ip, hdrs);
	if (ip_version == 4) {
		/* options would move UDP; RoCEv2 senders never use them */
		if ((ip[0] & 0x0f) != SROCE_IPV4_HDR_LEN / 4 ||
		    ip[IP4_OFF_PROTO] != SROCE_IPPROTO_UDP)
			return -EINVAL;
		copy[IP4_OFF_TOS] = 0xff;
		copy[IP4_OFF_TTL] = 0xff;
		copy[IP4_OFF_CSUM] = 0xff;
		copy[IP4_OFF_CSUM + 1] = 0xff;
		iplen = SROCE_IPV4_HDR_LEN;
	} else {
		if (ip[IP6_OFF_NEXTHDR] != SROCE_IPPROTO_UDP)
			return -EINVAL;
		/* traffic class and flow label span bits 4..31 */
		copy[0] |= 0x0f;
		copy[1] = 0xff;
		copy[2] = 0xff;
		copy[3] = 0xff;
		copy[IP6_OFF_HOPLIMIT] = 0xff;
		iplen = SROCE_IPV6_HDR_LEN;
	}
	udp = copy + iplen;
	udp[UDP_OFF_CSUM] = 0xff;
	udp[UDP_OFF_CSUM + 1] = 0xff;
	/* FECN, BECN and resv6 may be set by the network */
	udp[SROCE_UDP_HDR_LEN + SROCE_BTH_ICRC_MASK_OFF] = 0xff;

	st->crc = crc32_le(~0U, phantom_lrh, sizeof(phantom_lrh));
	st->crc = crc32_le(st->crc, copy, hdrs);
	return 0;
}

int sroce_icrc_compute(const void *pkt, u32 len, unsigned int ip_version,
		       u32 *icrc)
{
	u32 hdrs = sroce_icrc_hdrs_len(ip_version);
	struct sroce_icrc st;
	int err;

	if (!hdrs || len < hdrs + SROCE_ICRC_LEN)
		return -EINVAL;
	err = sroce_icrc_init(&st, pkt, len, ip_version);
	if (err)
		return err;
	sroce_icrc_update(&st, (const u8 *)pkt + hdrs,
			  len - hdrs - SROCE_ICRC_LEN);
	*icrc = sroce_icrc_final(&st);
	return 0;
}

int sroce_icrc_check(const void *pkt, u32 len, unsigned int ip_version)
{
	__le32 wire;
	u32 icrc;
	int err;

	err = sroce_icrc_compute(pkt, len, ip_version, &icrc);
	if (err)
		return err;
	memcpy(&wire, (const u8 *)pkt + len - SROCE_ICRC_LEN, sizeof(wire));
	return le32_to_cpu(wire) == icrc ? 0 : -EBADMSG;
}
