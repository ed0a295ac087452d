# secho - a plain `make` builds everything into build/.
#   make            library, the secho binary, tests, benchmarks, the OpenSSL provider
#   make install    the provider build/secho.so into OpenSSL's modules directory
#   make test       install missing Debian packages, build, run every test (also ASan+UBSan)
#   make demo       install missing Debian packages, build, run the main job
#   make check      static analysis (cppcheck, clang-tidy)
#   make format     clang-format the tree
#   V=1             show the commands;  BUILD=dir  build elsewhere (default build/)

BUILD    ?= build
CC       ?= cc
ifeq ($(origin CC),default)
CC       := gcc
endif
CLANG    ?= clang

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wvla -Wformat=2
CPPFLAGS := -Iinclude -Isrc -D_GNU_SOURCE -MMD -MP
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g -std=c17 $(WARN) -fno-strict-aliasing -fstack-protector-strong \
            -D_FORTIFY_SOURCE=2 -fPIE
LDFLAGS  ?= -pie -Wl,-z,relro,-z,now
ifdef SANITIZE
CFLAGS   := -O1 -g -std=c17 $(WARN) -fno-strict-aliasing -fno-omit-frame-pointer \
            -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS  := -fsanitize=address,undefined
endif

# Libraries from Debian (scripts/deps.sh installs them).
LIBS     := -lcrypto -lIPSec_MB -lnettle -lpcap -lxdp -lbpf -lelf -lz -ljansson \
            -lmicrohttpd -lpthread -lm

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

LIB_SRCS   := $(filter-out src/cli/% src/provider/%,$(wildcard src/*/*.c))
CLI_SRCS   := $(wildcard src/cli/*.c)
TEST_SRCS  := $(wildcard tests/unit/test_*.c)
TLIB_SRCS  := $(filter-out $(TEST_SRCS),$(wildcard tests/unit/*.c))
BENCH_SRCS := $(wildcard bench/*.c)
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
TOOL_SRCS  := $(wildcard tests/tools/*.c)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TLIB_OBJS  := $(TLIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS  := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
TOOL_BINS  := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)
LIBSECHO   := $(BUILD)/libsecho.a
# The dashboard page (src/dashboard/static/), embedded as C arrays by scripts/embed_static.sh.
DASH_STATIC := $(sort $(wildcard src/dashboard/static/*))
GEN_OBJS   := $(if $(DASH_STATIC),$(BUILD)/obj/gen/dash_static.o)

.PHONY: all lib tests bench test demo check format deps asan fuzz clean
# Keep intermediate objects (test and bench objects are built through chained rules).
.SECONDARY:
.DEFAULT_GOAL := all

all: $(BUILD)/secho tests bench
lib: $(LIBSECHO)
tests: $(TEST_BINS) $(TOOL_BINS)
bench: $(BENCH_BINS)

$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/gen/dash_static.c: $(DASH_STATIC) scripts/embed_static.sh
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)scripts/embed_static.sh $@ $(DASH_STATIC)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBSECHO): $(LIB_OBJS) $(GEN_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/secho: $(CLI_OBJS) $(LIBSECHO)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBSECHO) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TLIB_OBJS) $(LIBSECHO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TLIB_OBJS) $(LIBSECHO) $(LIBS)

$(BUILD)/tools/%: $(BUILD)/obj/tests/tools/%.o $(LIBSECHO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBSECHO) $(LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIBSECHO)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBSECHO) $(LIBS)

# bench/ipfix_encode measures libfixbuf (and GLib under it) beside our encoder.
FIXBUF_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libfixbuf 2>/dev/null))
$(BUILD)/obj/bench/ipfix_encode.o: CFLAGS += $(FIXBUF_CFLAGS)
$(BUILD)/bench/ipfix_encode: LIBS += $(shell pkg-config --libs libfixbuf 2>/dev/null)

# The OpenSSL 3 provider build/secho.so (src/provider/, docs/PROVIDER.md). A shared object
# needs position-independent code: the provider and the crypto library it wraps are compiled
# again, -fPIC with hidden symbols, in their own tree ($(BUILD)/pic); the main build keeps
# its -fPIE objects. -z defs proves the module links no OpenSSL library (it reaches
# libcrypto only through the core's dispatch table). `make install` copies it into the
# directory `openssl version -m` names (DESTDIR honoured).
PROV_SRCS   := $(wildcard src/provider/*.c) $(wildcard src/crypto/*.c)
PROV_OBJS   := $(PROV_SRCS:%.c=$(BUILD)/pic/%.o)
PROV_CFLAGS  = $(filter-out -fPIE,$(CFLAGS)) -fPIC -fvisibility=hidden
MODULESDIR  ?= $(shell openssl version -m 2>/dev/null | sed -n 's/^MODULESDIR: "\(.*\)"$$/\1/p')

.PHONY: provider install
all: provider
tests: provider
provider: $(BUILD)/secho.so

$(BUILD)/pic/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(PROV_CFLAGS) -c $< -o $@

$(BUILD)/secho.so: $(PROV_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(filter-out -pie,$(LDFLAGS)) -Wl,-z,defs -o $@ $^

install: $(BUILD)/secho.so
	@test -n "$(MODULESDIR)" || { echo "install: openssl version -m names no directory" >&2; exit 1; }
	install -D -m 0644 $(BUILD)/secho.so $(DESTDIR)$(MODULESDIR)/secho.so

-include $(shell find $(BUILD)/pic -name '*.d' 2>/dev/null)

# Sanitizer build of the library and tests, in its own tree.
asan:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=1 tests $(BUILD)/asan/secho

# libFuzzer targets (clang), in their own tree. FUZZ_LIB_<target> names the library
# sources a target exercises: they are compiled into it with the fuzzer's coverage and the
# sanitizers; whatever else they call is linked from the ordinary $(LIBSECHO).
FUZZ_LIB_fuzz_parse    := $(wildcard src/wire/*.c)
FUZZ_LIB_fuzz_dissect  := $(wildcard src/wire/*.c)
FUZZ_LIB_fuzz_keyfile  := src/engine/keyfile.c
FUZZ_LIB_fuzz_seqstate := src/engine/seqstate.c
FUZZ_LIB_fuzz_verify   := src/host/verify.c src/host/oracle_nettle.c
FUZZ_LIB_fuzz_flow     := $(wildcard src/wire/*.c) src/flow/table.c src/flow/hash.c
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
fuzz: $(FUZZ_BINS)
.SECONDEXPANSION:
$(BUILD)/fuzz/%: tests/fuzz/%.c $$(FUZZ_LIB_$$*) $(LIBSECHO)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -Iinclude -Isrc -D_GNU_SOURCE -g -O1 -std=c17 -Wall -Wextra -Werror \
	  -fsanitize=fuzzer,address,undefined $< $(FUZZ_LIB_$*) $(LIBSECHO) $(LIBS) -o $@

deps:
	$(Q)scripts/deps.sh

NPROC := $(shell nproc 2>/dev/null || echo 2)

test: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) asan
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) fuzz
	$(Q)BUILD=$(BUILD) tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all
	$(Q)BUILD=$(BUILD) scripts/demo.sh

check: deps
	$(Q)scripts/check.sh

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
