/*
 * src/endpoint/seqlease.c - worker leases on top of the durable allocator (seqstate.c).
 * A lease is SECHO_SEQLEASE_BLOCK numbers: one atomic compare-and-swap on the shared
 * counter per 256 packets of a worker. State-file writes happen in the allocator's reservation
 * thread, a window (2^20 by default) at a time, while half of the current window is still unused.
 */
#include "endpoint/seqlease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "secho/seqstate.h"

struct secho_seqlease {
	struct secho_seqstate st;
};

struct secho_seqlease *secho_seqlease_open(const char *path, uint16_t key_id, uint32_t instance,
                                           uint64_t window, char *err, size_t errlen)
{
	struct secho_seqlease *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* The default place is ours to create (root-only, as the state guards the IVs); a
	 * path given with --state must already have its directory. */
	if (!path && mkdir(SECHO_SEQ_DEFAULT_DIR, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s (or give --state FILE)",
		         SECHO_SEQ_DEFAULT_DIR, strerror(errno));
		free(s);
		return NULL;
	}
	if (secho_seq_open_instance(&s->st, path, key_id, instance, window, err, errlen) != 0) {
		free(s);
		return NULL;
	}
	int rc = secho_seq_reserve_ahead(&s->st);
	if (rc) {
		snprintf(err, errlen, "%s: cannot start the reservation thread: %s", s->st.path,
		         strerror(-rc));
		secho_seq_close(&s->st);
		free(s);
		return NULL;
	}
	if (s->st.went_back_from)
		snprintf(err, errlen,
		         "%s went backwards: it says %llu, but this directory reserved up to %llu "
		         "(restored from a backup? copied?); numbering continues above %llu",
		         s->st.path, (unsigned long long)s->st.went_back_to,
		         (unsigned long long)s->st.went_back_from,
		         (unsigned long long)s->st.went_back_from);
	else if (errlen)
		err[0] = '\0';
	return s;
}

int secho_seqlease_refill(struct secho_seqlease *s, struct secho_lease *l)
{
	uint64_t first;
	int rc = secho_seq_take(&s->st, SECHO_SEQLEASE_BLOCK, &first);
	if (rc)
		return rc;
	l->next = first;
	l->end = first + SECHO_SEQLEASE_BLOCK;
	return 0;
}

int secho_seqlease_failed(struct secho_seqlease *s, char *err, size_t errlen)
{
	int f = secho_seq_failed(&s->st);
	if (f)
		snprintf(err, errlen,
		         "%s: cannot reserve sequence numbers beyond %llu: %s (every number "
		         "up to there is used or skipped; none can be made durable)",
		         s->st.path, (unsigned long long)secho_seq_high_water(&s->st),
		         strerror(-f));
	return f;
}

uint64_t secho_seqlease_high_water(struct secho_seqlease *s)
{
	return secho_seq_high_water(&s->st);
}

uint64_t secho_seqlease_next(struct secho_seqlease *s)
{
	return secho_seq_peek_next(&s->st);
}

int secho_seqlease_close(struct secho_seqlease *s, char *err, size_t errlen)
{
	/* Every reservation was made durable when taken; nothing is pending. A reservation
	 * that failed made take() fail and the packets were dropped. */
	int failed = atomic_load(&s->st.failed);
	secho_seq_close(&s->st);
	free(s);
	if (failed) {
		snprintf(err, errlen, "a reservation failed during the run: %s", strerror(-failed));
		return -1;
	}
	return 0;
}
