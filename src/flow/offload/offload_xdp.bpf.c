/*
 * src/flow/offload/offload_xdp.bpf.c - the offload tier: an XDP program in front of the flow meter,
 * the Connection Tracking Table's analog (docs/FLOW.md, "The XDP offload tier").
 *
 * For every frame the interface receives:
 *   1. describe it to L4 exactly as the meter's dissector does (src/wire/wire_inner.h):
 *      up to two VLAN tags, an MPLS label stack (up to 8 labels) or a PPPoE session
 *      with IP inside, IPv4 with options, IPv6 with hop-by-hop, routing,
 *      destination options, AH and Mobility headers; TCP and UDP ports, ICMP (v4 in IPv4,
 *      v6 in IPv6) type and code, any other protocol by addresses and protocol. Whatever
 *      the meter would refuse (a header it calls truncated or malformed) goes on to it
 *      untouched, and so do IP fragments (the meter ties later fragments to their first
 *      by the IP id), TCP packets with SYN, FIN or RST (the meter sees every connection
 *      start and end), anything whose headers are not in the frame's first buffer, and
 *      anything the meter may follow into a tunnel (IP protocol 4, 41, 47; UDP to the
 *      VXLAN, Geneve and GTP-U ports; MPLS without IP after the labels): the meter keys
 *      those by their innermost packet and tunnel, which this program does not parse, so
 *      it never offloads them (pass_tunnel);
 *   2. build the flow key as the meter's table keeps it (record.h; canonical order for
 *      biflows, secho_flow_key_canon: the lower (address, port) end first), and note which
 *      way the packet runs against it;
 *   3. look the key up in the map of offloaded flows (filled by user space,
 *      src/flow/offload/offload.c): a hit adds the packet to that direction's counters on this
 *      CPU and drops it; a miss goes on to the meter. So does a hit that comes after the
 *      flow's record has timed out (offload_abi.h: its active timeout has passed, or the
 *      flow has been idle for the inactive timeout): the meter then ends the record at
 *      that packet, exactly as it would have without the offload, and takes the flow
 *      back; nothing is counted in an entry the meter is about to take.
 * "On to the meter" is an AF_XDP socket of the receive queue when one is in the XSKMAP
 * (the meter reads by AF_XDP), else the kernel's stack (XDP_PASS: an AF_PACKET socket
 * gets it). Every frame is counted once under its outcome (offload_abi.h).
 *
 * Lengths: the frame may span several buffers (jumbo frames; the program is frags-aware,
 * section xdp.frags). Headers are read from the first buffer only; the frame's length on
 * the wire (bpf_xdp_get_buff_len) is what the IP length is checked against, as the meter
 * checks it against the frame length.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "flow/offload/offload_abi.h"

#define MAX_QUEUES 256 /* XSKMAP slots: interface receive queues */

/* The sizes are set by user space before the program is loaded (--offload-flows). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct secho_flow_key);
	__type(value, struct secho_offload_val);
} secho_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SECHO_OFFLOAD_CNT_COUNT);
	__type(key, uint32_t);
	__type(value, uint64_t);
} secho_ofl_cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, uint32_t);
	__type(value, uint32_t);
} secho_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct secho_offload_meta);
} secho_ofl_meta SEC(".maps");

/* Set before load: uniflow keys (as seen, one direction) instead of canonical biflows; the
 * meter's inactive timeout (0: none) and the number of possible CPUs (the per-CPU copies). */
const volatile uint8_t cfg_uniflow = 0;
const volatile uint64_t cfg_inactive_ns = 0;
const volatile uint32_t cfg_ncpus = 1;

#define MAX_CPUS 256 /* copies looked at when a flow looks idle on this CPU */

