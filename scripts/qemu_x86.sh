#!/bin/sh
# The emulator of the CPU-model build (scripts/cpus.sh): an x86-64 executable of this tree run on
# the CPU model ACLCONFORM_QEMU_CPU (qemu-x86_64-static -cpu help lists them), so that its cpuid
# answers -- the kernels' level, the target_clones clone, glibc's own ifuncs -- are that CPU's.
exec qemu-x86_64-static -cpu "${ACLCONFORM_QEMU_CPU:?ACLCONFORM_QEMU_CPU: a qemu CPU model}" "$@"
