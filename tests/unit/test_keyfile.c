/*
 * tests/unit/test_keyfile.c - key files: keygen round trip, permissions, malformed files,
 * no secret in any message, protected memory.
 *
 * `secho keygen` is tested by calling cmd_keygen directly: src/cli/keygen.c is compiled
 * into this program (the secho binary's command table lives elsewhere).
 */
#include "harness.h"

/* NOLINTNEXTLINE(bugprone-suspicious-include): cmd_keygen is compiled in */
#include "cli/keygen.c"
/* NOLINTNEXTLINE(bugprone-suspicious-include): and the shared parsers it uses */
#include "cli/util.c"

#include <secho/keyfile.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* Run cmd_keygen with the given argv, capturing stdout+stderr into cap. */
static int run_keygen(char *cap, size_t capn, int argc, char **argv)
{
	fflush(stdout);
	fflush(stderr);
	char cp[128];
	path_in(cp, sizeof(cp), "capture");
	int fd = open(cp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int o1 = dup(1), o2 = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	int rc = cmd_keygen(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(o1, 1);
	dup2(o2, 2);
	close(o1);
	close(o2);
	ssize_t n = pread(fd, cap, capn - 1, 0);
	cap[n > 0 ? n : 0] = 0;
	close(fd);
	return rc;
}

static void to_hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static int write_text(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, text, strlen(text));
	fchmod(fd, mode);
	close(fd);
	return w == (ssize_t)strlen(text) ? 0 : -1;
}

static void test_keygen(void)
{
	char kp[128], cap[4096], err[512], hex[65];
	path_in(kp, sizeof(kp), "k1.key");
	t_begin("keygen: round trip, mode 0600 even with umask 0, never overwrites without "
	        "--force");
	mode_t old = umask(0);
	char *argv1[] = {"keygen", "--key-id", "4242", "--out", kp, NULL};
	int rc = run_keygen(cap, sizeof(cap), 5, argv1);
	umask(old);
	T_CHECK(rc == 0, "keygen rc %d: %s", rc, cap);
	struct stat st;
	T_CHECK(stat(kp, &st) == 0 && (st.st_mode & 07777) == 0600, "mode %o",
	        (unsigned)(st.st_mode & 07777));
	struct secho_keyfile k, k2;
	rc = secho_keyfile_load(kp, &k, err, sizeof(err));
	T_CHECK(rc == 0, "load: %s", err);
	T_CHECK(k.key_id == 4242, "key id %u", k.key_id);
	to_hex(hex, k.key, 32);
	T_CHECK(strstr(cap, hex) == NULL, "keygen output has no key bytes");
	T_CHECK(strstr(cap, "4242") != NULL, "output names the key id: %s", cap);

	rc = run_keygen(cap, sizeof(cap), 5, argv1);
	T_CHECK(rc == 1 && strstr(cap, "already exists"), "refuses overwrite: rc %d %s", rc, cap);
	T_CHECK(secho_keyfile_load(kp, &k2, err, sizeof(err)) == 0 &&
	                memcmp(k.key, k2.key, 32) == 0,
	        "file unchanged");
	char *argv2[] = {"keygen", "--force", "-k", "7", "-o", kp, NULL};
	rc = run_keygen(cap, sizeof(cap), 6, argv2);
	T_CHECK(rc == 0, "force rc %d: %s", rc, cap);
	T_CHECK(secho_keyfile_load(kp, &k2, err, sizeof(err)) == 0 && k2.key_id == 7 &&
	                memcmp(k.key, k2.key, 32) != 0,
	        "replaced with a new key");
	T_CHECK(stat(kp, &st) == 0 && (st.st_mode & 07777) == 0600, "mode after force");
	to_hex(hex, k2.key, 32);
	T_CHECK(strstr(cap, hex) == NULL, "no key bytes after force");
	/* the file's text is exactly the documented format */
	char text[256];
	int fd = open(kp, O_RDONLY);
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	char want[256], salthex[9];
	to_hex(salthex, k2.salt, 4);
	snprintf(want, sizeof(want), "secho-key 1\nkey-id 7\nkey %s\nsalt %s\n", hex, salthex);
	T_CHECK(strcmp(text, want) == 0, "documented format");
	secho_keyfile_wipe(&k);
	secho_keyfile_wipe(&k2);
	t_end();

	t_begin("keygen: usage errors and --help");
	char *h[] = {"keygen", "--help", NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 2, h) == 0 && strstr(cap, "usage:"), "help");
	char kp2[128];
	path_in(kp2, sizeof(kp2), "k2.key");
	static const char *bad_ids[] = {
	        "65536", "-1", "abc", "",    "12x", "01", "99999999999999999999",
	        " 7",    "+7", "7 ",  "\t7", "0x7"};
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		char *a[] = {"keygen", "--key-id", (char *)bad_ids[i], "--out", kp2, NULL};
		T_CHECK(run_keygen(cap, sizeof(cap), 5, a) == 2, "key id '%s' refused", bad_ids[i]);
		T_CHECK(access(kp2, F_OK) != 0, "no file written for '%s'", bad_ids[i]);
	}
	char *a1[] = {"keygen", "--key-id", "1", NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 3, a1) == 2, "missing --out");
	char *a2[] = {"keygen", "--out", kp2, NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 3, a2) == 2, "missing --key-id");
	char *a3[] = {"keygen", "--bogus", NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 2, a3) == 2 && strstr(cap, "--bogus"), "unknown");
	char *a4[] = {"keygen", "--key-id", NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 2, a4) == 2, "missing argument");
	char *a5[] = {"keygen", "-k", "0", "-o", "/nonexistent-dir/x.key", NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 5, a5) == 1 && strstr(cap, "/nonexistent-dir"),
	        "unwritable path reported: %s", cap);
	char *a6[] = {"keygen", "-k", "65535", "-o", kp2, NULL};
	T_CHECK(run_keygen(cap, sizeof(cap), 5, a6) == 0, "key id 65535 ok");
	t_end();
}

