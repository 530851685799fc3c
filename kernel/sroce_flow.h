/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Flow steering for raw packet QPs (pure): an Ethernet frame is reduced to
 * the fields ibv_create_flow() can name, and a rule matches when every
 * field under its mask equals the rule's value.  ib_core's specs become
 * rules in sroce_raw.c; the frame may come from the wire or from a local
 * raw QP, and nothing in it is trusted.
 */
#ifndef SROCE_FLOW_H
#define SROCE_FLOW_H

#include "sroce_pure.h"

/* Layers a frame has, and a rule requires (sroce_flow_key.layers). */
#define SROCE_FLOW_ETH		(1U << 0)
#define SROCE_FLOW_IPV4		(1U << 1)
#define SROCE_FLOW_IPV6		(1U << 2)
#define SROCE_FLOW_TCP		(1U << 3)
#define SROCE_FLOW_UDP		(1U << 4)

/*
 * Field values as they are on the wire (network order), laid out so a
 * rule's value and mask are keys too.  Absent layers stay zero.
 */
struct sroce_flow_key {
	u32 layers;
	u8 dmac[6];
	u8 smac[6];
	__be16 ether_type;	/* after an 802.1Q tag, if any */
	__be16 vlan_tag;	/* the tag's TCI, 0 when untagged */
	__be32 v4_src;
	__be32 v4_dst;
	u8 v4_proto;
	u8 v4_tos;
	u8 v4_ttl;
	u8 v4_flags;		/* the 3 flag bits: reserved, DF, MF */
	u8 v6_src[16];
	u8 v6_dst[16];
	__be32 v6_flow_label;	/* low 20 bits */
	u8 v6_next_hdr;
	u8 v6_tclass;
	u8 v6_hop_limit;
	u8 rsvd;
	__be16 l4_dport;
	__be16 l4_sport;
};

struct sroce_flow_rule {
	struct sroce_flow_key val;	/* .layers: the layers required */
	struct sroce_flow_key mask;	/* .layers unused */
};

/*
 * Fill @k from the first @len bytes of a frame.  @tci is the 802.1Q tag
 * taken out of the frame by the receive path, or -1 if none was.  A
 * truncated or malformed header ends the parse at the layer before it.
 */
void sroce_flow_parse(const u8 *frame, u32 len, int tci,
		      struct sroce_flow_key *k);

bool sroce_flow_match(const struct sroce_flow_rule *r,
		      const struct sroce_flow_key *k);

/*
 * RSS: the fields hashed (libibverbs' IBV_RX_HASH_* bits, the ABI's
 * SROCE_RX_HASH_*), in Toeplitz's input order: source address,
 * destination address, source port, destination port.  A field the frame
 * lacks is left out, as NICs do.
 */
#define SROCE_FLOW_HASH_SRC_IPV4	(1ULL << 0)
#define SROCE_FLOW_HASH_DST_IPV4	(1ULL << 1)
#define SROCE_FLOW_HASH_SRC_IPV6	(1ULL << 2)
#define SROCE_FLOW_HASH_DST_IPV6	(1ULL << 3)
#define SROCE_FLOW_HASH_SRC_PORT_TCP	(1ULL << 4)
#define SROCE_FLOW_HASH_DST_PORT_TCP	(1ULL << 5)
#define SROCE_FLOW_HASH_SRC_PORT_UDP	(1ULL << 6)
#define SROCE_FLOW_HASH_DST_PORT_UDP	(1ULL << 7)
#define SROCE_FLOW_HASH_FIELDS		0xffULL
#define SROCE_FLOW_HASH_KEY_LEN		40

u32 sroce_toeplitz(const u8 key[SROCE_FLOW_HASH_KEY_LEN], const u8 *in,
		   u32 len);
u32 sroce_flow_hash(const struct sroce_flow_key *k, u64 fields,
		    const u8 key[SROCE_FLOW_HASH_KEY_LEN]);

/* Headers a parse reads at most: Ethernet, tag, IPv4 with options, ports. */
#define SROCE_FLOW_HDR_MAX	(14 + 4 + 60 + 4)

#endif /* SROCE_FLOW_H */
