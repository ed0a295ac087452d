/* src/cli/serve.h - `secho serve`. */
#ifndef SECHO_CLI_SERVE_H
#define SECHO_CLI_SERVE_H
int cmd_serve(int argc, char **argv);
#endif
