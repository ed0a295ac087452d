/*
 * src/wire/parse.c - validate a request frame (docs/PROTOCOL.md, "Requests" and "Drops").
 *
 * Every length is checked before the bytes it covers are read, in the order of the verdict
 * enum; the first broken rule is the verdict. The frame is never modified.
 */
#include <secho/wire.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

static const char *const verdict_ids[] = {
#define SECHO_WIRE_X(name, id, text) [SECHO_WIRE_##name] = id,
        SECHO_WIRE_VERDICTS(SECHO_WIRE_X)
#undef SECHO_WIRE_X
};
static const char *const verdict_texts[] = {
#define SECHO_WIRE_X(name, id, text) [SECHO_WIRE_##name] = text,
        SECHO_WIRE_VERDICTS(SECHO_WIRE_X)
#undef SECHO_WIRE_X
};

const char *secho_wire_verdict_name(enum secho_wire_verdict v)
{
	return (unsigned)v < SECHO_WIRE_VERDICT_COUNT ? verdict_ids[v] : "unknown";
}

const char *secho_wire_verdict_text(enum secho_wire_verdict v)
{
	return (unsigned)v < SECHO_WIRE_VERDICT_COUNT ? verdict_texts[v] : "unknown verdict";
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

enum secho_wire_verdict secho_wire_parse(const struct secho_wire_cfg *cfg, const uint8_t *frame,
                                         size_t len, struct secho_wire_req *out)
{
	/* Ethernet: offsets 0..13. */
	if (len < SECHO_ETH_HLEN)
		return SECHO_WIRE_ETH_SHORT;
	uint16_t type = rd16(frame + 12);
	if (type == 0x8100 || type == 0x88a8 || type == 0x9100)
		return SECHO_WIRE_VLAN;
	if (type == SECHO_ETHERTYPE_ARP)
		return SECHO_WIRE_ARP;
	if (type != SECHO_ETHERTYPE_IPV4)
		return SECHO_WIRE_NOT_IPV4;
	if (memcmp(frame, cfg->mac, SECHO_ETH_ALEN) != 0)
		return SECHO_WIRE_DST_MAC; /* broadcast/multicast never match our unicast MAC */
	const uint8_t *smac = frame + SECHO_ETH_ALEN;
	if ((smac[0] & 1) || mac_is_zero(smac)) /* I/G bit: multicast, incl. broadcast */
		return SECHO_WIRE_SRC_MAC;

	/* IPv4: offsets 14..33. */
	if (len < SECHO_ETH_HLEN + SECHO_IP4_HLEN)
		return SECHO_WIRE_IP_SHORT;
	const uint8_t *ip = frame + SECHO_ETH_HLEN;
	if ((ip[0] >> 4) != 4)
		return SECHO_WIRE_IP_VERSION;
	if ((ip[0] & 0x0f) != 5)
		return SECHO_WIRE_IP_IHL;
	size_t tot = rd16(ip + 2);
	/* Ethernet padding may follow the packet (frames under 60 bytes), never less. */
	if (tot < SECHO_IP4_HLEN || tot > len - SECHO_ETH_HLEN)
		return SECHO_WIRE_IP_TOTLEN;
	/* Summing a correct header including its checksum gives 0xffff. */
	if (secho_csum_fold(secho_csum_add(0, ip, SECHO_IP4_HLEN)) != 0)
		return SECHO_WIRE_IP_CSUM;
	uint16_t frag = rd16(ip + 6);
	if (frag & (SECHO_IP4_MF | SECHO_IP4_OFF_MASK))
		return SECHO_WIRE_IP_FRAGMENT;
	if (ip[9] != SECHO_IPPROTO_UDP)
		return SECHO_WIRE_IP_PROTO;
	uint32_t saddr, daddr;
	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	if (daddr != cfg->ip)
		return SECHO_WIRE_DST_IP;
	if (ip_is_bad_unicast(saddr, cfg->netmask))
		return SECHO_WIRE_SRC_IP;

	/* UDP: offsets 34..41, then the payload; tot - 20 bytes are the datagram. */
	size_t ulen_avail = tot - SECHO_IP4_HLEN;
	if (ulen_avail < SECHO_UDP_HLEN)
		return SECHO_WIRE_UDP_SHORT;
	const uint8_t *udp = ip + SECHO_IP4_HLEN;
	size_t ulen = rd16(udp + 4);
	if (ulen == 0)
		return SECHO_WIRE_UDP_LEN_ZERO;
	/* Strict: the UDP length must be the IP payload length exactly. Shorter would leave
	 * bytes the checksum does not cover; longer would read past the packet. */
	if (ulen != ulen_avail)
		return SECHO_WIRE_UDP_LEN;
	/* Summed with its checksum field, a correct datagram folds to zero. */
	if (rd16(udp + 6) != 0 && secho_udp4_sum(saddr, daddr, udp, ulen) != 0)
		return SECHO_WIRE_UDP_CSUM;
	uint16_t dport = rd16(udp + 2);
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
	out->src_port = rd16(udp);
	out->dst_port = dport;
	out->cls = cls;
	out->tos = ip[1];
	out->payload_off = SECHO_REQ_PAYLOAD_OFF;
	out->payload_len = (uint16_t)plen;
	out->frame_len = (uint16_t)(SECHO_ETH_HLEN + tot);
	return SECHO_WIRE_OK;
}