static void test_perms(void)
{
	char kp[128], err[512];
	struct secho_keyfile k;
	const char *good = "secho-key 1\nkey-id 3\n"
	                   "key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	                   "salt a1b2c3d4\n";
	path_in(kp, sizeof(kp), "perm.key");
	t_begin("load: refuses files group or others can access");
	static const mode_t bad[] = {0640, 0644, 0604, 0660, 0666, 0601, 0610, 0700 | 0004};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(kp, good, bad[i]);
		int rc = secho_keyfile_load(kp, &k, err, sizeof(err));
		T_CHECK(rc == -EPERM && strstr(err, "too open"), "mode %o: rc %d %s",
		        (unsigned)bad[i], rc, err);
		T_CHECK(strstr(err, "000102") == NULL, "no key in message");
	}
	write_text(kp, good, 0600);
	T_CHECK(secho_keyfile_load(kp, &k, err, sizeof(err)) == 0 && k.key_id == 3 &&
	                k.key[31] == 0x1f && k.salt[0] == 0xa1 && k.salt[3] == 0xd4,
	        "0600 loads");
	write_text(kp, good, 0400);
	T_CHECK(secho_keyfile_load(kp, &k, err, sizeof(err)) == 0, "0400 loads");
	/* a symlink is not followed; a directory is not a key file */
	char lp[128];
	path_in(lp, sizeof(lp), "link.key");
	unlink(lp);
	T_CHECK(symlink(kp, lp) == 0, "symlink");
	T_CHECK(secho_keyfile_load(lp, &k, err, sizeof(err)) != 0, "symlink refused");
	T_CHECK(secho_keyfile_load(dir, &k, err, sizeof(err)) != 0, "directory refused: %s", err);
	T_CHECK(secho_keyfile_load("/nonexistent/k", &k, err, sizeof(err)) == -ENOENT, "enoent");
	/* A FIFO is refused at once: opening it must not wait for a writer (the load runs in
	 * a child that an alarm kills if it hangs). */
	char fp[128];
	path_in(fp, sizeof(fp), "fifo.key");
	unlink(fp);
	T_CHECK(mkfifo(fp, 0600) == 0, "mkfifo");
	pid_t pid = fork();
	if (pid == 0) {
		alarm(5);
		int rc = secho_keyfile_load(fp, &k, err, sizeof(err));
		printf("  fifo: %s\n", err);
		fflush(stdout);
		_exit(rc == -EINVAL && strstr(err, "not a regular file") ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	        "FIFO refused without waiting (status %#x%s)", (unsigned)st,
	        WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? ": hung" : "");
	unlink(fp);
	/* oversize */
	char *big = malloc(SECHO_KEYFILE_MAX + 100);
	memset(big, '#', SECHO_KEYFILE_MAX + 99);
	big[SECHO_KEYFILE_MAX + 99] = 0;
	write_text(kp, big, 0600);
	free(big);
	T_CHECK(secho_keyfile_load(kp, &k, err, sizeof(err)) == -EFBIG, "oversize: %s", err);
	t_end();
}

