/*
 * src/wire/dissect.c - the L2-L4 dissector, exported (include/secho/dissect.h). Its body is
 * in src/wire/wire_inner.h, shared with the endpoint's request parse.
 */
#include "sys/names.h"
#include "wire/wire_inner.h"

static const char *const reason_ids[] = {SECHO_DISSECT_REASONS(SECHO_X_ID)};
static const char *const reason_texts[] = {SECHO_DISSECT_REASONS(SECHO_X_TEXT)};

static const char *const tun_names[] = {
        [SECHO_TUN_NONE] = "none",   [SECHO_TUN_GRE] = "gre",       [SECHO_TUN_ERSPAN] = "erspan",
        [SECHO_TUN_VXLAN] = "vxlan", [SECHO_TUN_GENEVE] = "geneve", [SECHO_TUN_GTPU] = "gtpu",
        [SECHO_TUN_IPIP] = "ipip",   [SECHO_TUN_EOMPLS] = "eompls",
};

const char *secho_tun_name(unsigned tun_type)
{
	return SECHO_NAME_AT(tun_names, tun_type, "unknown");
}

const char *secho_dissect_reason_name(enum secho_dissect_reason r)
{
	return SECHO_NAME_AT(reason_ids, r, "unknown");
}

const char *secho_dissect_reason_text(enum secho_dissect_reason r)
{
	return SECHO_NAME_AT(reason_texts, r, "unknown reason");
}

enum secho_dissect_reason secho_dissect(const uint8_t *frame, size_t len, struct secho_dissect *d)
{
	return dis_frame(frame, len, len, d, 1);
}

enum secho_dissect_reason secho_dissect_snap(const uint8_t *frame, size_t caplen, size_t wirelen,
                                             struct secho_dissect *d)
{
	return dis_frame(frame, caplen, wirelen < caplen ? caplen : wirelen, d, 1);
}
