#!/usr/bin/env python3
"""tests/sh/ja4_tshark.py - the JA4 fingerprint (FoxIO's technical_details/JA4.md) of each
ClientHello as tshark decodes it, computed here from tshark's fields: independent of
secho's code, for the feature tests (test_feat_tls.sh, test_feat_quic.sh,
test_flow_gen_app.sh).

usage: tshark -r CAP -Y FILTER -T fields -E occurrence=a -E aggregator=, \\
           -e KEY1 ... -e KEYn \\
           -e tls.handshake.version -e tls.handshake.ciphersuite \\
           -e tls.handshake.extension.type -e tls.handshake.sig_hash_alg \\
           -e tls.handshake.extensions.supported_version \\
           -e tls.handshake.extensions_alpn_str | ja4_tshark.py t|q n

Each input line: n key fields (copied to the output), then the six above (tab-separated;
numbers decimal or 0x-hex). Each output line: the keys, a tab, the JA4 with the transport
given (t TCP, q QUIC).
"""
import hashlib
import sys

VERSIONS = {0x0304: "13", 0x0303: "12", 0x0302: "11", 0x0301: "10", 0x0300: "s3",
            0x0200: "s2", 0xfeff: "d1", 0xfefd: "d2", 0xfefc: "d3"}


def grease(v):
    """RFC 8701: 0x0a0a, 0x1a1a, ... 0xfafa."""
    return (v & 0x0f0f) == 0x0a0a and (v >> 8) == (v & 0xff)


def nums(field):
    return [int(x, 0) for x in field.split(",") if x.strip()]


def h12(s):
    return hashlib.sha256(s.encode()).hexdigest()[:12] if s else "000000000000"


def ja4(proto, version, ciphers, exts, sigs, supported, alpns):
    ciph = [c for c in nums(ciphers) if not grease(c)]
    ext = [e for e in nums(exts) if not grease(e)]
    sv = [v for v in nums(supported) if not grease(v)]
    ver = max(sv) if sv else (nums(version) or [0])[0]
    first = alpns.split(",")[0] if alpns else ""
    a = first[0] + first[-1] if first else "00"
    head = "%s%s%s%02d%02d%s" % (proto, VERSIONS.get(ver, "00"), "d" if 0 in ext else "i",
                                 min(len(ciph), 99), min(len(ext), 99), a)
    b = h12(",".join(sorted("%04x" % c for c in ciph)))
    rest = ",".join(sorted("%04x" % e for e in ext if e not in (0x0000, 0x0010)))
    sa = ",".join("%04x" % s for s in nums(sigs))
    c = h12(rest + ("_" + sa if sa else ""))  # no signature algorithms: no underscore
    return "%s_%s_%s" % (head, b, c)


def main():
    proto, n = sys.argv[1], int(sys.argv[2])
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        if len(f) < n + 6:
            sys.exit("a line of %d fields, want %d: %r" % (len(f), n + 6, line))
        print("\t".join(f[:n] + [ja4(proto, *f[n:n + 6])]))


if __name__ == "__main__":
    main()
