# bash completion for redlock(1). Installed as
# ${datadir}/bash-completion/completions/redlock; bash-completion loads it the
# first time `redlock` is completed. Works without bash-completion too:
# `source redlock.bash`.
#
# Completes the subcommands, the options each subcommand takes, the values
# of --quorum, file and directory names for the options that name one, and
# after the "--" of run or elect the command and its arguments. RESOURCE,
# NAME and TOKEN are the user's to type. The lists below follow the option table in
# tools/redlock/args.cc; tests/tools/completion_test.sh fails when they differ
# from what `redlock --help` lists.

# Options every subcommand takes.
_redlock_common_options="--masters --password-file --user --tls --cacert
--cacertdir --cert --key --sni --insecure --request-timeout --max-ttl
--accept-non-durable --key-prefix --quorum --quiet --verbose --version --help"

# The options only some subcommands take, per subcommand.
_redlock_options_of() {
  case "$1" in
    run) echo "--ttl --wait --conflict-exit-code --fencing --hand-off
      --shared --limit --permits --grace" ;;
    acquire) echo "--ttl --wait --conflict-exit-code --fencing --hand-off
      --shared --limit --permits --json" ;;
    extend) echo "--ttl --shared --limit --json" ;;
    release) echo "--shared --limit --json" ;;
    elect) echo "--value --ttl --wait --conflict-exit-code --grace --listen
      --leader --json" ;;
    status) echo "--limit --json --prometheus --election" ;;
    reconfigure) echo "--to --dry-run --wait" ;;
  esac
}

_redlock_subcommands="run acquire extend release elect status reconfigure help"

# Options that take a value (the next word, unless written --name=VALUE).
_redlock_takes_value() {
  case "$1" in
    --masters | --password-file | --user | --cacert | --cacertdir | --cert | \
      --key | --sni | --request-timeout | --max-ttl | --key-prefix | \
      --quorum | --ttl | --conflict-exit-code | --grace | --to | --limit | \
      --permits | --value)
      return 0
      ;;
    # reconfigure's --wait may stand alone; elsewhere it takes a duration.
    # Either way the next word, if it is not an option, is its value.
    --wait) return 0 ;;
  esac
  return 1
}

_redlock() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # COMP_WORDBREAKS splits --name=VALUE into "--name" "=" "VALUE".
  if [[ "$cur" == "=" ]]; then
    cur=""
  elif [[ "$prev" == "=" ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  # The option whose value this word is, if any.
  local value_of=""
  if _redlock_takes_value "$prev"; then value_of=$prev; fi

  # The subcommand, and where the "--" of run or elect is, in the words
  # before this one.
  local i word sub="" dashdash=0 skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if ((skip)); then
      skip=0
      continue
    fi
    if [[ "$word" == "--" ]]; then
      dashdash=$i
      break
    fi
    if [[ "${COMP_WORDS[i + 1]}" == "=" ]]; then
      skip=1 # --name = VALUE: "=" now, the value after it.
      ((i++))
      continue
    fi
    if [[ "$word" == -* ]]; then
      _redlock_takes_value "$word" && [[ "${COMP_WORDS[i + 1]}" != -* ]] && skip=1
      continue
    fi
    if [[ -z "$sub" && " $_redlock_subcommands " == *" $word "* ]]; then
      sub=$word
    fi
  done

  COMPREPLY=()
  # After the "--" of run or elect: the command, then its arguments.
  if ((dashdash > 0)); then
    if declare -F _command_offset >/dev/null; then
      _command_offset $((dashdash + 1))
    elif ((COMP_CWORD == dashdash + 1)); then
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
  fi

  if [[ -n "$value_of" ]]; then
    case "$value_of" in
      --quorum) mapfile -t COMPREPLY < <(compgen -W "majority unanimous" -- "$cur") ;;
      --password-file | --cacert | --cert | --key)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        ;;
      --cacertdir)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        ;;
      --wait)
        # A bare --wait of reconfigure is followed by an option.
        [[ "$cur" == -* ]] || return 0
        ;;
      *) return 0 ;; # URIs, names, durations, numbers: the user's.
    esac
    [[ "$value_of" == --wait ]] || return 0
  fi

  if [[ "$cur" == -* ]]; then
    local options=$_redlock_common_options
    if [[ -n "$sub" ]]; then
      options+=" $(_redlock_options_of "$sub")"
    else
      # Before the subcommand any option may come.
      local s
      for s in $_redlock_subcommands; do options+=" $(_redlock_options_of "$s")"; done
    fi
    if [[ "$sub" == run || "$sub" == elect ]]; then options+=" --"; fi
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur" | sort -u)
    return 0
  fi
  if [[ -z "$sub" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$_redlock_subcommands" -- "$cur")
  fi
  # RESOURCE, NAME and TOKEN: nothing to offer.
  return 0
}

complete -F _redlock redlock
