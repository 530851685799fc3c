// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Flow steering: frame parsing and rule matching (kernel/sroce_flow.c). */
#include "sroce_flow.h"
#include "tap.h"

/* An Ethernet + IPv4 + UDP frame, optionally 802.1Q-tagged. */
static u32 mk_v4_udp(u8 *f, bool tagged, u16 frag)
{
	static const u8 eth[12] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7,
				    0x24, 0x8a, 0x07, 0xa5, 0x28, 0xc8 };
	u32 o = 12;
	u8 *ip;

	memcpy(f, eth, 12);
	if (tagged) {
		f[o++] = 0x81; f[o++] = 0x00; f[o++] = 0x20; f[o++] = 0x07;
	}
	f[o++] = 0x08; f[o++] = 0x00;
	ip = f + o;
	memset(ip, 0, 28);
	ip[0] = 0x45; ip[1] = 0x10; ip[3] = 28;
	ip[6] = frag >> 8; ip[7] = frag & 0xff;
	ip[8] = 64; ip[9] = 17;
	ip[12] = 1; ip[13] = 1; ip[14] = 1; ip[15] = 1;
	ip[16] = 2; ip[17] = 2; ip[18] = 2; ip[19] = 2;
	ip[20] = 0x04; ip[21] = 0xd2;	/* 1234 */
	ip[22] = 0x16; ip[23] = 0x2e;	/* 5678 */
	return o + 28;
}

static void test_parse(void)
{
	struct sroce_flow_key k;
	u8 f[128];
	u32 n;

	n = mk_v4_udp(f, false, 0x4000);
	sroce_flow_parse(f, n, -1, &k);
	tap_ok(k.layers == (SROCE_FLOW_ETH | SROCE_FLOW_IPV4 | SROCE_FLOW_UDP),
	       "eth/ipv4/udp: all three layers");
	tap_ok(k.ether_type == cpu_to_be16(0x0800) && !k.vlan_tag &&
	       k.v4_src == cpu_to_be32(0x01010101) &&
	       k.v4_dst == cpu_to_be32(0x02020202) && k.v4_proto == 17 &&
	       k.v4_tos == 0x10 && k.v4_ttl == 64 && k.v4_flags == 2,
	       "ipv4 fields, DF as flags 2");
	tap_ok(k.l4_sport == cpu_to_be16(1234) && k.l4_dport == cpu_to_be16(5678),
	       "udp ports");

	n = mk_v4_udp(f, true, 0);
	sroce_flow_parse(f, n, -1, &k);
	tap_ok(k.vlan_tag == cpu_to_be16(0x2007) && k.l4_dport == cpu_to_be16(5678),
	       "tag in the frame: TCI taken, layers behind it parsed");
	n = mk_v4_udp(f, false, 0);
	sroce_flow_parse(f, n, 0x3005, &k);
	tap_ok(k.vlan_tag == cpu_to_be16(0x3005), "tag taken out by the stack");

	n = mk_v4_udp(f, false, 0x2001);	/* MF, offset 8 */
	sroce_flow_parse(f, n, -1, &k);
	tap_ok(k.layers == (SROCE_FLOW_ETH | SROCE_FLOW_IPV4) && !k.l4_dport,
	       "a later fragment has no ports");

	/* every truncation parses what fits and reads nothing beyond */
	n = mk_v4_udp(f, false, 0);
	sroce_flow_parse(f, 13, -1, &k);
	tap_ok(!k.layers, "13 bytes: not a frame");
	sroce_flow_parse(f, 14 + 19, -1, &k);
	tap_ok(k.layers == SROCE_FLOW_ETH, "a cut IPv4 header: Ethernet only");
	sroce_flow_parse(f, n - 5, -1, &k);	/* 3 bytes of UDP */
	tap_ok(k.layers == (SROCE_FLOW_ETH | SROCE_FLOW_IPV4),
	       "cut ports: no L4");
	f[14] = 0x4f;				/* IHL 60 > what is there */
	sroce_flow_parse(f, n, -1, &k);
	tap_ok(k.layers == SROCE_FLOW_ETH, "IHL beyond the frame: no IPv4");
	f[14] = 0x44;				/* IHL 16 < 20 */
	sroce_flow_parse(f, n, -1, &k);
	tap_ok(k.layers == SROCE_FLOW_ETH, "IHL below 20: no IPv4");
}