#define IPPROTO_HOPOPTS_  0
#define IPPROTO_ICMP_     1
#define IPPROTO_TCP_      6
#define IPPROTO_UDP_      17
#define IPPROTO_ROUTING_  43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_ICMPV6_   58
#define IPPROTO_AH_       51
#define IPPROTO_DSTOPTS_  60
#define IPPROTO_MOBILITY_ 135
#define IPPROTO_IPIP_     4
#define IPPROTO_IPV6_     41
#define IPPROTO_GRE_      47
#define UDP_VXLAN_        4789 /* the tunnel ports the meter's dissector follows */
#define UDP_GENEVE_       6081
#define UDP_GTPU_         2152
#define MAX_EXT           8 /* SECHO_DISSECT_MAX_EXT */
#define MAX_MPLS          8 /* SECHO_DISSECT_MAX_MPLS */

/* Outcome of the description: HIT means "keyed, look it up". */
#define KEYED SECHO_OFFLOAD_CNT_HIT

/* The key as 32-bit words: the program's stack stores must be aligned. */
union flow_key {
	struct secho_flow_key k;
	uint32_t w[13];
};

struct pkt {
	union flow_key key;
	uint32_t ip_len;
	uint8_t tcp_flags;
	uint8_t dir; /* 0: runs from key.src to key.dst */
};

static __always_inline void count(uint32_t idx, uint64_t n)
{
	uint64_t *c = bpf_map_lookup_elem(&secho_ofl_cnt, &idx);

	if (c)
		*c += n;
}

static __always_inline int is_vlan(uint16_t be_type)
{
	return be_type == bpf_htons(0x8100) || be_type == bpf_htons(0x88a8) ||
	       be_type == bpf_htons(0x9100);
}

/* A header that does not fit: malformed when the frame ends before it (the meter refuses
 * it too), else merely outside the first buffer (the meter can read it; we pass). */
static __always_inline uint32_t short_why(uint64_t need, uint64_t wire)
{
	return need > wire ? SECHO_OFFLOAD_CNT_PASS_MALFORMED : SECHO_OFFLOAD_CNT_PASS_UNPARSED;
}

/* The transport header at l4 (l4_len bytes of it inside the IP packet); v4: IPv4 packet. */
static __always_inline uint32_t parse_l4(uint8_t *l4, void *end, uint64_t l4off, uint64_t wire,
                                         uint32_t l4_len, int v4, struct pkt *p)
{
	uint8_t proto = p->key.k.proto;

	/* Tunnels are never offloaded: the meter keys a tunnelled packet by its innermost
	 * header and its tunnel, the program does not look inside. Whatever the meter might
	 * follow (GRE, IP in IP, VXLAN, Geneve, GTP-U ports) goes on to it. */
	if (proto == IPPROTO_GRE_ || proto == IPPROTO_IPIP_ || proto == IPPROTO_IPV6_)
		return SECHO_OFFLOAD_CNT_PASS_TUNNEL;
	if (proto == IPPROTO_TCP_) {
		if (l4_len < 20)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		if (l4 + 20 > (uint8_t *)end)
			return short_why(l4off + 20, wire);
		uint32_t doff = (uint32_t)(l4[12] >> 4) * 4;
		if (doff < 20 || doff > l4_len)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		p->tcp_flags = l4[13];
		if (p->tcp_flags & 0x07) /* FIN, SYN, RST */
			return SECHO_OFFLOAD_CNT_PASS_TCP_CTL;
		p->key.k.sport = (uint16_t)(l4[0] << 8 | l4[1]);
		p->key.k.dport = (uint16_t)(l4[2] << 8 | l4[3]);
	} else if (proto == IPPROTO_UDP_) {
		if (l4_len < 8)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		if (l4 + 4 > (uint8_t *)end)
			return short_why(l4off + 8, wire);
		p->key.k.sport = (uint16_t)(l4[0] << 8 | l4[1]);
		p->key.k.dport = (uint16_t)(l4[2] << 8 | l4[3]);
		if (p->key.k.dport == UDP_VXLAN_ || p->key.k.dport == UDP_GENEVE_ ||
		    p->key.k.dport == UDP_GTPU_)
			return SECHO_OFFLOAD_CNT_PASS_TUNNEL;
	} else if ((proto == IPPROTO_ICMP_ && v4) || (proto == IPPROTO_ICMPV6_ && !v4)) {
		if (l4_len < 8)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		if (l4 + 2 > (uint8_t *)end)
			return short_why(l4off + 8, wire);
		p->key.k.icmp_type_code = (uint16_t)(l4[0] << 8 | l4[1]);
	}
	/* Any other protocol (ICMP in IPv6 or ICMPv6 in IPv4 too): addresses and protocol. */
	return KEYED;
}

