/*
 * src/traffic/gen_write.c - the generator's files: a classic libpcap capture and its truth
 * (contract: gen.h; format: docs/FLOW.md, "The traffic generator").
 *
 * The pcap is written directly (24-byte file header, 16-byte record headers, little-endian
 * magic 0xa1b2c3d4: microsecond timestamps, LINKTYPE_ETHERNET), through a 1 MiB stdio
 * buffer: the records are produced in order and never held. Both files are written under
 * temporary names beside the targets and renamed at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secho/dissect.h"
#include "secho/fileio.h"
#include "traffic/gen.h"
#include "traffic/gen_app.h"

const char secho_gen_truth_header[] = "vlan,vlan_inner,ip_version,proto,src,dst,sport,dport,"
                                      "icmp_type,icmp_code,packets,octets,first_ns,last_ns,"
                                      "tcp_flags";

const char secho_gen_truth_header_tun[] = "vlan,vlan_inner,ip_version,proto,src,dst,sport,dport,"
                                          "icmp_type,icmp_code,packets,octets,first_ns,last_ns,"
                                          "tcp_flags,tunnel_type,tunnel_id,bytes_outer";

int secho_gen_truth_line_tun(char *buf, size_t n, const struct secho_gen_flow *fl)
{
	int rc = secho_gen_truth_line(buf, n, fl);
	if (rc)
		return rc;
	size_t l = strlen(buf);
	int r = snprintf(buf + l, n - l, ",%s,%" PRIu32 ",%" PRIu64,
	                 secho_tun_name(fl->key.tun_type), fl->key.tun_id, fl->bytes_outer);
	return r < 0 || (size_t)r >= n - l ? -ENOSPC : 0;
}

int secho_gen_truth_line(char *buf, size_t n, const struct secho_gen_flow *fl)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int fam = fl->key.ip_version == 4 ? AF_INET : AF_INET6;
	if (!inet_ntop(fam, fl->key.src, s, sizeof(s)) ||
	    !inet_ntop(fam, fl->key.dst, d, sizeof(d)))
		return -EINVAL;
	bool icmp = fl->key.proto == 1 || fl->key.proto == 58;
	int r = snprintf(buf, n,
	                 "%u,%u,%u,%u,%s,%s,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
	                 ",%" PRIu64 ",%u",
	                 fl->key.vlan, fl->key.vlan_inner, fl->key.ip_version, fl->key.proto, s, d,
	                 fl->key.sport, fl->key.dport, icmp ? fl->key.icmp_type_code >> 8 : 0,
	                 icmp ? fl->key.icmp_type_code & 0xff : 0, fl->dir.packets, fl->dir.octets,
	                 fl->dir.first_ns, fl->dir.last_ns, fl->dir.tcp_flags);
	return r < 0 || (size_t)r >= n ? -ENOSPC : 0;
}

struct wctx {
	FILE *truth;
	int err;
	bool tun; /* the tunnel columns */
	bool app; /* the app and features columns */
};

static void on_flow(void *p, const struct secho_gen_flow *fl)
{
	struct wctx *w = p;
	char line[256];
	int rc = w->tun ? secho_gen_truth_line_tun(line, sizeof(line), fl)
	                : secho_gen_truth_line(line, sizeof(line), fl);
	if (rc && !w->err)
		w->err = rc;
	if (!rc && w->app) {
		if (fprintf(w->truth, "%s,%s,%s\n", line, secho_gen_app_name(fl->app),
		            fl->app_json ? fl->app_json : "{\"uni\":{}}") < 0 &&
		    !w->err)
			w->err = -EIO;
	} else if (!rc && fprintf(w->truth, "%s\n", line) < 0 && !w->err)
		w->err = -EIO;
}

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* A temporary file beside path, created new (O_EXCL, O_NOFOLLOW: never an existing file
 * or a link planted under the name). NULL with errno on failure. */
static FILE *open_tmp(const char *path, char *tmp, size_t n)
{
	if (snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid()) >= (int)n) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
	}
	return f;
}

static bool stopped(const struct secho_gen_cfg *cfg)
{
	return cfg->stop && *cfg->stop;
}

