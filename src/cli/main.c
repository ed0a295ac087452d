/*
 * src/cli/main.c - `secho`: one binary, one subcommand per job (the table comes from
 * SECHO_COMMANDS in cli.h).
 *
 *   secho --help | help [CMD]     list the commands, or one command's full usage
 *   secho --version
 *   secho CMD [options]           run CMD; CMD --help prints its usage
 *
 * Exit status: the command's (0 ok, 1 failed, 2 bad usage); 2 for an unknown command.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const struct cli_command commands[] = {
#define SECHO_CMD(name, help) {#name, cmd_##name, help},
        SECHO_COMMANDS
#undef SECHO_CMD
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: secho <command> [options]\n"
	           "       secho help <command>   (or: secho <command> --help)\n"
	           "       secho --version\n\n"
	           "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	const char *w = argv[1];
	if (!strcmp(w, "--help") || !strcmp(w, "-h") || (!strcmp(w, "help") && argc == 2)) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(w, "--version") || !strcmp(w, "-V") || !strcmp(w, "version")) {
		printf("secho %s (library impls:", SECHO_VERSION);
		for (int i = SECHO_IMPL_PORTABLE; i < SECHO_IMPL_COUNT; i++)
			if (secho_impl_available((secho_impl_id)i))
				printf(" %s", secho_impl_name((secho_impl_id)i));
		printf(")\n");
		return CLI_OK;
	}
	if (!strcmp(w, "help")) {
		const struct cli_command *c = find(argv[2]);
		if (!c)
			return cli_usage_err(
			        NULL, "help: unknown command '%s' (see 'secho --help')", argv[2]);
		if (argc > 3)
			return cli_usage_err(NULL, "help: one command at a time ('%s' is extra)",
			                     argv[3]);
		char *sub[] = {argv[2], "--help", NULL};
		cli_getopt_reset();
		return c->fn(2, sub);
	}
	const struct cli_command *c = find(w);
	if (!c) {
		if (w[0] == '-')
			return cli_usage_err(NULL, "unknown option '%s' (see 'secho --help')", w);
		return cli_usage_err(NULL, "unknown command '%s' (see 'secho --help')", w);
	}
	cli_getopt_reset();
	return c->fn(argc - 1, argv + 1);
}