static void test_malformed(void)
{
	static const char *K =
	        "key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
	struct {
		const char *text;
		const char *want; /* substring of the error */
	} cases[] = {
	        {"", "empty file"},
	        {"# only a comment\n\n", "empty file"},
	        {"secho-key 2\nkey-id 1\n", "line 1: expected"},
	        {"secho-key 1 \n", "line 1: expected"},
	        {"SECHO-KEY 1\n", "line 1: expected"},
	        {"secho-key 1\nkey-id 65536\n", "line 2: key-id"},
	        {"secho-key 1\nkey-id -1\n", "line 2: key-id"},
	        {"secho-key 1\nkey-id 1x\n", "line 2: key-id"},
	        {"secho-key 1\nkey-id 007\n", "line 2: key-id"},
	        {"secho-key 1\nkey-id \n", "line 2: unknown field"},
	        {"secho-key 1\nkey-id 1\nkey-id 2\n", "line 3: key-id given twice"},
	        {"secho-key 1\n\n# c\nkey 0001\n", "line 4: key must be exactly 64 hex"},
	        {"secho-key 1\nkey "
	         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1g\n",
	         "line 2: key must be exactly 64 hex"},
	        {"secho-key 1\nkey "
	         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0\n",
	         "line 2: key must be exactly 64 hex"},
	        {"secho-key 1\nkey  "
	         "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1\n",
	         "line 2: key must be exactly 64 hex"},
	        {"secho-key 1\nsalt a1b2c3\n", "line 2: salt must be exactly 8 hex"},
	        {"secho-key 1\nsalt a1b2c3dz\n", "line 2: salt must be exactly 8 hex"},
	        {"secho-key 1\nsalt a1b2c3d4\nsalt a1b2c3d4\n", "line 3: salt given twice"},
	        {"secho-key 1\nnonce 1234\n", "line 2: unknown field"},
	        {"secho-key 1\nkey-id 1\nsalt a1b2c3d4\n", "missing field: key"},
	        {"secho-key 1\nsalt a1b2c3d4\n", "missing field: key-id"},
	        {NULL, NULL},
	};
	char kp[128], err[512];
	struct secho_keyfile k;
	path_in(kp, sizeof(kp), "bad.key");
	t_begin("load: malformed files, each with its reason and line, no key bytes in messages");
	for (int i = 0; cases[i].text; i++) {
		write_text(kp, cases[i].text, 0600);
		int rc = secho_keyfile_load(kp, &k, err, sizeof(err));
		T_CHECK(rc == -EINVAL && strstr(err, cases[i].want),
		        "case %d: rc %d '%s' want '%s'", i, rc, err, cases[i].want);
		T_CHECK(strstr(err, "0102030405") == NULL && strstr(err, "a1b2") == NULL,
		        "case %d: message shows secret material: %s", i, err);
		uint8_t zero[sizeof(k)] = {0};
		T_CHECK(memcmp(&k, zero, sizeof(k)) == 0, "case %d: output wiped", i);
	}
	/* missing salt */
	char text[512];
	snprintf(text, sizeof(text), "secho-key 1\nkey-id 1\n%s", K);
	write_text(kp, text, 0600);
	T_CHECK(secho_keyfile_load(kp, &k, err, sizeof(err)) == -EINVAL &&
	                strstr(err, "missing field: salt"),
	        "missing salt: %s", err);
	/* NUL byte */
	T_CHECK(secho_keyfile_parse("secho-key 1\nkey-id 1\0\n", 22, &k, err, sizeof(err)) ==
	                        -EINVAL &&
	                strstr(err, "line 2: NUL"),
	        "nul: %s", err);
	/* comments, blank lines, CRLF and upper-case hex are accepted */
	snprintf(text, sizeof(text),
	         "# a comment\r\nsecho-key 1\r\n\r\nkey-id 0\r\nsalt A1B2C3D4\r\n%s", K);
	T_CHECK(secho_keyfile_parse(text, strlen(text), &k, err, sizeof(err)) == 0 &&
	                k.key_id == 0 && k.salt[0] == 0xa1 && k.key[0x1f] == 0x1f,
	        "accepting variants: %s", err);
	/* all 256 byte values through the hex decoder: exactly the 22 hex digits decode */
	int accepted = 0;
	for (int c = 0; c < 256; c++) {
		char t[160];
		snprintf(t, sizeof(t), "secho-key 1\nkey-id 1\n%ssalt a1b2c3d", K);
		size_t l = strlen(t);
		t[l] = (char)c;
		t[l + 1] = '\n';
		if (c == '\n' || c == 0)
			continue;
		if (secho_keyfile_parse(t, l + 2, &k, err, sizeof(err)) != 0)
			continue;
		accepted++;
		int want = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
		T_CHECK((k.salt[3] & 0x0f) == want, "digit %c", c);
	}
	T_CHECK(accepted == 22, "%d hex digits accepted", accepted);
	t_end();
}

