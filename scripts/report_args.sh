# Sourced by the scripts that publish a report (builtin_report.sh, pytorch_report.sh) with their
# arguments: --cases N and --seed S override the defaults the script set in $cases and $seed;
# anything else, or a flag without its value, is exit 2 naming the script and the argument.
while (($#)); do
  case "$1" in
    --cases|--seed)
      [ $# -ge 2 ] || { echo "$(basename "$0"): $1 needs a value" >&2; exit 2; }
      if [ "$1" = --cases ]; then cases="$2"; else seed="$2"; fi
      shift 2 ;;
    *) echo "$(basename "$0"): unknown argument $1" >&2; exit 2 ;;
  esac
done
