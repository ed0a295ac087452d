/*
 * tests/tools/ipfix_fixbuf.c - an IPFIX file read by libfixbuf (CERT NetSA, Debian's
 * libfixbuf-dev): a decoder independent of secho's, for tests/sh/test_flow_features.sh.
 *
 * Every data record is read under a copy of its own template (libfixbuf decodes each
 * variable-length value and RFC 6313 basicList itself), and written as one line:
 *
 *   tid=T PEN/ID=HEX ... PEN/ID=[v,v,...] ...
 *
 * with the variable-length elements of enterprises 8057 and 39499 as hex, and each
 * basicList as its member's PEN/ID and its values as unsigned numbers (network order). The
 * options template's records (the statistics) are left out. ipfixprobe's elements are not
 * in libfixbuf's model: they are added here, as its ipfix-elements.hpp lists the
 * variable-length ones and the lists' members (numbers only), with the Flowmon TLS elements
 * and DNS elements secho exports beside them (libfds' flowmon.xml: 39499/336, 340, 349, 350,
 * 352, 353, 355, 111).
 *
 * usage: ipfix_fixbuf FILE     exit 0 when the whole file was read, 1 on any error.
 */
#include <fixbuf/public.h>
#include <stdio.h>
#include <string.h>

#define OPTIONS_TID 260

