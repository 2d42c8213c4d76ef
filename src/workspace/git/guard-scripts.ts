/**
 * The scripts Lorenz writes beside a git workspace (never inside it): the credential helper,
 * the hooks directory the clone's core.hooksPath points at, and the `git` the agent finds
 * first on its PATH. They hold no secret: the helper reads the credentials directory it is
 * given, the hooks read the protected branches from the clone's config.
 */

/** Client-side hooks git runs in a working clone: each is chained to the repository's own. */
export const CHAINED_HOOKS = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'post-index-change',
  'reference-transaction',
  'push-to-checkout',
] as const;

/** The clone's config keys Lorenz reads back in its hooks and its git. */
export const GIT_CONFIG_KEYS = {
  protected: 'lorenz.protected',
  repositoryHooks: 'lorenz.repositoryHooksPath',
  defaultBranch: 'lorenz.defaultBranch',
} as const;

// Where the repository's own hooks are: what it set core.hooksPath to (setup moved it here),
// else .git/hooks. Relative paths are relative to the top of the clone, as git runs hooks.
const REPOSITORY_HOOKS = `repository_hooks=$(git config --get ${GIT_CONFIG_KEYS.repositoryHooks} || printf '%s/hooks' "$(git rev-parse --git-common-dir)")`;

export function chainedHookScript(name: string): string {
  return `#!/bin/bash
# Written by Lorenz: runs the repository's own ${name} hook, if it has one.
${REPOSITORY_HOOKS}
[ -x "$repository_hooks/${name}" ] || exit 0
exec "$repository_hooks/${name}" "$@"
`;
}

export function prePushScript(): string {
  return `#!/bin/bash
# Written by Lorenz: refuses a push to a protected branch, then runs the repository's own
# pre-push hook with the same refs.
refs=$(cat)
mapfile -t patterns < <(git config --get-all ${GIT_CONFIG_KEYS.protected})
while read -r local_ref local_sha remote_ref remote_sha; do
  case $remote_ref in refs/heads/*) branch=\${remote_ref#refs/heads/} ;; *) continue ;; esac
  for pattern in "\${patterns[@]}"; do
    if [[ $branch == $pattern ]]; then
      echo "lorenz: default_branch_refused: $branch is protected (the default branch, main, master or workspace.git.protected); push the issue's own branch" >&2
      exit 1
    fi
  done
done <<< "$refs"
${REPOSITORY_HOOKS}
[ -x "$repository_hooks/pre-push" ] || exit 0
printf '%s\\n' "$refs" | "$repository_hooks/pre-push" "$@"
`;
}

/**
 * git's credential-helper protocol (\`get\` with protocol= and host= lines on stdin): answers
 * only over https, only for a host with a file in the directory. Anything else gets nothing,
 * so a remote on another host (or plain http) never sees the token.
 */
export function credentialHelperScript(): string {
  return `#!/bin/bash
# Written by Lorenz: git credential helper. Usage: helper <credentials directory> get
directory=$1
[ "$2" = get ] || exit 0
protocol='' host=''
while IFS= read -r line && [ -n "$line" ]; do
  case $line in
    protocol=*) protocol=\${line#protocol=} ;;
    host=*) host=\${line#host=} ;;
  esac
done
[ "$protocol" = https ] || exit 0
name=\${host%%:*}
name=\${name,,}
[[ $name =~ ^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$ ]] || exit 0
[ -f "$directory/$name" ] || exit 0
secret=$(head -n 1 "$directory/$name")
if [[ $secret == *:* ]]; then
  printf 'username=%s\\npassword=%s\\n' "\${secret%%:*}" "\${secret#*:}"
else
  printf 'username=x-access-token\\npassword=%s\\n' "$secret"
fi
`;
}

/**
 * The agent's \`git\`: refuses the usual ways around the repository's hooks (--no-verify,
 * commit -n, a core.hooksPath override, a config include or a removed \`core\` section that
 * would drop Lorenz's, an alias that expands to any of these) and pushes naming a protected
 * branch, then runs the real git. A guard rail for an agent that follows its tools, not a
 * sandbox: see docs/git-workspaces.md#protection.
 */