static __always_inline uint32_t parse_ip4(uint8_t *ip, void *end, uint64_t l3off, uint64_t wire,
                                          struct pkt *p)
{
	if (ip + 20 > (uint8_t *)end)
		return short_why(l3off + 20, wire);
	if ((ip[0] >> 4) != 4)
		return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20)
		return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
	if (ip + ihl > (uint8_t *)end)
		return short_why(l3off + ihl, wire);
	uint32_t tot = (uint32_t)ip[2] << 8 | ip[3];
	if (tot < ihl || l3off + tot > wire)
		return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
	if ((ip[6] & 0x3f) || ip[7]) /* MF or a fragment offset */
		return SECHO_OFFLOAD_CNT_PASS_FRAG;
	p->ip_len = tot;
	p->key.k.ip_version = 4;
	p->key.k.proto = ip[9];
	p->key.w[3] = *(uint32_t *)(ip + 12);
	p->key.w[7] = *(uint32_t *)(ip + 16);
	return parse_l4(ip + ihl, end, l3off + ihl, wire, tot - ihl, 1, p);
}

static __always_inline uint32_t parse_ip6(uint8_t *ip, void *end, uint64_t l3off, uint64_t wire,
                                          struct pkt *p)
{
	if (ip + 40 > (uint8_t *)end)
		return short_why(l3off + 40, wire);
	if ((ip[0] >> 4) != 6)
		return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
	uint32_t tot = 40 + ((uint32_t)ip[4] << 8 | ip[5]);
	if (l3off + tot > wire)
		return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
	uint8_t nh = ip[6];
	uint32_t h = 40;

	/* RFC 8200 section 4, as src/wire/wire_inner.h follows it: hop-by-hop first only,
	 * routing, destination options, AH (RFC 4302: 4-octet units) and Mobility (RFC 6275)
	 * headers, at most MAX_EXT; a fragment header sends the packet to the meter. */
	for (uint32_t n = 0; n <= MAX_EXT; n++) {
		if (nh == IPPROTO_FRAGMENT_)
			return n == MAX_EXT ? SECHO_OFFLOAD_CNT_PASS_MALFORMED
			                    : SECHO_OFFLOAD_CNT_PASS_FRAG;
		if (nh != IPPROTO_HOPOPTS_ && nh != IPPROTO_ROUTING_ && nh != IPPROTO_DSTOPTS_ &&
		    nh != IPPROTO_AH_ && nh != IPPROTO_MOBILITY_)
			goto l4;
		if ((nh == IPPROTO_HOPOPTS_ && n) || n == MAX_EXT || h + 8 > tot)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		/* Bounded for the verifier: a chain this long is past the first buffer. */
		if (h > 2048)
			return SECHO_OFFLOAD_CNT_PASS_UNPARSED;
		uint8_t *e = ip + h;
		if (e + 2 > (uint8_t *)end)
			return short_why(l3off + h + 8, wire);
		uint32_t len =
		        nh == IPPROTO_AH_ ? ((uint32_t)e[1] + 2) * 4 : ((uint32_t)e[1] + 1) * 8;
		if (h + len > tot)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		nh = e[0];
		h += len;
	}
	return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
l4:
	if (h > 4096)
		return SECHO_OFFLOAD_CNT_PASS_UNPARSED;
	p->ip_len = tot;
	p->key.k.ip_version = 6;
	p->key.k.proto = nh;
	for (int i = 0; i < 4; i++) {
		p->key.w[3 + i] = *(uint32_t *)(ip + 8 + 4 * i);
		p->key.w[7 + i] = *(uint32_t *)(ip + 24 + 4 * i);
	}
	return parse_l4(ip + h, end, l3off + h, wire, tot - h, 0, p);
}