static void test_ipv6(void)
{
	struct sroce_flow_key k;
	u8 f[14 + 40 + 20] = { 0 };

	f[12] = 0x86; f[13] = 0xdd;
	f[14] = 0x6a; f[15] = 0xbc; f[16] = 0xde; f[17] = 0xf1;
	f[20] = 6; f[21] = 33;
	f[22] = 0xa0; f[53] = 0xb9;
	f[54] = 0x04; f[55] = 0xd2; f[56] = 0x16; f[57] = 0x2e;
	sroce_flow_parse(f, sizeof(f), -1, &k);
	tap_ok(k.layers == (SROCE_FLOW_ETH | SROCE_FLOW_IPV6 | SROCE_FLOW_TCP),
	       "eth/ipv6/tcp");
	tap_ok(k.v6_tclass == 0xab && k.v6_flow_label == cpu_to_be32(0xcdef1) &&
	       k.v6_next_hdr == 6 && k.v6_hop_limit == 33 &&
	       k.v6_src[0] == 0xa0 && k.v6_dst[15] == 0xb9,
	       "ipv6 class, label, next header, hop limit, addresses");
	tap_ok(k.l4_sport == cpu_to_be16(1234), "tcp ports");
	f[20] = 0;				/* hop-by-hop options first */
	sroce_flow_parse(f, sizeof(f), -1, &k);
	tap_ok(k.layers == (SROCE_FLOW_ETH | SROCE_FLOW_IPV6),
	       "extension headers are not walked: no L4");
}

static void test_match(void)
{
	struct sroce_flow_rule r;
	struct sroce_flow_key k;
	u8 f[128];
	u32 n = mk_v4_udp(f, false, 0);

	sroce_flow_parse(f, n, -1, &k);
	memset(&r, 0, sizeof(r));
	tap_ok(sroce_flow_match(&r, &k), "an empty rule matches any frame");

	r.val.layers = SROCE_FLOW_IPV4;
	r.val.v4_dst = cpu_to_be32(0x02020202);
	r.mask.v4_dst = cpu_to_be32(0xffffffff);
	tap_ok(sroce_flow_match(&r, &k), "ipv4 dst/32 matches");
	r.val.v4_dst = cpu_to_be32(0x02020203);
	tap_ok(!sroce_flow_match(&r, &k), "another dst does not");
	r.mask.v4_dst = cpu_to_be32(0xffffff00);
	tap_ok(sroce_flow_match(&r, &k), "... unless the mask leaves it out");

	/* a mask of the source MAC itself, as rdma-core's test uses */
	memset(&r, 0, sizeof(r));
	r.val.layers = SROCE_FLOW_ETH;
	memcpy(r.val.smac, k.smac, 6);
	memcpy(r.mask.smac, k.smac, 6);
	tap_ok(sroce_flow_match(&r, &k), "partial MAC mask");

	memset(&r, 0, sizeof(r));
	r.val.layers = SROCE_FLOW_TCP;
	tap_ok(!sroce_flow_match(&r, &k), "a TCP rule skips a UDP frame");
	r.val.layers = SROCE_FLOW_UDP;
	r.val.l4_dport = cpu_to_be16(5678);
	r.mask.l4_dport = cpu_to_be16(0xffff);
	tap_ok(sroce_flow_match(&r, &k), "udp dport 5678");
	r.val.layers = SROCE_FLOW_IPV6 | SROCE_FLOW_UDP;
	tap_ok(!sroce_flow_match(&r, &k), "an IPv6 rule skips an IPv4 frame");
}

/*
 * The verification suite of Microsoft's RSS specification: its key, and
 * 66.9.149.187:2794 -> 161.142.100.80:1766.
 */
static const u8 ms_key[SROCE_FLOW_HASH_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static void test_rss(void)
{
	struct sroce_flow_key k;
	const u64 ip = SROCE_FLOW_HASH_SRC_IPV4 | SROCE_FLOW_HASH_DST_IPV4;
	const u64 tcp = SROCE_FLOW_HASH_SRC_PORT_TCP |
			SROCE_FLOW_HASH_DST_PORT_TCP;

	memset(&k, 0, sizeof(k));
	k.layers = SROCE_FLOW_ETH | SROCE_FLOW_IPV4 | SROCE_FLOW_TCP;
	k.v4_src = cpu_to_be32(0x420995bb);	/* 66.9.149.187 */
	k.v4_dst = cpu_to_be32(0xa18e6450);	/* 161.142.100.80 */
	k.l4_sport = cpu_to_be16(2794);
	k.l4_dport = cpu_to_be16(1766);
	TAP_EQ(sroce_flow_hash(&k, ip, ms_key), 0x323e8fc2,
	       "Toeplitz, IPv4 addresses: Microsoft's vector");
	TAP_EQ(sroce_flow_hash(&k, ip | tcp, ms_key), 0x51ccc178,
	       "Toeplitz, IPv4 with TCP ports: Microsoft's vector");
	TAP_EQ(sroce_flow_hash(&k, ip | SROCE_FLOW_HASH_SRC_PORT_UDP, ms_key),
	       0x323e8fc2, "UDP port bits leave a TCP frame's hash alone");
	TAP_EQ(sroce_flow_hash(&k, 0, ms_key), 0, "no fields: hash 0");
}

void test_flow(void)
{
	test_rss();
	test_parse();
	test_ipv6();
	test_match();
}
