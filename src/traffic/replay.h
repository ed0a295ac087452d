/*
 * src/traffic/replay.h - send a capture onto an interface, flat out or at a given rate, bounded
 * in time and count (`secho flow replay`; docs/FLOW.md, "Replay").
 *
 * Frames are read with libpcap (pcap and pcapng) and sent through the io layer's AF_PACKET
 * backend (include/secho/io.h), qdisc bypassed, one kick per burst of SECHO_IO_BURST frames:
 * by default with sendmmsg() (each frame copied into a burst buffer, the kernel copies it
 * into its packet), or from a TPACKET_V2 TX ring (tx_ring_mode: copied into the ring slot;
 * the kernel hands the slot's pages on, and a veth peer copies them). Measured on a veth
 * pair here, sendmmsg sent 15-35% more frames per second (docs/FLOW.md, "Replay"). A frame
 * captured shorter than it was (caplen < len) is sent as captured. With a rate, bursts are
 * paced on CLOCK_MONOTONIC so that the frames sent by time t never exceed rate * t (a
 * sender that cannot keep up sends flat out and says so in the result).
 */
#ifndef SECHO_FLOW_REPLAY_H
#define SECHO_FLOW_REPLAY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_REPLAY_MAX_SECONDS 86400.0

struct secho_flow_replay_cfg {
	const char *ifname;
	const char *pcap;
	double pps;          /* frames per second; 0 = flat out */
	uint64_t count;      /* frames to offer at most; 0 = every frame of every loop */
	double seconds;      /* stop after this long (0 < seconds <= SECHO_REPLAY_MAX_SECONDS) */
	uint32_t loops;      /* passes through the file; 0 = 1 */
	uint32_t frame_size; /* TX ring slot bytes (power of 2); 0 = from the file's snap length */
	uint32_t tx_ring;    /* TX ring slots; 0 = 1024 */
	bool tx_ring_mode;   /* send from the TX ring instead of with sendmmsg() */
	volatile sig_atomic_t *stop; /* set by a signal handler: stop after the burst */
};

struct secho_flow_replay_result {
	uint64_t frames;     /* taken by the kernel */
	uint64_t bytes;      /* their bytes (as sent, without FCS) */
	uint64_t refused;    /* frames the kernel refused (a full queue on the way) */
	uint64_t too_long;   /* frames larger than a TX ring slot: not sent */
	uint64_t too_short;  /* frames shorter than an Ethernet header: not sent */
	uint64_t tx_errors;  /* failed kicks (the io layer's count) */
	uint64_t ring_waits; /* bursts that found the TX ring full and waited */
	uint64_t behind;     /* paced bursts that started late (the sender could not keep up) */
	uint32_t loops_done; /* whole passes through the file */
	double elapsed_s;    /* first frame to last kick */
	bool timed_out;      /* stopped by seconds */
	bool interrupted;    /* stopped by *stop */
	char io_desc[200];   /* what the io layer opened */
};

/*
 * Send cfg->pcap onto cfg->ifname. Returns 0 with *res filled (also when stopped by time or
 * count), or -errno with one line in err when it could not start (file, interface, ring)
 * or the file turned out unreadable part way (res says what was sent until then).
 */
int secho_flow_replay_run(const struct secho_flow_replay_cfg *cfg,
                          struct secho_flow_replay_result *res, char *err, size_t errlen);

#endif
