# Sourced by the scripts that install their own dependencies (nothing is installed by hand).
# apt_install_missing TAG PKG...: apt-get install those of the Debian packages PKG that are not
# installed yet (as root, or through sudo), saying which on stderr under TAG.
apt_install_missing() {
  local tag=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$tag: installing ${missing[*]}" >&2
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
