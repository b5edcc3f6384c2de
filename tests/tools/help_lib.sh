# shellcheck shell=bash
# What `redlock --help` lists, read from its text, for the tests that keep
# the man page and the bash completion in step with the tool. Sourced, not
# run. Every function reads the help from $HELP_TEXT (set by load_help).
#
#   load_help /path/to/redlock     # HELP_TEXT=$(redlock --help), or exit 1
#   help_subcommands               # run acquire ... help, one per line
#   help_options                   # -q --quiet --ttl ..., one per line
#   help_options_of SUB            # the long options only SUB (and others)
#                                  # take: the help's "run, acquire: ..."
#   help_common_options            # the long options every subcommand takes
#   help_env_vars                  # every REDLOCK_* name the help mentions
#   help_exit_codes                # 0 1-125 64 ..., one per line

load_help() {
  HELP_TEXT="$("$1" --help)" || {
    echo "FAIL: $1 --help exited $?" >&2
    exit 1
  }
  [[ -n "$HELP_TEXT" ]] || {
    echo "FAIL: $1 --help printed nothing" >&2
    exit 1
  }
}

# The lines of the block whose heading starts with $1, up to a blank line.
_help_block() {
  awk -v head="$1" '
    index($0, head) == 1 { on = 1; next }
    on && /^$/ { exit }
    on { print }' <<<"$HELP_TEXT"
}

help_subcommands() {
  _help_block "Usage:" | awk '$1 == "redlock" { print $2 }'
}

# Option lines: "  -q, --quiet   desc" or "  --ttl D   desc" (the description
# starts at column 29, on the next line when the name is longer).
_help_option_lines() {
  # The heading wraps over two lines; the options start at the first line
  # that begins with two spaces and a dash.
  awk '
    /^Options/ { on = 1; next }
    on && /^$/ { exit }
    on { print }' <<<"$HELP_TEXT"
}

help_options() {
  _help_option_lines | grep -E '^  -' | grep -oE '(^  |, )--?[a-zA-Z][a-z-]*' |
    sed -E 's/^(  |, )//'
}

# "--ttl<TAB>run, acquire, extend" per option, the second field empty for an
# option that every subcommand takes.
_help_option_takers() {
  _help_option_lines | awk '
    function flush() {
      if (name == "") return
      takers = ""
      if (match(desc, /^[a-z]+(, [a-z]+)*: /)) {
        takers = substr(desc, 1, RLENGTH - 2)
      }
      print name "\t" takers
      name = ""
    }
    /^  -/ {
      flush()
      if (match($0, /--[a-z][a-z-]*/)) name = substr($0, RSTART, RLENGTH)
      desc = length($0) > 28 ? substr($0, 29) : ""
      got = (desc != "")
      next
    }
    name != "" && !got { desc = substr($0, 29); got = 1 }
    END { flush() }'
}

help_options_of() {
  local sub=$1 name takers
  while IFS=$'\t' read -r name takers; do
    [[ -n "$takers" ]] || continue
    if [[ ", $takers, " == *", $sub, "* ]]; then echo "$name"; fi
  done < <(_help_option_takers)
}

help_common_options() {
  local name takers
  while IFS=$'\t' read -r name takers; do
    [[ -z "$takers" ]] && echo "$name"
  done < <(_help_option_takers)
}

help_env_vars() {
  grep -oE 'REDLOCK_[A-Z_]*[A-Z]' <<<"$HELP_TEXT" | sort -u
}

help_exit_codes() {
  _help_block "Exit codes:" | awk '/^  [0-9]/ { print $1 }'
}

# Prints the lines only in the first or only in the second sorted list
# ("< x" / "> y"); returns 1 if there are any.
compare_sets() {
  local a b
  a="$(sort -u <<<"$1" | sed '/^$/d')"
  b="$(sort -u <<<"$2" | sed '/^$/d')"
  if [[ "$a" == "$b" ]]; then return 0; fi
  diff <(sed '/^$/d' <<<"$a") <(sed '/^$/d' <<<"$b") | grep -E '^[<>]'
  return 1
}
