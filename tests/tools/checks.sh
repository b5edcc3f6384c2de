# Sourced by the shell tests in tests/tools/: `fail MESSAGE` prints it and
# counts it in $failures, so a test reports every check that failed before it
# exits; `require_readable FILE` stops the test at once when FILE is missing.
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

require_readable() {
  [[ -r "$1" ]] || {
    echo "FAIL: cannot read $1"
    exit 1
  }
}
