// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Flow steering rules for raw packet QPs (pure; see sroce_flow.h).
 */
#include "sroce_flow.h"

#define FLOW_ETH_P_IP		0x0800
#define FLOW_ETH_P_IPV6		0x86dd
#define FLOW_ETH_P_8021Q	0x8100
#define FLOW_PROTO_TCP		6
#define FLOW_PROTO_UDP		17

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static void parse_l4(const u8 *p, u32 len, u8 proto, struct sroce_flow_key *k)
{
	if (len < 4 || (proto != FLOW_PROTO_TCP && proto != FLOW_PROTO_UDP))
		return;
	memcpy(&k->l4_sport, p, 2);
	memcpy(&k->l4_dport, p + 2, 2);
	k->layers |= proto == FLOW_PROTO_TCP ? SROCE_FLOW_TCP : SROCE_FLOW_UDP;
}

static void parse_ipv4(const u8 *p, u32 len, struct sroce_flow_key *k)
{
	u32 ihl;
	u16 frag;

	if (len < 20 || p[0] >> 4 != 4)
		return;
	ihl = (p[0] & 0xf) * 4u;
	if (ihl < 20 || ihl > len)
		return;
	k->layers |= SROCE_FLOW_IPV4;
	k->v4_tos = p[1];
	frag = get16(p + 6);
	k->v4_flags = frag >> 13;
	k->v4_ttl = p[8];
	k->v4_proto = p[9];
	memcpy(&k->v4_src, p + 12, 4);
	memcpy(&k->v4_dst, p + 16, 4);
	/* ports are in the first fragment only */
	if (!(frag & 0x1fff))
		parse_l4(p + ihl, len - ihl, p[9], k);
}

static void parse_ipv6(const u8 *p, u32 len, struct sroce_flow_key *k)
{
	u32 w;

	if (len < 40 || p[0] >> 4 != 6)
		return;
	k->layers |= SROCE_FLOW_IPV6;
	w = (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
	k->v6_tclass = (w >> 20) & 0xff;
	k->v6_flow_label = cpu_to_be32(w & 0xfffff);
	k->v6_next_hdr = p[6];
	k->v6_hop_limit = p[7];
	memcpy(k->v6_src, p + 8, 16);
	memcpy(k->v6_dst, p + 24, 16);
	/* extension headers are not walked: ports follow only a bare header */
	parse_l4(p + 40, len - 40, p[6], k);
}

void sroce_flow_parse(const u8 *frame, u32 len, int tci,
		      struct sroce_flow_key *k)
{
	u32 off = 14;
	u16 type;

	memset(k, 0, sizeof(*k));
	if (len < 14)
		return;
	k->layers = SROCE_FLOW_ETH;
	memcpy(k->dmac, frame, 6);
	memcpy(k->smac, frame + 6, 6);
	type = get16(frame + 12);
	if (tci >= 0) {
		k->vlan_tag = cpu_to_be16((u16)tci);
	} else if (type == FLOW_ETH_P_8021Q) {
		if (len < 18)
			return;
		k->vlan_tag = cpu_to_be16(get16(frame + 14));
		type = get16(frame + 16);
		off = 18;
	}
	k->ether_type = cpu_to_be16(type);
	if (type == FLOW_ETH_P_IP)
		parse_ipv4(frame + off, len - off, k);
	else if (type == FLOW_ETH_P_IPV6)
		parse_ipv6(frame + off, len - off, k);
}

bool sroce_flow_match(const struct sroce_flow_rule *r,
		      const struct sroce_flow_key *k)
{
	const u8 *v = (const u8 *)&r->val, *m = (const u8 *)&r->mask;
	const u8 *p = (const u8 *)k;
	size_t i;

	if ((k->layers & r->val.layers) != r->val.layers)
		return false;
	/* .layers is the first member: compare what follows it */
	for (i = sizeof(k->layers); i < sizeof(*k); i++)
		if ((p[i] ^ v[i]) & m[i])
			return false;
	return true;
}

/* @len is at most 36 bytes, so the key's 320 bits always suffice. */
u32 sroce_toeplitz(const u8 key[SROCE_FLOW_HASH_KEY_LEN], const u8 *in,
		   u32 len)
{
	u32 hash = 0, v, i, b;

	v = (u32)key[0] << 24 | (u32)key[1] << 16 | (u32)key[2] << 8 | key[3];
	for (i = 0; i < len && i + 4 < SROCE_FLOW_HASH_KEY_LEN; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= v;
			v = v << 1 | ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return hash;
}

u32 sroce_flow_hash(const struct sroce_flow_key *k, u64 fields,
		    const u8 key[SROCE_FLOW_HASH_KEY_LEN])
{
	u8 in[36];
	u32 n = 0;
	u64 sp = 0, dp = 0;

	if (k->layers & SROCE_FLOW_IPV4) {
		if (fields & SROCE_FLOW_HASH_SRC_IPV4) {
			memcpy(in + n, &k->v4_src, 4);
			n += 4;
		}
		if (fields & SROCE_FLOW_HASH_DST_IPV4) {
			memcpy(in + n, &k->v4_dst, 4);
			n += 4;
		}
	} else if (k->layers & SROCE_FLOW_IPV6) {
		if (fields & SROCE_FLOW_HASH_SRC_IPV6) {
			memcpy(in + n, k->v6_src, 16);
			n += 16;
		}
		if (fields & SROCE_FLOW_HASH_DST_IPV6) {
			memcpy(in + n, k->v6_dst, 16);
			n += 16;
		}
	}
	if (k->layers & SROCE_FLOW_TCP) {
		sp = SROCE_FLOW_HASH_SRC_PORT_TCP;
		dp = SROCE_FLOW_HASH_DST_PORT_TCP;
	} else if (k->layers & SROCE_FLOW_UDP) {
		sp = SROCE_FLOW_HASH_SRC_PORT_UDP;
		dp = SROCE_FLOW_HASH_DST_PORT_UDP;
	}
	if (fields & sp) {
		memcpy(in + n, &k->l4_sport, 2);
		n += 2;
	}
	if (fields & dp) {
		memcpy(in + n, &k->l4_dport, 2);
		n += 2;
	}
	return sroce_toeplitz(key, in, n);
}