/* An MPLS label stack or a PPPoE session at off, as src/wire/wire_inner.h's dis_encap
 * reads it: the IP packet inside is keyed as a plain one (labels and the session are not
 * in the meter's key); anything else inside is not IP. */
static __always_inline uint32_t parse_encap(uint8_t *data, void *end, uint64_t off, uint64_t wire,
                                            uint16_t type, struct pkt *p)
{
	uint8_t v;

	if (type == bpf_htons(ETH_P_PPP_SES)) {
		/* PPP's protocol: 2 bytes, or 1 when compressed (an odd first byte) */
		if (data + off + 7 > (uint8_t *)end)
			return short_why(off + 7, wire);
		uint16_t ppp = data[off + 6];
		if (ppp & 1) {
			off += 7;
		} else {
			if (data + off + 8 > (uint8_t *)end)
				return short_why(off + 8, wire);
			ppp = (uint16_t)(ppp << 8 | data[off + 7]);
			off += 8;
		}
		if (ppp == 0x0021)
			v = 4;
		else if (ppp == 0x0057)
			v = 6;
		else
			return SECHO_OFFLOAD_CNT_PASS_NOT_IP;
	} else {
		uint32_t n;
		for (n = 0; n < MAX_MPLS; n++) {
			if (data + off + 4 > (uint8_t *)end)
				return short_why(off + 4, wire);
			uint8_t s = data[off + 2] & 1; /* bottom of stack */
			off += 4;
			if (s)
				break;
		}
		if (n == MAX_MPLS)
			return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		if (data + off + 1 > (uint8_t *)end)
			return short_why(off + 1, wire);
		v = data[off] >> 4;
		if (v != 4 && v != 6) /* maybe Ethernet over MPLS: the meter's to follow */
			return SECHO_OFFLOAD_CNT_PASS_TUNNEL;
	}
	if (v == 4)
		return parse_ip4(data + off, end, off, wire, p);
	return parse_ip6(data + off, end, off, wire, p);
}