int secho_gen_write(const struct secho_gen_cfg *cfg_in, const char *pcap_path,
                    const char *truth_path, struct secho_gen_totals *totals, char *err,
                    size_t errlen)
{
	char ptmp[4096], ttmp[4096];
	struct secho_gen_cfg cfg = *cfg_in;
	struct wctx w = {0};
	struct secho_gen *g = NULL;
	FILE *pf = NULL;
	char *pbuf = NULL;
	int rc;

	cfg.on_flow = on_flow;
	cfg.ctx = &w;
	/* rename() would replace a device node or a link with the capture: refuse them */
	if ((rc = secho_file_check_target(pcap_path, err, errlen)) != 0 ||
	    (rc = secho_file_check_target(truth_path, err, errlen)) != 0)
		return rc;
	rc = secho_gen_new(&g, &cfg, err, errlen);
	if (rc)
		return rc;
	pf = open_tmp(pcap_path, ptmp, sizeof(ptmp));
	if (!pf) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", ptmp, strerror(-rc));
		goto out_gen;
	}
	w.truth = open_tmp(truth_path, ttmp, sizeof(ttmp));
	if (!w.truth) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", ttmp, strerror(-rc));
		goto out_pcap;
	}
	pbuf = malloc(1 << 20);
	if (pbuf)
		setvbuf(pf, pbuf, _IOFBF, 1 << 20);
	w.tun = secho_gen_has_tunnels(g);
	w.app = secho_gen_has_apps(g);
	fprintf(w.truth, "%s%s\n", w.tun ? secho_gen_truth_header_tun : secho_gen_truth_header,
	        w.app ? ",app,features" : "");

	uint8_t fh[24] = {0};
	le32(fh, 0xa1b2c3d4u); /* microsecond timestamps, written little-endian */
	fh[4] = 2;             /* version 2.4 */
	fh[6] = 4;
	le32(fh + 16, 65535); /* snaplen */
	le32(fh + 20, 1);     /* LINKTYPE_ETHERNET */
	bool ok = fwrite(fh, sizeof(fh), 1, pf) == 1;
	struct secho_gen_frame fr;
	unsigned frames = 0;
	while (ok && (rc = secho_gen_next(g, &fr)) == 1) {
		if ((++frames & 4095) == 0 && stopped(&cfg)) {
			rc = -EINTR;
			break;
		}
		uint8_t rh[16];
		le32(rh, (uint32_t)(fr.ts_ns / 1000000000u));
		le32(rh + 4, (uint32_t)(fr.ts_ns % 1000000000u / 1000u));
		le32(rh + 8, fr.caplen);
		le32(rh + 12, fr.len);
		ok = fwrite(rh, sizeof(rh), 1, pf) == 1 && fwrite(fr.data, fr.caplen, 1, pf) == 1;
	}
	if (rc == -EINTR) {
		snprintf(err, errlen, "stopped by a signal: nothing written");
		goto out_files;
	}
	if (rc < 0) {
		snprintf(err, errlen, "generator: %s", strerror(-rc));
		goto out_files;
	}
	if (!ok) {
		rc = -EIO;
		snprintf(err, errlen, "%s: write failed", ptmp);
		goto out_files;
	}
	if (w.err) {
		rc = w.err;
		snprintf(err, errlen, "%s: write failed", ttmp);
		goto out_files;
	}

	struct secho_gen_totals t;
	secho_gen_get_totals(g, &t);
	const char *base = strrchr(cfg.profile, '/');
	fprintf(w.truth, "# profile=%s\n# seed=%" PRIu64 "\n", base ? base + 1 : cfg.profile,
	        cfg.seed);
#define X(n, h) fprintf(w.truth, "# %s=%" PRIu64 "\n", #n, t.n);
	SECHO_GEN_TOTALS(X)
#undef X
	for (unsigned i = 0; i < SECHO_GEN_MAL_COUNT; i++)
		fprintf(w.truth, "# malformed_%s=%" PRIu64 "\n", secho_gen_malformed_name(i),
		        t.malformed_by[i]);
	fprintf(w.truth, "# ignored=%" PRIu64 "\n", t.malformed + t.non_ip + t.orphan_fragments);
	if (totals)
		*totals = t;
	rc = 0;
out_files:
	if (fclose(w.truth) && !rc) {
		rc = -EIO;
		snprintf(err, errlen, "%s: write failed", ttmp);
	}
	if (fclose(pf) && !rc) {
		rc = -EIO;
		snprintf(err, errlen, "%s: write failed", ptmp);
	}
	pf = NULL;
	if (!rc && stopped(&cfg)) {
		rc = -EINTR;
		snprintf(err, errlen, "stopped by a signal: nothing written");
	}
	/* again, just before: something may have been put there meanwhile */
	if (!rc)
		rc = secho_file_check_target(pcap_path, err, errlen);
	if (!rc)
		rc = secho_file_check_target(truth_path, err, errlen);
	if (!rc && rename(ptmp, pcap_path)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", pcap_path, strerror(-rc));
	}
	if (!rc && rename(ttmp, truth_path)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", truth_path, strerror(-rc));
		unlink(pcap_path);
	}
	if (rc) {
		unlink(ptmp);
		unlink(ttmp);
	}
out_pcap:
	if (pf) {
		fclose(pf);
		unlink(ptmp);
	}
out_gen:
	free(pbuf);
	secho_gen_free(g);
	return rc;
}
