#!/usr/bin/env bash
# The folders of src/ are layers, and every #include "src/..." runs down or
# within one (docs/design.md, "The parts"):
#
#   algorithm   pure pieces, no I/O
#   config      options and their parsing          -> algorithm
#   transport   sockets, TLS, libevent              -> algorithm
#   engine      the engine and its operations       -> algorithm config transport
#   api         the public facades                  -> everything above
#   prometheus  the optional observer               -> public headers only
#   admin       the operator's API: direct           -> algorithm config
#               connections, probes, reconfiguration    transport engine
#               (tools/ and the simulation's operator; nothing else in src/
#               includes it)
#
# Public headers (include/redlock/) include nothing from src/, and no source
# file sits at the top of src/. Fails naming each include that runs the wrong
# way. Usage: layering_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"

allowed() {
  case $1 in
    algorithm) echo "algorithm" ;;
    config) echo "algorithm config" ;;
    transport) echo "algorithm transport" ;;
    engine) echo "algorithm config transport engine" ;;
    api) echo "algorithm config transport engine api" ;;
    prometheus) echo "" ;;
    admin) echo "algorithm config transport engine admin" ;;
    *) return 1 ;;
  esac
}

bad=0
checked=0
for file in src/*; do
  if [[ -f $file ]]; then
    echo "FAIL: $file is at the top of src/; put it in the folder of its layer"
    bad=$((bad + 1))
  fi
done
while IFS= read -r file; do
  folder=${file#src/}
  folder=${folder%%/*}
  if ! layers=$(allowed "$folder"); then
    echo "FAIL: $file is in src/$folder/, which is not a known layer"
    bad=$((bad + 1))
    continue
  fi
  while IFS= read -r included; do
    checked=$((checked + 1))
    target=${included#src/}
    target=${target%%/*}
    if [[ " $layers " != *" $target "* ]]; then
      echo "FAIL: $file includes $included: $folder may include only [${layers}]"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^#include "\(src\/[^"]*\)".*/\1/p' "$file")
done < <(find src -mindepth 2 -type f \( -name '*.h' -o -name '*.cc' \) | sort)
while IFS= read -r file; do
  if grep -q '^#include "src/' "$file"; then
    echo "FAIL: public header $file includes a private header from src/"
    bad=$((bad + 1))
  fi
done < <(find include -type f -name '*.h')

if ((checked == 0)); then
  echo "FAIL: found no #include \"src/...\" lines under $PWD/src"
  exit 1
fi
echo "$checked includes checked, $bad running the wrong way"
((bad == 0))
