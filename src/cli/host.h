/*
 * src/cli/host.h - `secho host`. (src/cli/cli.h declares it too, through its
 * SECHO_COMMANDS list: SECHO_CMD(host, "send traffic to an endpoint and verify every
 * response (paired, counters, load)").)
 */
#ifndef SECHO_CLI_HOST_H
#define SECHO_CLI_HOST_H

/* secho host paired|counters|load [options]. Returns 0, 1 (verification failed or too
 * many losses), 2 (bad usage or setup error). */
int cmd_host(int argc, char *argv[]);

#endif
