/*
 * tests/fuzz/fuzz_dissect.c - libFuzzer target over the L2-L4 dissector (secho_dissect,
 * secho_dissect_snap) and its agreement with the endpoint's request parse built on it.
 *
 * Every input is dissected as a whole frame and as a capture snapped from a longer one.
 * For a described IP packet, every offset and length the contract promises is re-checked
 * against the input's own bytes; an IPv4/UDP request the endpoint accepts must be described
 * as exactly that. Any violation aborts.
 *
 *   make fuzz && build/fuzz/fuzz_dissect -max_total_time=10 CORPUS_DIR
 */
#include "fuzz.h"

#include <secho/dissect.h>
#include <secho/wire.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void check(const uint8_t *f, size_t caplen, size_t wirelen, enum secho_dissect_reason r,
                  const struct secho_dissect *d)
{
	CHECK((unsigned)r < SECHO_DISSECT_REASON_COUNT);
	CHECK(strcmp(secho_dissect_reason_name(r), "unknown") != 0);
	if (r != SECHO_DISSECT_OK)
		return;
	size_t l2 = 14 + 4 * (size_t)d->nvlan; /* after the EtherType */
	CHECK(caplen >= 14 && d->nvlan <= 2 && d->ethertype == rd16(f + l2 - 2));
	if (d->flags & SECHO_DISSECT_F_MPLS) {
		/* the label stack: S set on the last entry only */
		CHECK(d->nmpls >= 1 && d->nmpls <= SECHO_DISSECT_MAX_MPLS &&
		      !(d->flags & SECHO_DISSECT_F_PPPOE));
		CHECK(d->ethertype == 0x8847 || d->ethertype == 0x8848);
		CHECK(d->mpls_top == ((uint32_t)rd16(f + l2) << 16 | rd16(f + l2 + 2)));
		for (unsigned i = 0; i < d->nmpls; i++)
			CHECK(!!(f[l2 + 4 * i + 2] & 1) == (i + 1 == d->nmpls));
		l2 += 4u * d->nmpls;
	} else if (d->flags & SECHO_DISSECT_F_PPPOE) {
		CHECK(d->ethertype == 0x8864 && d->pppoe_sid == rd16(f + l2 + 2));
		size_t pl = f[l2 + 6] & 1 ? 1 : 2; /* PPP protocol, compressed or not */
		unsigned pp = pl == 1 ? f[l2 + 6] : rd16(f + l2 + 6);
		/* the IP packet right after PPP: the outermost when a tunnel follows */
		unsigned v =
		        (d->flags & SECHO_DISSECT_F_TUNNEL) ? d->outer_ip_version : d->ip_version;
		CHECK(v == 0 || pp == (v == 4 ? 0x21u : 0x57u));
		l2 += 6 + pl;
	}
	if (d->flags & SECHO_DISSECT_F_TUNNEL) {
		/* tunnels (the meter's dissector): the outermost IP packet right after layer 2
		 * (none for Ethernet over MPLS), the innermost packet inside it */
		CHECK(d->ntun >= 1 && d->ntun <= SECHO_DISSECT_MAX_TUN &&
		      d->tun_type >= SECHO_TUN_GRE && d->tun_type <= SECHO_TUN_EOMPLS);
		size_t o_end = wirelen, o_l3 = l2;
		if (d->outer_ip_version) {
			/* right after layer 2, or inside Ethernet over MPLS */
			CHECK((d->outer_l3_off == l2 ||
			       (d->outer_l3_off > l2 && (d->flags & SECHO_DISSECT_F_MPLS))) &&
			      (size_t)d->outer_l3_off + d->outer_ip_len <= wirelen);
			o_l3 = d->outer_l3_off;
			o_end = (size_t)d->outer_l3_off + d->outer_ip_len;
		} else {
			CHECK((d->flags & SECHO_DISSECT_F_MPLS) && d->outer_ip_len == 0);
		}
		CHECK(d->ip_version == 0 ||
		      (d->l3_off > o_l3 && (size_t)d->l3_off + d->ip_len <= o_end));
		CHECK(!d->inner_l2_off ||
		      ((size_t)d->inner_l2_off + 14 <= caplen &&
		       (d->ip_version == 0 || d->inner_l2_off + 14u <= d->l3_off)));
	} else {
		CHECK(d->ntun == 0 && d->outer_ip_version == 0 && d->inner_l2_off == 0);
		CHECK(d->ip_version == 0 || d->l3_off == l2);
	}
	for (unsigned i = 0; i < d->nvlan; i++) {
		CHECK(d->vlan_tpid[i] == rd16(f + 12 + 4 * i));
		CHECK(d->vlan_tci[i] == rd16(f + 14 + 4 * i));
	}
	if (d->ip_version == 0) {
		CHECK((d->flags & SECHO_DISSECT_F_TUNNEL) ||
		      (d->ethertype != 0x0800 && d->ethertype != 0x86dd));
		CHECK(!(d->flags & SECHO_DISSECT_F_MPLS) || (d->flags & SECHO_DISSECT_F_TUNNEL) ||
		      (f[l2] >> 4 != 4 && f[l2] >> 4 != 6));
		return;
	}
	const uint8_t *ip = f + d->l3_off;
	size_t hl = d->ip_version == 4 ? (size_t)(ip[0] & 15) * 4 : 40;
	CHECK((ip[0] >> 4) == d->ip_version);
	CHECK(d->l3_off + hl <= caplen && d->l3_off + d->ip_len <= wirelen);
	CHECK(d->ip_len == (d->ip_version == 4 ? rd16(ip + 2) : 40u + rd16(ip + 4)));
	CHECK(d->addr_off == d->l3_off + (d->ip_version == 4 ? 12 : 8));
	CHECK(d->l4_off >= d->l3_off + hl);
	CHECK((size_t)d->l4_off + d->l4_len == (size_t)d->l3_off + d->ip_len);
	if (d->ip_version == 4) {
		CHECK(d->l4_off == d->l3_off + hl && d->proto == ip[9]);
		CHECK(d->frag_id == rd16(ip + 4));
		uint16_t fr = rd16(ip + 6);
		CHECK(d->frag == ((fr & 0x1fff)   ? SECHO_FRAG_LATER
		                  : (fr & 0x2000) ? SECHO_FRAG_FIRST
		                                  : SECHO_FRAG_NONE));
	} else {
		CHECK(!!(d->flags & SECHO_DISSECT_F_IP6_EXT) == (d->l4_off != d->l3_off + 40));
	}
	CHECK(!!(d->flags & SECHO_DISSECT_F_SNAPPED) == (d->l3_off + d->ip_len > caplen));
	const uint8_t *l4 = f + d->l4_off;
	if (d->flags & SECHO_DISSECT_F_L4) {
		CHECK(d->frag != SECHO_FRAG_LATER);
		if (d->proto == 6) {
			CHECK(d->l4_off + 20u <= caplen && d->tcp_doff >= 20 &&
			      d->tcp_doff <= d->l4_len && d->tcp_doff == (l4[12] >> 4) * 4);
			CHECK(d->sport == rd16(l4) && d->dport == rd16(l4 + 2) &&
			      d->tcp_flags == l4[13]);
		} else if (d->proto == 17) {
			CHECK(d->l4_off + 8u <= caplen && d->l4_len >= 8);
			CHECK(d->sport == rd16(l4) && d->dport == rd16(l4 + 2));
		} else {
			CHECK((d->proto == 1 && d->ip_version == 4) ||
			      (d->proto == 58 && d->ip_version == 6));
			CHECK(d->l4_off + 8u <= caplen && d->l4_len >= 8);
			CHECK(d->icmp_type == l4[0] && d->icmp_code == l4[1]);
		}
	} else {
		CHECK(d->sport == 0 && d->dport == 0 && d->tcp_flags == 0 && d->icmp_type == 0 &&
		      d->icmp_code == 0);
		CHECK(d->frag == SECHO_FRAG_LATER ||
		      (d->proto != 6 && d->proto != 17 && d->proto != 1 && d->proto != 58) ||
		      (d->proto == 1 && d->ip_version == 6) ||
		      (d->proto == 58 && d->ip_version == 4));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct secho_dissect d, s;
	enum secho_dissect_reason r = secho_dissect(data, size, &d);
	check(data, size, size, r, &d);
	size_t wire = size + (size ? data[0] : 0);
	enum secho_dissect_reason rs = secho_dissect_snap(data, size, wire, &s);
	check(data, size, wire, rs, &s);
	/* A longer wire length can only turn "truncated" into "snapped". Not so after an MPLS
	 * label stack where a tunnel was found: Ethernet over MPLS is recognised by the first
	 * reading that is described (docs/FLOW.md, "Tunnels"), and a frame that reads both as
	 * IP and as Ethernet may have its first reading refused only when whole. */
	int eompls = ((d.flags | s.flags) & SECHO_DISSECT_F_MPLS) &&
	             ((d.flags | s.flags) & SECHO_DISSECT_F_TUNNEL);
	if (r == SECHO_DISSECT_OK && rs == SECHO_DISSECT_OK && !eompls)
		CHECK(d.ip_len == s.ip_len && d.l4_off == s.l4_off && d.sport == s.sport);

	/* The endpoint's parse is built on the dissector: an accepted request is an untagged
	 * whole IPv4/UDP packet, with these ports, in the dissector's words too. */
	if (size >= 34 && !(data[0] & 1)) {
		struct secho_wire_cfg cfg;
		secho_wire_cfg_defaults(&cfg);
		memcpy(cfg.mac, data, 6);
		memcpy(&cfg.ip, data + 30, 4);
		struct secho_wire_req q;
		if (secho_wire_parse(&cfg, data, size, &q) == SECHO_WIRE_OK) {
			CHECK(r == SECHO_DISSECT_OK && d.ip_version == 4 && d.nvlan == 0 &&
			      d.proto == 17 && d.frag == SECHO_FRAG_NONE);
			CHECK(q.src_port == d.sport && q.dst_port == d.dport &&
			      q.frame_len == d.l3_off + d.ip_len);
		}
	}
	return 0;
}
