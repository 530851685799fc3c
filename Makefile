# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Top-level build glue. The kernel module is built by Kbuild against the
# pinned Debian headers; userspace/ and selftests/ have their own Makefiles.
# Parts that do not exist yet are skipped, and built as soon as they appear.

include scripts/versions.env

# Installed headers first, then a kernel unpacked by scripts/deps-6.12.sh,
# so `make module KVER=$(KVER_612)` works without installing 6.12 headers.
KHDR ?= $(or $(wildcard /usr/src/linux-headers-$(KVER)),$(wildcard \
	$(CURDIR)/.cache/k612/usr/src/linux-headers-$(KVER)),/usr/src/linux-headers-$(KVER))
BUILD := $(CURDIR)/build
STAGE := $(BUILD)/stage
CHECKPATCH := $(CURDIR)/.cache/linux-src/scripts/checkpatch.pl
SHELL := /bin/bash
# Variables given on our command line (T=, KHDR=...) are ours; do not let
# them leak into the other Makefiles this one runs.
MAKEOVERRIDES :=

HAVE_KERNEL := $(wildcard kernel/Kbuild kernel/Makefile)
HAVE_USER := $(wildcard userspace/Makefile)
HAVE_UNIT := $(wildcard selftests/unit/Makefile)
# Generated *.mod.c files are Kbuild's, not ours to lint.
KSRC := $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*.h kernel/uapi/*/*.h))
HSRC := $(filter-out %.mod.c,$(wildcard selftests/harness/*.c selftests/kmod/*.c))

.PHONY: all deps module module-6.12 userspace selftests install stage check check-unit \
	checkpatch sparse clean demo bench bench-quick bench-scale bench-zc latency \
	profile vm-ready fuzz-wire check-debug check-deb check-deb-6.12 check-6.12 check-long check-trixie

all: module userspace selftests

deps:
	scripts/deps.sh

# W=1 warnings are treated as errors here: the log is kept and any
# "warning:" in it fails the target.
module:
ifneq ($(HAVE_KERNEL),)
	@mkdir -p $(BUILD)
	set -o pipefail; $(MAKE) -C $(KHDR) M=$(CURDIR) W=1 modules 2>&1 | tee $(BUILD)/module.log
	@! grep -E 'warning:|error:' $(BUILD)/module.log || \
		{ echo "module: compiler warnings (see above); the module must be W=1 clean" >&2; exit 1; }
else
	@echo "module: kernel/Kbuild not present, nothing to build"
endif

# The module for Debian's 6.12 (KVER_612), fetched into .cache/k612 by
# deps-6.12.sh, built like `module` but from a copy of the sources so the
# 6.1 objects in kernel/ survive and neither build redoes the other's work.
# The result is build/mod-6.12/kernel/sroce.ko.
MOD612 := $(BUILD)/mod-6.12
module-6.12:
ifneq ($(HAVE_KERNEL),)
	scripts/deps-6.12.sh >/dev/null
	mkdir -p $(MOD612)/kernel
	rm -rf $(MOD612)/kernel/*.[ch] $(MOD612)/kernel/uapi
	cp -p Kbuild $(MOD612)/
	cp -p --parents kernel/Kbuild $(KSRC) $(MOD612)/
	set -o pipefail; $(MAKE) -C $(CURDIR)/.cache/k612/usr/src/linux-headers-$(KVER_612) \
		M=$(MOD612) W=1 modules 2>&1 | tee $(BUILD)/module-6.12.log
	@! grep -E 'warning:|error:' $(BUILD)/module-6.12.log || \
		{ echo "module-6.12: compiler warnings (see above); the module must be W=1 clean" >&2; exit 1; }
else
	@echo "module-6.12: kernel/Kbuild not present, nothing to build"
endif

userspace:
ifneq ($(HAVE_USER),)
	$(MAKE) -C userspace
else
	@echo "userspace: userspace/Makefile not present, nothing to build"
endif

selftests:
	$(MAKE) -C selftests

install: module userspace
ifneq ($(HAVE_KERNEL),)
	install -D -m 644 kernel/sroce.ko $(DESTDIR)/lib/modules/$(KVER)/updates/sroce.ko
endif
	install -D -m 644 docs/sroce.7 $(DESTDIR)/usr/share/man/man7/sroce.7
ifneq ($(HAVE_USER),)
	$(MAKE) -C userspace install DESTDIR=$(abspath $(DESTDIR))
endif

# The tree the test VMs lay over their root filesystem.
stage: module userspace
	rm -rf $(STAGE)
	mkdir -p $(STAGE)
	$(MAKE) install DESTDIR=$(STAGE)

check-unit:
ifneq ($(HAVE_UNIT),)
	$(MAKE) -C selftests/unit check
else
	@echo "check-unit: selftests/unit/Makefile not present"
endif

# What every target that boots VMs needs: the guest kernel fetched (deps),
# then everything built and staged, by a new make that reads afresh what
# deps brought.
vm-ready: deps
	$(MAKE) all
	$(MAKE) stage

# The Debian packages sroce-dkms and libsroce in build/deb/, checked by
# lintian (scripts/mkdeb.sh); selftests/deb_install.sh installs them.
.PHONY: deb
deb:
	scripts/mkdeb.sh $(BUILD)/deb

# T=name[,name...] (globs allowed) runs a subset, e.g. make check T=link_add
# (any test, check-long's and deb_install too).
check: vm-ready
	scripts/run-tests.sh $(if $(T),-t '$(T)',-x deb_install,$(LONG_TESTS))

# Tests that would push make check past half an hour on two TCG cores
# (about sixteen minutes): rxe interop at path MTU 4096 and under 1% loss,
# the bytes on the wire, teardown under traffic, netem loss and reorder,
# qperf, UCX and the stock tools, rdma_cm between two VMs, rmmod with a
# held device, the transmit and READ budgets between two VMs, CPU hotplug
# under traffic, the wire fuzzer's short run and network namespaces (also
# in CI's 6.12 subset). .ci/run runs them after make check.
LONG_LIST := interop_mtu4096 interop_loss wire_capture teardown_two_vm \
	netem_two_vm qperf_two_vm rmmod_held_two_vm tx_budget_two_vm \
	teardown_read_budget_two_vm cpu_hotplug tools_two_vm cm_two_vm \
	fuzz_wire netns
empty :=
comma := ,
LONG_TESTS := $(subst $(empty) $(empty),$(comma),$(strip $(LONG_LIST)))
check-long: vm-ready
	scripts/run-tests.sh -t '$(LONG_TESTS)'

# The packages built, installed in a guest that has only Debian's, used
# and purged (selftests/deb_install.sh). Its own target: the guest's DKMS
# build of sroce takes about a quarter of an hour of a core under TCG.
check-deb: vm-ready deb
	scripts/run-tests.sh -t deb_install

# The same on Debian's 6.12: DKMS builds against the headers deps-6.12.sh
# unpacked, which the guest sees at the same path.
check-deb-6.12: vm-ready deb
	$(MAKE) check-6.12 T=deb_install

# sroce_compat.h is the one file allowed to test LINUX_VERSION_CODE.
COMPAT_H := kernel/sroce_compat.h
checkpatch: deps
	@test -n "$(KSRC)" || { echo "checkpatch: no kernel sources yet"; exit 0; }; \
	perl $(CHECKPATCH) --no-tree --terse --show-types -f $(filter-out $(COMPAT_H),$(KSRC)) $(HSRC)
	@test ! -f $(COMPAT_H) || perl $(CHECKPATCH) --no-tree --terse --show-types \
		--ignore LINUX_VERSION_CODE -f $(COMPAT_H)

sparse: deps
ifneq ($(HAVE_KERNEL),)
	@mkdir -p $(BUILD)
	set -o pipefail; $(MAKE) -C $(KHDR) M=$(CURDIR) C=2 modules 2>&1 | tee $(BUILD)/sparse.log
	@! grep -E 'warning:|error:' $(BUILD)/sparse.log || \
		{ echo "sparse: reports above" >&2; exit 1; }
else
	@echo "sparse: kernel/Kbuild not present, nothing to check"
endif

demo: vm-ready
	scripts/demo.sh

bench: vm-ready
	scripts/bench.sh

# One repetition of a reduced matrix: checks the benchmark harness itself.
bench-quick: vm-ready
	BENCH_QUICK=1 scripts/bench.sh

bench-scale: vm-ready
	BENCH_SCALE_ONLY=1 scripts/bench.sh

# One guest: zero-copy transmit against the copy on a veth pair.
bench-zc: vm-ready
	BENCH_ZC_ONLY=1 BENCH_OUT=bench/zc scripts/bench.sh

# One boot: ICMP, UDP, rc_pingpong and ib_*_lat round trips, sroce and rxe.
latency: vm-ready
	scripts/latency.sh

# One boot: perf profiles (both guests) of 64 KiB ib_write_bw, ib_send_bw and
# ib_read_bw streams and of 4 KiB rc_pingpong round trips, sroce and rxe.
# See bench/PROFILE.md.
profile: vm-ready
	LAT_PROFILE=1 LAT_NET=0 LAT_PERF=0 LAT_PCAP_ITERS=0 LAT_SIZES= \
		scripts/latency.sh $(BUILD)/results/profile

# fuzz_wire with FUZZ_PACKETS (100000) packets; FUZZ_SEED=S replays a run.
FUZZ_PACKETS ?= 100000
fuzz-wire: vm-ready
	mkdir -p $(BUILD)/results/fuzz_wire_long
	printf 'FUZZ_PACKETS=%s\nFUZZ_SEED=%s\n' '$(FUZZ_PACKETS)' '$(FUZZ_SEED)' \
		> $(BUILD)/results/fuzz_wire_long/fuzz.env
	scripts/vm.sh -n 1 -t 1800 -o $(BUILD)/results/fuzz_wire_long selftests/fuzz_wire.sh

# The VM suite on a KASAN + lockdep + kmemleak + UBSAN build of the same 6.1
# (scripts/debug-kernel.sh, cached in .cache/; the first build takes about
# half an hour). sroce is rebuilt against it from a copy of kernel/, so the
# make check build is left alone. Host-only tests are left out; T= narrows.
DEBUG_SRC := $(CURDIR)/.cache/debug/src
DEBUG_MOD := $(BUILD)/debug-mod
DEBUG_STAGE := $(BUILD)/stage-debug
# Test modules (selftests/kmod) for a kernel other than KVER go to
# build/kmod-KVER, where the tests look first.
# $(call kmod_for,HEADERS,DIR,LOG): built from a copy in DIR, log appended.
define kmod_for
	rm -rf $(2) && mkdir -p $(2)
	cp selftests/kmod/Kbuild selftests/kmod/*.c $(2)/
	set -o pipefail; $(MAKE) -C $(1) M=$(2) modules 2>&1 | tee -a $(3)
endef
DEBUG_KMOD := $(BUILD)/kmod-$(DEBUG_KVER)
check-debug: vm-ready
	scripts/debug-kernel.sh
	rm -rf $(DEBUG_MOD) $(DEBUG_STAGE)
	mkdir -p $(DEBUG_MOD)/kernel
	cp Kbuild $(DEBUG_MOD)/
	cp --parents kernel/Kbuild $(KSRC) $(DEBUG_MOD)/
	set -o pipefail; $(MAKE) -C $(DEBUG_SRC) M=$(DEBUG_MOD) W=1 modules 2>&1 | tee $(BUILD)/debug-module.log
	$(call kmod_for,$(DEBUG_SRC),$(DEBUG_KMOD),$(BUILD)/debug-module.log)
	@! grep -E 'warning:|error:' $(BUILD)/debug-module.log
	install -D -m 644 $(DEBUG_MOD)/kernel/sroce.ko $(DEBUG_STAGE)/lib/modules/$(DEBUG_KVER)/updates/sroce.ko
	$(MAKE) -C userspace install DESTDIR=$(DEBUG_STAGE)
	SROCE_KVER=$(DEBUG_KVER) SROCE_STAGE=$(DEBUG_STAGE) SROCE_SLUB=0 SROCE_TIMEOUT_SCALE=5 \
		SROCE_CPU=max,la57=off \
		SROCE_RESULTS=$(BUILD)/results-debug \
		scripts/run-tests.sh -x unit,provider,style,harness/detect_warn,harness/exit_status,deb_install \
		$(if $(T),-t '$(T)')

# The VM suite in guests of Debian's 6.12 (KVER_612, from deps-6.12.sh)
# with the module-6.12 build staged; the rest as in check-debug. T= narrows.
STAGE612 := $(BUILD)/stage-6.12
check-6.12: vm-ready
	$(MAKE) module-6.12
	rm -rf $(STAGE612)
	install -D -m 644 $(MOD612)/kernel/sroce.ko $(STAGE612)/lib/modules/$(KVER_612)/updates/sroce.ko
	$(MAKE) -C userspace install DESTDIR=$(STAGE612)
	$(call kmod_for,$(CURDIR)/.cache/k612/usr/src/linux-headers-$(KVER_612),$(BUILD)/kmod-$(KVER_612),$(BUILD)/module-6.12.log)
	SROCE_KVER=$(KVER_612) SROCE_STAGE=$(STAGE612) SROCE_RESULTS=$(BUILD)/results-6.12 \
		scripts/run-tests.sh -x unit,provider,style,harness/detect_warn$(if $(T),,$(comma)deb_install) \
		$(if $(T),-t '$(T)')

# Debian 13 as its users run it: guests of trixie's own kernel
# (KVER_TRIXIE) whose root is Debian 13's (.cache/trixie-root,
# scripts/rdma-core-56.sh), with the provider built there against its
# rdma-core 56 and the module built there with its gcc-14
# (scripts/trixie-kernel.sh). T= narrows; pyverbs by default.
STAGE_TRIXIE := $(BUILD)/stage-trixie
MOD_TRIXIE := $(BUILD)/mod-trixie
check-trixie: vm-ready
	scripts/rdma-core-56.sh guest $(STAGE_TRIXIE)
	scripts/trixie-kernel.sh $(MOD_TRIXIE)
	install -D -m 644 $(MOD_TRIXIE)/kernel/sroce.ko $(STAGE_TRIXIE)/lib/modules/$(KVER_TRIXIE)/updates/sroce.ko
	SROCE_KVER=$(KVER_TRIXIE) SROCE_STAGE=$(STAGE_TRIXIE) SROCE_RESULTS=$(BUILD)/results-trixie \
		SROCE_ROOTFS=$(CURDIR)/.cache/trixie-root \
		scripts/run-tests.sh -t '$(if $(T),$(T),pyverbs)'

clean:
ifneq ($(HAVE_KERNEL),)
	$(MAKE) -C $(KHDR) M=$(CURDIR) clean
endif
ifneq ($(HAVE_USER),)
	$(MAKE) -C userspace clean
endif
	$(MAKE) -C selftests clean
	rm -rf $(BUILD)
