/*
 * src/cli/keygen.h - `secho keygen`. (src/cli/cli.h declares it too, through its
 * SECHO_COMMANDS list: SECHO_CMD(keygen, "write a new key file: key id, AES-256 key, salt").)
 */
#ifndef SECHO_CLI_KEYGEN_H
#define SECHO_CLI_KEYGEN_H

/* secho keygen --key-id N --out FILE [--force]. Returns 0, 1 (failed), 2 (bad usage). */
int cmd_keygen(int argc, char *argv[]);

#endif
