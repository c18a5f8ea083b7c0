# linkbot - one flat Makefile (no autotools).
#
#   make            build/linkbot and build/ngx_http_linkbot_module.so (the
#                   edge, built against Debian's nginx-dev: src/edge/nginx/)
#   make test       every test: C unit tests (cmocka, ASan+UBSan), edge JS
#                   tests (node --test), integration tests against real servers
#   make demo       crawl the demo site, publish into ./public, answer through
#                   the local edge
#   make bench      benchmarks; results go to bench/RESULTS.md by hand
#   make fuzz       long fuzzing runs (the extractor, the edge's requests)
#   make clean
#
# Dependencies install themselves: every target depends on $(BUILD)/.deps,
# which runs ci/install-deps (idempotent) when it is missing or older than
# the package lists.

BUILD    ?= build
CC       ?= cc
PKGS     := libcurl libxml-2.0 yaml-0.1 libcjson zlib libdeflate sqlite3 \
            libcrypto gumbo openblas lapacke libutf8proc
OPT      ?= -O2 -g
WARN     := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS)) -lstemmer -lpthread -lm
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined

SRC      := $(wildcard src/*/*.c)
OBJ      := $(SRC:%.c=$(BUILD)/%.o)
SAN_OBJ  := $(SRC:%.c=$(BUILD)/san/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/san/tests/%)
DEPS     := $(BUILD)/.deps
# The edge's nginx module: configured with the flags of the nginx it loads
# into (Debian's nginx-dev holds its sources and conf_flags).
NGX_SRC  ?= /usr/share/nginx/src
EDGE_MOD := $(BUILD)/ngx_http_linkbot_module.so
EDGE_MOD_SRC := src/edge/nginx/ngx_http_linkbot_module.c src/edge/nginx/config \
            src/edge/nginx/build src/edge/answer.c src/base/pageid.c \
            src/base/sha256.c include/linkbot/sha256.h \
            src/base/url.c include/linkbot/url.h \
            src/base/buf.c src/base/error.c include/linkbot/answer.h \
            include/linkbot/pageid.h include/linkbot/buf.h include/linkbot/error.h \
            include/linkbot/layout.h

# Every core unless told otherwise (make -jN, make -j1): a fresh clone's
# `make test` compiles three builds (optimised, sanitized, the unit tests).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

.SECONDARY:
.PHONY: all test unit-test edge-test integration-test demo bench fuzz clean deps
all: $(BUILD)/linkbot $(EDGE_MOD)

deps: $(DEPS)
$(DEPS): ci/install-deps package.json package-lock.json
	@ci/install-deps
	@mkdir -p $(@D) && touch $@

$(BUILD)/linkbot: $(MAIN_OBJ) $(OBJ) | $(DEPS)
	$(CC) $(OPT) -o $@ $^ $(PKG_LIBS)

# (nginx.h: a new nginx version, after a package upgrade, rebuilds it)
$(EDGE_MOD): $(EDGE_MOD_SRC) $(wildcard $(NGX_SRC)/src/core/nginx.h) | $(DEPS)
	@echo "  NGINX   $@"
	@+src/edge/nginx/build $@ $(NGX_SRC)

# The dense inner loops of relate's small-site path (lsa.c's sparse times
# dense product: y[k] += v * b[k], element by element; relate.c's
# smoothing, nv[j] += w * v[j]; topm.c's keys of a row) are vectorized:
# gcc 12's -O2 cost model ("very cheap") does not vectorize a loop of
# unknown trip count. Element-wise only: floating-point sums are never
# reordered without -ffast-math, so the results are the same bits.
VEC      := -ftree-vectorize -fvect-cost-model=dynamic
$(BUILD)/src/relate/lsa.o: OPT += $(VEC)
$(BUILD)/src/relate/relate.o: OPT += $(VEC)
$(BUILD)/src/relate/topm.o: OPT += $(VEC)

$(BUILD)/%.o: %.c | $(DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(OPT) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/san/%.o: %.c | $(DEPS)
	@mkdir -p $(@D)
	@echo "  CC san  $<"
	@$(CC) -O1 -g $(SAN) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

# Test drivers and benchmark programs link against an archive of the modules.
$(BUILD)/liblinkbot.a: $(OBJ)
	@rm -f $@ && ar rcs $@ $^

# Unit tests link against an archive, so each pulls in only the modules it uses.
$(BUILD)/san/liblinkbot.a: $(SAN_OBJ)
	@rm -f $@ && ar rcs $@ $^

$(BUILD)/san/tests/%: $(BUILD)/san/tests/unit/%.o $(BUILD)/san/liblinkbot.a | $(DEPS)
	$(CC) -g $(SAN) -o $@ $^ $(PKG_LIBS) -lcmocka -lglpk

test: $(BUILD)/linkbot $(EDGE_MOD) $(UNIT_BIN)
	@BUILD=$(BUILD) tests/run

unit-test: $(UNIT_BIN)
	@BUILD=$(BUILD) tests/run unit

edge-test: $(BUILD)/linkbot $(EDGE_MOD)
	@BUILD=$(BUILD) tests/run edge

integration-test: $(BUILD)/linkbot $(EDGE_MOD)
	@BUILD=$(BUILD) tests/run integration

demo: $(BUILD)/linkbot $(EDGE_MOD)
	@BUILD=$(BUILD) examples/demo.sh

bench: $(BUILD)/linkbot $(EDGE_MOD)
	@BUILD=$(BUILD) bench/run

fuzz: $(DEPS)
	@BUILD=$(BUILD) tests/fuzz/run long
	@BUILD=$(BUILD) tests/fuzz/edge long

clean:
	rm -rf $(BUILD)

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) \
         $(UNIT_SRC:tests/unit/%.c=$(BUILD)/san/tests/unit/%.d)