/* Describe the frame; KEYED with p filled, or the reason it goes to the meter. */
static __always_inline uint32_t parse(struct xdp_md *ctx, struct pkt *p)
{
	uint8_t *data = (uint8_t *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	uint64_t wire = bpf_xdp_get_buff_len(ctx);
	uint64_t off = 14;

	if (data + 14 > (uint8_t *)end)
		return short_why(14, wire);
	uint16_t type = *(uint16_t *)(data + 12);
	if (is_vlan(type)) {
		if (data + 18 > (uint8_t *)end)
			return short_why(18, wire);
		p->key.k.vlan = bpf_ntohs(*(uint16_t *)(data + 14)) & 0x0fff;
		type = *(uint16_t *)(data + 16);
		off = 18;
		if (is_vlan(type)) {
			if (data + 22 > (uint8_t *)end)
				return short_why(22, wire);
			p->key.k.vlan_inner = bpf_ntohs(*(uint16_t *)(data + 18)) & 0x0fff;
			type = *(uint16_t *)(data + 20);
			off = 22;
			if (is_vlan(type))
				return SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		}
	}
	if (type == bpf_htons(ETH_P_IP))
		return parse_ip4(data + off, end, off, wire, p);
	if (type == bpf_htons(ETH_P_IPV6))
		return parse_ip6(data + off, end, off, wire, p);
	if (type == bpf_htons(ETH_P_MPLS_UC) || type == bpf_htons(ETH_P_MPLS_MC) ||
	    type == bpf_htons(ETH_P_PPP_SES))
		return parse_encap(data, end, off, wire, type, p);
	return SECHO_OFFLOAD_CNT_PASS_NOT_IP;
}

/* Biflows: put the key in the meter's canonical order (secho_flow_key_canon: addresses
 * compared as bytes, then ports; a swap turns an ICMP query type into its answer's, as
 * secho_flow_key_reverse does) and note the packet's direction against it. */
static __always_inline void canon(struct pkt *p)
{
	int c = 0;

	for (int i = 0; i < 4 && !c; i++) {
		uint32_t a = bpf_ntohl(p->key.w[3 + i]), b = bpf_ntohl(p->key.w[7 + i]);
		c = a < b ? -1 : a > b ? 1 : 0;
	}
	uint16_t ans = secho_flow_icmp_answer(p->key.k.ip_version, p->key.k.proto,
	                                      p->key.k.icmp_type_code);
	if (c == 0)
		c = p->key.k.sport != p->key.k.dport ? (p->key.k.sport > p->key.k.dport ? 1 : -1)
		                                     : (ans < p->key.k.icmp_type_code ? 1 : 0);
	if (c > 0) {
		for (int i = 0; i < 4; i++) {
			uint32_t t = p->key.w[3 + i];
			p->key.w[3 + i] = p->key.w[7 + i];
			p->key.w[7 + i] = t;
		}
		uint16_t t = p->key.k.sport;
		p->key.k.sport = p->key.k.dport;
		p->key.k.dport = t;
		p->key.k.icmp_type_code = ans;
		p->dir = 1;
	}
}

/* Not ours to keep: the queue's AF_XDP socket if it has one, else the stack. */
/* The latest packet of the flow on this CPU (or its birth). */
static __always_inline uint64_t last_seen(const struct secho_offload_val *v)
{
	uint64_t l = v->born;

	if (v->d[0].packets && v->d[0].last_ns > l)
		l = v->d[0].last_ns;
	if (v->d[1].packets && v->d[1].last_ns > l)
		l = v->d[1].last_ns;
	return l;
}

/* Idle for the inactive timeout on every CPU? Only asked when it is on this one (rare: the
 * flow's packets came on another CPU, or it is idle). */
static __always_inline int idle_everywhere(const union flow_key *k, uint64_t now)
{
	for (uint32_t cpu = 0; cpu < MAX_CPUS && cpu < cfg_ncpus; cpu++) {
		const struct secho_offload_val *o =
		        bpf_map_lookup_percpu_elem(&secho_flows, &k->k, cpu);
		if (o && (int64_t)(now - last_seen(o)) < (int64_t)cfg_inactive_ns)
			return 0;
	}
	return 1;
}

static __always_inline int to_meter(struct xdp_md *ctx)
{
	long act = bpf_redirect_map(&secho_xsks, ctx->rx_queue_index, XDP_PASS);

	if (act == XDP_REDIRECT)
		count(SECHO_OFFLOAD_CNT_XSK, 1);
	return (int)act;
}

SEC("xdp.frags")
int secho_offload(struct xdp_md *ctx)
{
	struct pkt p;

	__builtin_memset(&p, 0, sizeof(p));
	uint32_t why = parse(ctx, &p);
	if (why == KEYED) {
		if (!cfg_uniflow)
			canon(&p);
		struct secho_offload_val *v = bpf_map_lookup_elem(&secho_flows, &p.key.k);
		uint64_t now = v ? bpf_ktime_get_ns() : 0;
		if (v && v->active_end && now >= v->active_end) {
			why = SECHO_OFFLOAD_CNT_PASS_ACTIVE;
		} else if (v && cfg_inactive_ns &&
		           (int64_t)(now - last_seen(v)) >= (int64_t)cfg_inactive_ns &&
		           idle_everywhere(&p.key, now)) {
			why = SECHO_OFFLOAD_CNT_PASS_IDLE;
		} else if (v) {
			/* This CPU's copy: plain stores (offload_abi.h says why). */
			struct secho_offload_dir *d = &v->d[p.dir & 1];
			if (!d->packets)
				d->first_ns = now;
			d->packets++;
			d->octets += p.ip_len;
			d->last_ns = now;
			d->tcp_flags |= p.tcp_flags;
			count(SECHO_OFFLOAD_CNT_HIT, 1);
			count(SECHO_OFFLOAD_CNT_HIT_OCTETS, p.ip_len);
			return XDP_DROP;
		} else {
			why = SECHO_OFFLOAD_CNT_MISS;
		}
	}
	count(why, 1);
	return to_meter(ctx);
}