// eslint-disable-next-line max-lines-per-function -- a shell script as one template literal, read as the script it is
export function gitWrapperScript(realGit: string): string {
  const quoted = `'${realGit.replaceAll("'", `'\\''`)}'`;
  return `#!/bin/bash
# Written by Lorenz: the git on the agent's PATH.
real_git=${quoted}
refuse() { echo "lorenz: $1" >&2; exit 1; }
skip() { refuse "git_hooks_skip_refused: $1 would skip the repository's hooks"; }
# core.hooksPath itself, or a config include, which can set it after Lorenz's entry.
hooks_key() { local key=\${1,,}; [[ $key == core.hookspath* || $key == include.* || $key == includeif.* ]]; }
[[ \${GIT_CONFIG_PARAMETERS,,} == *core.hookspath* ]] && skip "core.hooksPath in GIT_CONFIG_PARAMETERS"
for ((n = 0; n < \${GIT_CONFIG_COUNT:-0}; n++)); do
  key=GIT_CONFIG_KEY_$n
  hooks_key "\${!key}" && skip "core.hooksPath in $key"
done
args=("$@")
i=0
while ((i < \${#args[@]})); do
  arg=\${args[i]}
  case $arg in
    -c | --config-env) i=$((i + 1)); hooks_key "\${args[i]}" && skip "$arg core.hooksPath" ;;
    -c*) hooks_key "\${arg#-c}" && skip "-c core.hooksPath" ;;
    --config-env=*) hooks_key "\${arg#--config-env=}" && skip "--config-env core.hooksPath" ;;
    -C | --git-dir | --work-tree | --namespace) i=$((i + 1)) ;;
    -*) ;;
    *) break ;;
  esac
  i=$((i + 1))
done
command=\${args[i]:-}
rest=("\${args[@]:i+1}")
no_verify() { [[ \${#1} -ge 6 && --no-verify == "$1"* ]]; }
case $command in
  commit | merge | push | am | rebase | cherry-pick | revert | pull)
    for arg in "\${rest[@]}"; do
      [ "$arg" = -- ] && break
      no_verify "$arg" && skip "$command $arg"
      if [ "$command" = commit ] && [[ $arg =~ ^-[a-zA-Z]+$ ]]; then
        flags=\${arg#-}
        # Short flags bundle (-an); a flag that takes a value ends the bundle (-mnote).
        for ((k = 0; k < \${#flags}; k++)); do
          flag=\${flags:k:1}
          [ "$flag" = n ] && skip "commit $arg"
          [[ $flag == [mFcCtS] ]] && break
        done
      fi
    done
    ;;
  config)
    reading=false
    # git 2.46's subcommands come first: \`git config get …\`, \`git config list\`.
    case \${rest[0]:-} in get | list) reading=true ;; esac
    for arg in "\${rest[@]}"; do
      case $arg in --get | --get-all | --get-regexp | --list | -l) reading=true ;; esac
    done
    if ! $reading; then
      for arg in "\${rest[@]}"; do
        hooks_key "$arg" && skip "config $arg"
        case $arg in
          -e | --edit | edit) skip "config $arg" ;;
          # Dropping or renaming the core section drops Lorenz's core.hooksPath with it.
          --remove-section | remove-section | --rename-section | rename-section)
            for section in "\${rest[@]}"; do
              [[ \${section,,} == core || \${section,,} == include* ]] && skip "config $arg $section"
            done
            ;;
        esac
      done
    fi
    ;;
  '') ;;
  *)
    # An alias (git ignores one named like a command) is checked as what it expands to; a
    # shell alias (!…) runs this git again. Split on blanks, as the words git would see.
    expansion=$("$real_git" "\${args[@]:0:i}" config --get "alias.$command" 2>/dev/null) || expansion=''
    if [[ -n $expansion && $expansion != '!'* ]]; then
      ((\${LORENZ_GIT_ALIAS_DEPTH:-0} < 10)) || refuse "git_hooks_skip_refused: alias $command expands too deep"
      set -f
      # shellcheck disable=SC2206
      words=($expansion)
      set +f
      LORENZ_GIT_ALIAS_DEPTH=$((\${LORENZ_GIT_ALIAS_DEPTH:-0} + 1)) LORENZ_GIT_CHECK_ONLY=1 \
        "$0" "\${args[@]:0:i}" "\${words[@]}" "\${rest[@]}" || exit 1
    fi
    ;;
esac
if [ "$command" = push ]; then
  mapfile -t patterns < <("$real_git" config --get-all ${GIT_CONFIG_KEYS.protected})
  targets=()
  positional=()
  for arg in "\${rest[@]}"; do
    case $arg in
      --all | --mirror | --branches) refuse "default_branch_refused: git push $arg would push protected branches" ;;
      -*) ;;
      *) positional+=("$arg") ;;
    esac
  done
  if ((\${#positional[@]} > 1)); then
    for spec in "\${positional[@]:1}"; do
      spec=\${spec#+}
      target=\${spec##*:}
      [ "$target" = HEAD ] && target=$("$real_git" symbolic-ref --short -q HEAD)
      targets+=("\${target#refs/heads/}")
    done
  else
    targets+=("$("$real_git" symbolic-ref --short -q HEAD)")
  fi
  for target in "\${targets[@]}"; do
    for pattern in "\${patterns[@]}"; do
      [[ $target == $pattern ]] && refuse "default_branch_refused: $target is protected (the default branch, main, master or workspace.git.protected); push the issue's own branch"
    done
  done
fi
# Checking an alias's expansion only (above): the real git runs the alias itself.
[ "\${LORENZ_GIT_CHECK_ONLY:-}" = 1 ] && exit 0
exec "$real_git" "$@"
`;
}
