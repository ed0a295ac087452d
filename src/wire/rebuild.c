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

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

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

	uint8_t *eth = out, *ip = out + SECHO_ETH_HLEN, *udp = ip + SECHO_IP4_HLEN;
	memcpy(eth, req->src_mac, SECHO_ETH_ALEN);
	memcpy(eth + SECHO_ETH_ALEN, cfg->mac, SECHO_ETH_ALEN);
	wr16(eth + 12, SECHO_ETHERTYPE_IPV4);

	size_t ulen = SECHO_UDP_HLEN + SECHO_SHDR_LEN + plen + SECHO_TAG_LEN;
	ip[0] = 0x45;
	ip[1] = req->tos & 0xfc;
	wr16(ip + 2, (uint16_t)(SECHO_IP4_HLEN + ulen));
	wr16(ip + 4, ip_id);
	wr16(ip + 6, SECHO_IP4_DF);
	ip[8] = SECHO_IP4_TTL;
	ip[9] = SECHO_IPPROTO_UDP;
	memcpy(ip + 12, &cfg->ip, 4);
	memcpy(ip + 16, &req->src_ip, 4);
	wr16(ip + 10, secho_ip4_csum(ip));

	wr16(udp, req->dst_port);
	wr16(udp + 2, req->src_port);
	wr16(udp + 4, (uint16_t)ulen);
	wr16(udp + 6, 0);
	memcpy(out + SECHO_RESP_SHDR_OFF, shdr, SECHO_SHDR_LEN);
	return flen;
}

void secho_wire_finalize(uint8_t *frame, size_t frame_len)
{
	uint8_t *ip = frame + SECHO_ETH_HLEN, *udp = ip + SECHO_IP4_HLEN;
	uint32_t saddr, daddr;
	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	udp[6] = udp[7] = 0;
	size_t ulen = frame_len - SECHO_ETH_HLEN - SECHO_IP4_HLEN;
	wr16(udp + 6, secho_udp4_csum(saddr, daddr, udp, ulen));
}

size_t secho_wire_arp_reply(const struct secho_wire_cfg *cfg, const uint8_t *frame, size_t len,
                            uint8_t *out, size_t out_cap)
{
	const size_t need = SECHO_ETH_HLEN + sizeof(struct secho_arp_ip4);
	if (len < need || out_cap < SECHO_ETH_MIN_FRAME)
		return 0;
	if (frame[12] != 0x08 || frame[13] != 0x06)
		return 0;
	const uint8_t *a = frame + SECHO_ETH_HLEN;
	/* htype 1, ptype 0x0800, hlen 6, plen 4, oper 1 (request) */
	static const uint8_t want[8] = {0, 1, 8, 0, 6, 4, 0, 1};
	if (memcmp(a, want, sizeof(want)) != 0)
		return 0;
	const uint8_t *sha = a + 8, *spa = a + 14, *tpa = a + 24;
	if (memcmp(tpa, &cfg->ip, 4) != 0)
		return 0;
	if ((sha[0] & 1) || !(sha[0] | sha[1] | sha[2] | sha[3] | sha[4] | sha[5]))
		return 0;
	/* The Ethernet source must be the ARP sender (no proxying for others). */
	if (memcmp(frame + SECHO_ETH_ALEN, sha, SECHO_ETH_ALEN) != 0)
		return 0;
	/* Requests are broadcast or unicast to us; anything else is not ours to answer. */
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	if (memcmp(frame, bcast, 6) != 0 && memcmp(frame, cfg->mac, 6) != 0)
		return 0;
	uint8_t sender_ip[4];
	memcpy(sender_ip, spa, 4);
	uint8_t sender_mac[6];
	memcpy(sender_mac, sha, 6); /* copied first: out may equal frame */

	memset(out, 0, SECHO_ETH_MIN_FRAME);
	memcpy(out, sender_mac, 6);
	memcpy(out + 6, cfg->mac, 6);
	out[12] = 0x08;
	out[13] = 0x06;
	uint8_t *r = out + SECHO_ETH_HLEN;
	memcpy(r, want, 7);
	r[7] = 2; /* reply */
	memcpy(r + 8, cfg->mac, 6);
	memcpy(r + 14, &cfg->ip, 4);
	memcpy(r + 18, sender_mac, 6);
	memcpy(r + 24, sender_ip, 4);
	return SECHO_ETH_MIN_FRAME;
}
