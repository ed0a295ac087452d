/*
 * src/host/hostkey.c - the run's key, read with the project's key-file loader
 * (include/secho/keyfile.h: format, mode 0600 rule, errors that name the line but never
 * the value). Contract: include/secho/host.h.
 */
#include "secho/host.h"
#include "secho/keyfile.h"

#include <string.h>

void secho_host_key_wipe(struct secho_host_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

int secho_host_key_load(const char *path, struct secho_host_key *k, char *err, size_t errlen)
{
	struct secho_keyfile kf;
	int rc;

	memset(k, 0, sizeof(*k));
	rc = secho_keyfile_load(path, &kf, err, errlen);
	if (rc < 0)
		return rc;
	k->key_id = kf.key_id;
	memcpy(k->key, kf.key, sizeof(k->key));
	memcpy(k->salt, kf.salt, sizeof(k->salt));
	k->shared = kf.shared;
	secho_keyfile_wipe(&kf);
	return 0;
}
