# Sourced by scripts/mutants.sh and scripts/frontier.sh: one compile-time variant of the library
# (a planted mutant, a frontier level) built in a tree of its own.
#
#   variant_build MAIN_BUILD DIR TARGET JOBS LOG CFLAGS
#
# configures DIR from the source tree with the main build's build type and compiler (read from
# MAIN_BUILD/CMakeCache.txt), warnings as errors and CMAKE_C_FLAGS=CFLAGS (the variant's switch),
# and builds only TARGET, at low priority, with JOBS jobs; cmake's output goes to LOG.  Returns
# cmake's status.
variant_build() {
  local main=$1 dir=$2 target=$3 jobs=$4 log=$5 cflags=$6 btype cc
  btype=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$main/CMakeCache.txt" 2>/dev/null || true)
  cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$main/CMakeCache.txt" 2>/dev/null || true)
  local cfg=(-S "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" -B "$dir" -DACLCONFORM_WERROR=ON "-DCMAKE_C_FLAGS=$cflags")
  [ -n "$btype" ] && cfg+=("-DCMAKE_BUILD_TYPE=$btype")
  [ -n "$cc" ] && cfg+=("-DCMAKE_C_COMPILER=$cc")
  { nice cmake "${cfg[@]}" && nice cmake --build "$dir" --target "$target" -j"$jobs"; } >"$log" 2>&1
}