static void test_memory(void)
{
	t_begin("secret memory: alloc/lock/dontdump/free; process made non-dumpable");
	bool locked = false;
	uint8_t *p = secho_secret_alloc(100, &locked);
	T_CHECK(p != NULL, "alloc");
	if (p) {
		int zero = 1;
		for (int i = 0; i < 100; i++)
			zero &= p[i] == 0;
		T_CHECK(zero, "zeroed");
		memset(p, 0x5a, 100);
		secho_secret_free(p, 100);
	}
	printf("  (key memory %s by mlock here)\n", locked ? "locked" : "not locked");
	T_CHECK(secho_secret_alloc(0, &locked) == NULL, "zero size refused");
	pid_t pid = fork();
	if (pid == 0) {
		int rc = secho_secret_process_protect();
		_exit(rc == 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "PR_SET_DUMPABLE 0 took effect");
	struct secho_keyfile a, b;
	T_CHECK(secho_keyfile_generate(&a, 1) == 0 && secho_keyfile_generate(&b, 1) == 0, "gen");
	T_CHECK(memcmp(a.key, b.key, 32) != 0, "two keys differ");
	secho_keyfile_wipe(&a);
	uint8_t zero[sizeof(a)] = {0};
	T_CHECK(memcmp(&a, zero, sizeof(a)) == 0, "wipe zeroes");
	secho_keyfile_wipe(&b);
	t_end();
}

static void cleanup(void)
{
	static const char *names[] = {"k1.key",  "k2.key",  "perm.key", "link.key",
	                              "bad.key", "capture", "fifo.key"};
	char p[128];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_in(p, sizeof(p), names[i]);
		unlink(p);
	}
	rmdir(dir);
}

int main(void)
{
	t_seed_init("test_keyfile");
	snprintf(dir, sizeof(dir), "/tmp/secho-keyfile-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_keygen();
	test_perms();
	test_malformed();
	test_memory();
	cleanup();
	return t_exit();
}
