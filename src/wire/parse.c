/*
 * src/wire/parse.c - validate a request frame (docs/PROTOCOL.md, "Requests" and "Drops").
 *
 * The frame is described by the L2-L4 dissector (src/wire/wire_inner.h, which checks every
 * length before it reads the bytes it covers); the endpoint's rules then run in the order
 * of the verdict enum, and the first broken rule is the verdict. The frame is never
 * modified.
 */
#include <secho/wire.h>

#include "sys/names.h"
#include "wire/wire_inner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

static const char *const verdict_ids[] = {SECHO_WIRE_VERDICTS(SECHO_X_ID)};
static const char *const verdict_texts[] = {SECHO_WIRE_VERDICTS(SECHO_X_TEXT)};

const char *secho_wire_verdict_name(enum secho_wire_verdict v)
{
	return SECHO_NAME_AT(verdict_ids, v, "unknown");
}

const char *secho_wire_verdict_text(enum secho_wire_verdict v)
{
	return SECHO_NAME_AT(verdict_texts, v, "unknown verdict");
}

void secho_wire_cfg_defaults(struct secho_wire_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port_stream = SECHO_PORT_STREAM_DEFAULT;
	cfg->port_offload = SECHO_PORT_OFFLOAD_DEFAULT;
	cfg->port_counters = SECHO_PORT_COUNTERS_DEFAULT;
	cfg->mtu = SECHO_WIRE_DEFAULT_MTU;
}

static bool mac_is_zero(const uint8_t *m)
{
	return !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
}

/* Zero, limited broadcast, multicast (224/4), reserved (240/4), directed broadcast. */
static bool ip_is_bad_unicast(uint32_t ip_be, uint32_t netmask_be)
{
	uint32_t ip = ntohl(ip_be);
	if (ip == 0 || (ip >> 28) >= 0xe) /* 0.0.0.0, 224.0.0.0/4, 240.0.0.0/4 (incl. .255) */
		return true;
	if (netmask_be && netmask_be != 0xffffffffu) {
		uint32_t host = ip & ~ntohl(netmask_be);
		if (host == ~ntohl(netmask_be)) /* all host bits set */
			return true;
	}
	return false;
}

