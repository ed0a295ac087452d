/*
 * src/wire/rebuild.c - write the response headers and finalize its checksum; ARP replies.
 *
 * Response layout (docs/PROTOCOL.md, "Responses"):
 *   0  Ethernet: dst = request source MAC, src = endpoint MAC, type IPv4
 *  14  IPv4: IHL 5, DSCP echoed (ECN cleared), fresh ID, DF, TTL 64, UDP, addresses swapped
 *  34  UDP: ports swapped, length 8 + 16 + len + 16, checksum set by finalize
 *  42  secure header (16 bytes, the GCM AAD)
 *  58  ciphertext (len bytes), then the 16-byte tag
 */
#include <secho/wire.h>

#include <arpa/inet.h>
#include <string.h>

/* The headers are the packed wire structs of secho/wire.h, written through pointers into
 * the frame (no alignment assumed); multi-byte fields in network order. */

size_t secho_wire_rebuild(const struct secho_wire_cfg *cfg, const struct secho_wire_req *req,
                          const uint8_t *req_frame, const uint8_t shdr[SECHO_SHDR_LEN],
                          uint16_t ip_id, uint8_t *out, size_t out_cap)
{
	size_t plen = req->payload_len;
	size_t flen = SECHO_RESP_LEN(plen);
	if (out_cap < flen)
		return 0;
	/* Move the plaintext first: in place it sits at 42.., exactly where the secure header
	 * goes; memmove handles the overlap. */
	if (req_frame && plen)
		memmove(out + SECHO_RESP_PAYLOAD_OFF, req_frame + req->payload_off, plen);

	struct secho_eth_hdr *eth = (struct secho_eth_hdr *)out;
	struct secho_ip4_hdr *ip = (struct secho_ip4_hdr *)(out + SECHO_ETH_HLEN);
	struct secho_udp_hdr *udp = (struct secho_udp_hdr *)(out + SECHO_ETH_HLEN + SECHO_IP4_HLEN);
	memcpy(eth->dst, req->src_mac, SECHO_ETH_ALEN);
	memcpy(eth->src, cfg->mac, SECHO_ETH_ALEN);
	eth->type = htons(SECHO_ETHERTYPE_IPV4);

	size_t ulen = SECHO_UDP_HLEN + SECHO_SHDR_LEN + plen + SECHO_TAG_LEN;
	ip->ver_ihl = 0x45;
	ip->tos = req->tos & 0xfc; /* DSCP echoed, ECN cleared */
	ip->tot_len = htons((uint16_t)(SECHO_IP4_HLEN + ulen));
	ip->id = htons(ip_id);
	ip->frag = htons(SECHO_IP4_DF);
	ip->ttl = SECHO_IP4_TTL;
	ip->proto = SECHO_IPPROTO_UDP;
	ip->saddr = cfg->ip;
	ip->daddr = req->src_ip;
	ip->csum = htons(secho_ip4_csum(ip));

	udp->sport = htons(req->dst_port);
	udp->dport = htons(req->src_port);
	udp->len = htons((uint16_t)ulen);
	udp->csum = 0;
	memcpy(out + SECHO_RESP_SHDR_OFF, shdr, SECHO_SHDR_LEN);
	return flen;
}

void secho_wire_finalize(uint8_t *frame, size_t frame_len)
{
	const struct secho_ip4_hdr *ip = (const struct secho_ip4_hdr *)(frame + SECHO_ETH_HLEN);
	struct secho_udp_hdr *udp =
	        (struct secho_udp_hdr *)(frame + SECHO_ETH_HLEN + SECHO_IP4_HLEN);
	size_t ulen = frame_len - SECHO_ETH_HLEN - SECHO_IP4_HLEN;

	udp->csum = 0;
	udp->csum = htons(secho_udp4_csum(ip->saddr, ip->daddr, udp, ulen));
}

size_t secho_wire_arp_reply(const struct secho_wire_cfg *cfg, const uint8_t *frame, size_t len,
                            uint8_t *out, size_t out_cap)
{
	static const uint8_t bcast[SECHO_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const struct secho_eth_hdr *eth = (const struct secho_eth_hdr *)frame;
	const struct secho_arp_ip4 *a = (const struct secho_arp_ip4 *)(frame + SECHO_ETH_HLEN);

	if (len < SECHO_ETH_HLEN + sizeof(*a) || out_cap < SECHO_ETH_MIN_FRAME)
		return 0;
	if (eth->type != htons(SECHO_ETHERTYPE_ARP))
		return 0;
	/* An IPv4-over-Ethernet request (RFC 826): htype 1, ptype 0x0800, hlen 6, plen 4. */
	if (a->htype != htons(1) || a->ptype != htons(SECHO_ETHERTYPE_IPV4) ||
	    a->hlen != SECHO_ETH_ALEN || a->plen != 4 || a->oper != htons(1))
		return 0;
	if (memcmp(a->tpa, &cfg->ip, 4) != 0)
		return 0;
	if ((a->sha[0] & 1) ||
	    !(a->sha[0] | a->sha[1] | a->sha[2] | a->sha[3] | a->sha[4] | a->sha[5]))
		return 0;
	/* The Ethernet source must be the ARP sender (no proxying for others). */
	if (memcmp(eth->src, a->sha, SECHO_ETH_ALEN) != 0)
		return 0;
	/* Requests are broadcast or unicast to us; anything else is not ours to answer. */
	if (memcmp(eth->dst, bcast, SECHO_ETH_ALEN) != 0 &&
	    memcmp(eth->dst, cfg->mac, SECHO_ETH_ALEN) != 0)
		return 0;
	uint8_t sender_ip[4], sender_mac[SECHO_ETH_ALEN];
	memcpy(sender_ip, a->spa, 4); /* copied first: out may equal frame */
	memcpy(sender_mac, a->sha, SECHO_ETH_ALEN);

	struct secho_eth_hdr *oeth = (struct secho_eth_hdr *)out;
	struct secho_arp_ip4 *r = (struct secho_arp_ip4 *)(out + SECHO_ETH_HLEN);
	memset(out, 0, SECHO_ETH_MIN_FRAME);
	memcpy(oeth->dst, sender_mac, SECHO_ETH_ALEN);
	memcpy(oeth->src, cfg->mac, SECHO_ETH_ALEN);
	oeth->type = htons(SECHO_ETHERTYPE_ARP);
	r->htype = htons(1);
	r->ptype = htons(SECHO_ETHERTYPE_IPV4);
	r->hlen = SECHO_ETH_ALEN;
	r->plen = 4;
	r->oper = htons(2); /* reply */
	memcpy(r->sha, cfg->mac, SECHO_ETH_ALEN);
	memcpy(r->spa, &cfg->ip, 4);
	memcpy(r->tha, sender_mac, SECHO_ETH_ALEN);
	memcpy(r->tpa, sender_ip, 4);
	return SECHO_ETH_MIN_FRAME;
}
