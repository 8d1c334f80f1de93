# Cross build for aarch64 Linux with Debian's gcc-aarch64-linux-gnu (libc from libc6-dev-arm64-cross
# in /usr/aarch64-linux-gnu), against a sysroot unpacked from the arm64 .debs of the dependencies
# (scripts/aarch64.sh makes it: libgsl-dev:arm64 cannot be installed beside the native one).
# Tests run under qemu-user (Debian qemu-user-static, no binfmt): CMAKE_CROSSCOMPILING_EMULATOR.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DACLCONFORM_SYSROOT=DIR
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)

# try_compile projects see the cache variable only through this list
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ACLCONFORM_SYSROOT)
if(NOT ACLCONFORM_SYSROOT AND DEFINED ENV{ACLCONFORM_SYSROOT})
  set(ACLCONFORM_SYSROOT $ENV{ACLCONFORM_SYSROOT})
endif()
if(NOT ACLCONFORM_SYSROOT OR NOT EXISTS ${ACLCONFORM_SYSROOT}/usr/lib/aarch64-linux-gnu)
  message(FATAL_ERROR "ACLCONFORM_SYSROOT (${ACLCONFORM_SYSROOT}) is not a sysroot of the arm64 packages: "
                      "run scripts/aarch64.sh, which unpacks one")
endif()
set(_lib ${ACLCONFORM_SYSROOT}/usr/lib/aarch64-linux-gnu)

set(CMAKE_FIND_ROOT_PATH ${ACLCONFORM_SYSROOT} /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files and prefixes their paths with the sysroot
set(ENV{PKG_CONFIG_LIBDIR} ${_lib}/pkgconfig:${ACLCONFORM_SYSROOT}/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${ACLCONFORM_SYSROOT})
set(ENV{PKG_CONFIG_PATH} "")

# the packages' headers after the cross libc's (gmp.h sits in the multiarch directory); their
# libraries and their own dependencies (libgslcblas, libgmp: DT_RPATH, which a library's
# dependencies also follow, not DT_RUNPATH) found at link time and at run time without
# LD_LIBRARY_PATH, in the build tree and in a `cmake --install` prefix (this tree is for tests:
# on an aarch64 host the native build finds the packages where Debian installs them)
set(CMAKE_C_FLAGS_INIT "-idirafter ${ACLCONFORM_SYSROOT}/usr/include -idirafter ${ACLCONFORM_SYSROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_lib} -Wl,--disable-new-dtags")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_lib} -Wl,--disable-new-dtags")
set(CMAKE_BUILD_RPATH ${_lib})
set(CMAKE_INSTALL_RPATH ${_lib})

find_program(ACLCONFORM_QEMU_AARCH64 qemu-aarch64-static)
if(ACLCONFORM_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ACLCONFORM_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