int secho_wire_cfg_check(const struct secho_wire_cfg *cfg)
{
	if (!cfg || mac_is_zero(cfg->mac) || (cfg->mac[0] & 1))
		return -EINVAL;
	if (ip_is_bad_unicast(cfg->ip, cfg->netmask))
		return -EINVAL;
	if (!cfg->port_stream || !cfg->port_offload || !cfg->port_counters ||
	    cfg->port_stream == cfg->port_offload || cfg->port_stream == cfg->port_counters ||
	    cfg->port_offload == cfg->port_counters)
		return -EINVAL;
	if (cfg->mtu < SECHO_WIRE_MIN_MTU || cfg->mtu > SECHO_WIRE_MAX_MTU)
		return -EINVAL;
	return 0;
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The endpoint's policy over the dissector's description. The dissector describes the
 * whole frame first; the rules below then run in docs/PROTOCOL.md's order, each reading
 * either the description or, where the dissector refused the frame at some header, the
 * reason it gave: it fills in everything before the header it refused, so a rule about an
 * earlier header (the MAC addresses before a truncated IPv4 header, say) still comes first.
 */
enum secho_wire_verdict secho_wire_parse(const struct secho_wire_cfg *cfg, const uint8_t *frame,
                                         size_t len, struct secho_wire_req *out)
{
	struct secho_dissect d;
	enum secho_dissect_reason r = secho_dissect_inline(frame, len, len, &d);

	/* Ethernet: offsets 0..13. */
	if (__builtin_expect(r != SECHO_DISSECT_OK, 0)) {
		if (r == SECHO_DISSECT_ETH_SHORT)
			return SECHO_WIRE_ETH_SHORT;
		if (r == SECHO_DISSECT_VLAN_SHORT || r == SECHO_DISSECT_VLAN_DEPTH)
			return SECHO_WIRE_VLAN;
	}
	if (d.nvlan)
		return SECHO_WIRE_VLAN;
	if (d.ethertype == SECHO_ETHERTYPE_ARP)
		return SECHO_WIRE_ARP;
	if (d.ethertype != SECHO_ETHERTYPE_IPV4)
		return SECHO_WIRE_NOT_IPV4;
	if (memcmp(frame, cfg->mac, SECHO_ETH_ALEN) != 0)
		return SECHO_WIRE_DST_MAC; /* broadcast/multicast never match our unicast MAC */
	const uint8_t *smac = frame + SECHO_ETH_ALEN;
	if ((smac[0] & 1) || mac_is_zero(smac)) /* I/G bit: multicast, incl. broadcast */
		return SECHO_WIRE_SRC_MAC;

	/* IPv4: offsets 14..33. */
	if (__builtin_expect(r != SECHO_DISSECT_OK, 0)) {
		if (r == SECHO_DISSECT_IP4_SHORT)
			return SECHO_WIRE_IP_SHORT;
		if (r == SECHO_DISSECT_IP4_VERSION)
			return SECHO_WIRE_IP_VERSION;
	}
	const uint8_t *ip = frame + SECHO_ETH_HLEN;
	if ((ip[0] & 0x0f) != 5) /* options are described, not served */
		return SECHO_WIRE_IP_IHL;
	/* Ethernet padding may follow the packet (frames under 60 bytes), never less. */
	if (__builtin_expect(r != SECHO_DISSECT_OK, 0) &&
	    (r == SECHO_DISSECT_IP4_TOTLEN || r == SECHO_DISSECT_IP_TRUNC))
		return SECHO_WIRE_IP_TOTLEN;
	/* Summing a correct header including its checksum gives 0xffff. */
	if (secho_csum_fold(secho_csum_add(0, ip, SECHO_IP4_HLEN)) != 0)
		return SECHO_WIRE_IP_CSUM;
	if (d.frag != SECHO_FRAG_NONE) /* MF set or offset non-zero; DF is fine */
		return SECHO_WIRE_IP_FRAGMENT;
	if (d.proto != SECHO_IPPROTO_UDP)
		return SECHO_WIRE_IP_PROTO;
	uint32_t saddr, daddr;
	memcpy(&saddr, frame + d.addr_off, 4);
	memcpy(&daddr, frame + d.addr_off + 4, 4);
	if (daddr != cfg->ip)
		return SECHO_WIRE_DST_IP;
	if (ip_is_bad_unicast(saddr, cfg->netmask))
		return SECHO_WIRE_SRC_IP;

	/* UDP: offsets 34..41, then the payload; ip_len - 20 bytes are the datagram. What is
	 * left of the dissector's reasons for a whole IPv4/UDP packet is udp_short. */
	if (__builtin_expect(r != SECHO_DISSECT_OK, 0))
		return SECHO_WIRE_UDP_SHORT;
	const uint8_t *udp = frame + d.l4_off;
	size_t ulen = rd16(udp + 4);
	if (ulen == 0)
		return SECHO_WIRE_UDP_LEN_ZERO;
	/* Strict: the UDP length must be the IP payload length exactly. Shorter would leave
	 * bytes the checksum does not cover; longer would read past the packet. */
	if (ulen != d.l4_len)
		return SECHO_WIRE_UDP_LEN;
	/* Summed with its checksum field, a correct datagram folds to zero. */
	if (rd16(udp + 6) != 0 && secho_udp4_sum(saddr, daddr, udp, ulen) != 0)
		return SECHO_WIRE_UDP_CSUM;
	uint16_t dport = d.dport;
	enum secho_port_class cls;
	if (dport == cfg->port_stream)
		cls = SECHO_PORT_STREAM;
	else if (dport == cfg->port_offload)
		cls = SECHO_PORT_OFFLOAD;
	else if (dport == cfg->port_counters)
		cls = SECHO_PORT_COUNTERS;
	else
		return SECHO_WIRE_DST_PORT;
	size_t plen = ulen - SECHO_UDP_HLEN;
	if (cfg->mtu < SECHO_WIRE_OVERHEAD_IP || plen > SECHO_WIRE_MAX_PAYLOAD(cfg->mtu))
		return SECHO_WIRE_PAYLOAD_LONG;

	memcpy(out->src_mac, smac, SECHO_ETH_ALEN);
	out->src_ip = saddr;
	out->src_port = d.sport;
	out->dst_port = dport;
	out->cls = cls;
	out->tos = ip[1];
	out->payload_off = SECHO_REQ_PAYLOAD_OFF;
	out->payload_len = (uint16_t)plen;
	out->frame_len = (uint16_t)(SECHO_ETH_HLEN + d.ip_len);
	return SECHO_WIRE_OK;
}