/* clang-format off */
static fbInfoElement_t probe_ies[] = {
	FB_IE_INIT_FULL("dnsRcode", 8057, 1, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("dnsQtype", 8057, 3, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsClass", 8057, 4, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsRrTtl", 8057, 5, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("dnsRlength", 8057, 6, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsPsize", 8057, 8, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsDo", 8057, 9, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("dnsId", 8057, 10, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsAnswers", 8057, 14, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("quicServerPort", 8057, 887, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("quicChParsed", 8057, 886, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("quicZeroRtt", 8057, 889, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("quicVersion", 8057, 892, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("quicClientVersion", 8057, 893, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("quicTokenLength", 8057, 894, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("tcpMss", 8057, 900, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("tcpMssRev", 8057, 901, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("tcpSynSize", 8057, 902, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("wgConfLevel", 8057, 1100, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("wgSrcPeer", 8057, 1101, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("wgDstPeer", 8057, 1102, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("httpStatus", 39499, 12, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("tlsVersion", 39499, 333, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("tlsSni", 8057, 808, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsJa4", 8057, 809, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsExtType", 8057, 802, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("tlsExtLen", 8057, 803, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsName", 8057, 2, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("dnsRdata", 8057, 7, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpMethod", 8057, 200, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpServer", 8057, 201, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("quicExtLen", 8057, 884, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("quicExtType", 8057, 885, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("quicSni", 8057, 890, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("quicUserAgent", 8057, 891, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("quicOccid", 8057, 895, FB_IE_VARLEN, 0, 0, 0, FB_OCTET_ARRAY, NULL),
	FB_IE_INIT_FULL("quicOscid", 8057, 896, FB_IE_VARLEN, 0, 0, 0, FB_OCTET_ARRAY, NULL),
	FB_IE_INIT_FULL("quicScid", 8057, 897, FB_IE_VARLEN, 0, 0, 0, FB_OCTET_ARRAY, NULL),
	FB_IE_INIT_FULL("quicRetryScid", 8057, 898, FB_IE_VARLEN, 0, 0, 0, FB_OCTET_ARRAY, NULL),
	FB_IE_INIT_FULL("ppiPktLengths", 8057, 1013, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("ppiPktTimes", 8057, 1014, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("ppiPktFlags", 8057, 1015, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("ppiPktDirections", 8057, 1016, 1, FB_IE_F_ENDIAN, 0, 0, FB_UINT_8, NULL),
	FB_IE_INIT_FULL("sbiBrstPackets", 8057, 1050, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("sbiBrstBytes", 8057, 1051, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("sbiBrstTimeStart", 8057, 1052, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("sbiBrstTimeStop", 8057, 1053, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("dbiBrstPackets", 8057, 1054, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("dbiBrstBytes", 8057, 1055, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("dbiBrstTimeStart", 8057, 1056, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("dbiBrstTimeStop", 8057, 1057, 8, FB_IE_F_ENDIAN, 0, 0, FB_UINT_64, NULL),
	FB_IE_INIT_FULL("sPhistsSizes", 8057, 1060, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("sPhistsIpt", 8057, 1061, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("dPhistsSizes", 8057, 1062, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("dPhistsIpt", 8057, 1063, 4, FB_IE_F_ENDIAN, 0, 0, FB_UINT_32, NULL),
	FB_IE_INIT_FULL("httpDomain", 39499, 1, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpUri", 39499, 2, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpReferer", 39499, 3, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpContentType", 39499, 10, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("httpUserAgent", 39499, 20, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsAlpn", 39499, 337, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsJa3", 39499, 357, FB_IE_VARLEN, 0, 0, 0, FB_OCTET_ARRAY, NULL),
	FB_IE_INIT_FULL("tlsClientVersion", 39499, 340, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("tlsCipherSuite", 39499, 336, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("tlsIssuerCn", 39499, 349, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsSubjectCn", 39499, 350, FB_IE_VARLEN, 0, 0, 0, FB_STRING, NULL),
	FB_IE_INIT_FULL("tlsValidityNotBefore", 39499, 352, 8, FB_IE_F_ENDIAN, 0, 0, FB_INT_64, NULL),
	FB_IE_INIT_FULL("tlsValidityNotAfter", 39499, 353, 8, FB_IE_F_ENDIAN, 0, 0, FB_INT_64, NULL),
	FB_IE_INIT_FULL("tlsPublicKeyAlg", 39499, 355, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_INIT_FULL("dnsFlagsCodes", 39499, 111, 2, FB_IE_F_ENDIAN, 0, 0, FB_UINT_16, NULL),
	FB_IE_NULL,
};
/* clang-format on */

/* A number of n bytes (1, 2, 4, 8) as libfixbuf leaves it in a record: host order. */
static uint64_t host(const uint8_t *p, unsigned n)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;
	switch (n) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	case 8:
		memcpy(&u64, p, 8);
		return u64;
	default:
		return 0;
	}
}

static int fail(const char *what, GError *err)
{
	fprintf(stderr, "ipfix_fixbuf: %s: %s\n", what, err ? err->message : "?");
	if (err)
		g_clear_error(&err);
	return 1;
}

/* One record rec of template t (as read: internal = the external copy) as a line. */
static void print_record(uint16_t tid, fbTemplate_t *t, const uint8_t *rec)
{
	size_t off = 0;
	printf("tid=%u", tid);
	for (uint32_t i = 0; i < fbTemplateCountElements(t); i++) {
		const fbInfoElement_t *ie = fbTemplateGetIndexedIE(t, i);
		if (ie->type == FB_BASIC_LIST) {
			fbBasicList_t bl;
			memcpy(&bl, rec + off, sizeof(bl));
			const fbInfoElement_t *m = fbBasicListGetInfoElement(&bl);
			printf(" %u/%u=[", m ? m->ent : 0, m ? m->num : 0);
			for (uint16_t k = 0; m && k < bl.numElements; k++) {
				const uint8_t *e = fbBasicListGetIndexedDataPtr(&bl, k);
				printf("%s%llu", k ? "," : "", (unsigned long long)host(e, m->len));
			}
			printf("]");
			off += sizeof(fbBasicList_t);
		} else if (ie->len == FB_IE_VARLEN) {
			fbVarfield_t vf;
			memcpy(&vf, rec + off, sizeof(vf));
			if (ie->ent == 8057 || ie->ent == 39499) {
				printf(" %u/%u=", ie->ent, ie->num);
				for (size_t k = 0; k < vf.len; k++)
					printf("%02x", vf.buf[k]);
			}
			off += sizeof(fbVarfield_t);
		} else {
			if ((ie->ent == 8057 || ie->ent == 39499) && ie->len <= 8)
				printf(" %u/%u=%llu", ie->ent, ie->num,
				       (unsigned long long)host(rec + off, ie->len));
			off += ie->len;
		}
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	GError *err = NULL;
	static uint8_t rec[65536];
	unsigned records = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: ipfix_fixbuf FILE\n");
		return 2;
	}
	fbInfoModel_t *model = fbInfoModelAlloc();
	fbInfoModelAddElementArray(model, probe_ies);
	fbSession_t *session = fbSessionAlloc(model);
	fbCollector_t *coll = fbCollectorAllocFile(NULL, argv[1], &err);
	if (!coll)
		return fail("open", err);
	fBuf_t *fb = fBufAllocForCollection(session, coll);
	int rc = 0;
	for (;;) {
		uint16_t tid = 0;
		fbTemplate_t *ext = fBufNextCollectionTemplate(fb, &tid, &err);
		if (!ext) {
			if (g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOF)) {
				g_clear_error(&err);
				break;
			}
			rc = fail("next template", err);
			break;
		}
		/* read it under a copy of its own template: every field decoded */
		if (!fbSessionGetTemplate(session, TRUE, tid, NULL)) {
			fbTemplate_t *in = fbTemplateAlloc(model);
			for (uint32_t i = 0; i < fbTemplateCountElements(ext); i++) {
				/* an example: the model's element, the template's length */
				const fbInfoElement_t *t = fbTemplateGetIndexedIE(ext, i);
				const fbInfoElement_t *c =
				        fbInfoModelGetElementByID(model, t->num, t->ent);
				if (!c) {
					fprintf(stderr,
					        "ipfix_fixbuf: template %u: element %u/%u "
					        "unknown\n",
					        tid, t->ent, t->num);
					return 1;
				}
				fbInfoElement_t ex = *c;
				ex.len = t->len;
				if (!fbTemplateAppend(in, &ex, &err)) {
					fbTemplateFreeUnused(in);
					return fail("template copy", err);
				}
			}
			if (!fbSessionAddTemplate(session, TRUE, tid, in, &err))
				return fail("add template", err);
		}
		fbTemplate_t *in = fbSessionGetTemplate(session, TRUE, tid, NULL);
		if (!fBufSetInternalTemplate(fb, tid, &err))
			return fail("internal template", err);
		size_t len = sizeof(rec);
		memset(rec, 0, sizeof(rec)); /* lists: libfixbuf reuses a non-NULL one */
		if (!fBufNext(fb, rec, &len, &err)) {
			rc = fail("record", err);
			break;
		}
		if (tid != OPTIONS_TID)
			print_record(tid, in, rec);
		fBufListFree(in, rec);
		records++;
	}
	fprintf(stderr, "ipfix_fixbuf: %u records\n", records);
	fBufFree(fb);
	fbInfoModelFree(model);
	return rc;
}
