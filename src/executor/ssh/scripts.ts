import { shellEscape } from '../../template/shell-escape.js';

/**
 * The shell run on the worker. Every remote invocation is `exec bash -c <script> lorenz
 * <args…>`, each word quoted: the user's login shell (which sshd runs the exec request with)
 * only sees quoted words, and every path and command reaches the script as a positional
 * argument, never as shell text.
 */
export function invocation(script: string, args: readonly string[] = []): string {
  return ['exec', 'bash', '-c', script, 'lorenz', ...args].map(shellEscape).join(' ');
}

/** Protocol lines on the channel's stderr before the command starts. */
export const GROUP_LINE = 'lorenz-pgid ';
export const REFUSED_LINE = 'lorenz-refused ';
/** The exit status of a script that refused (its reason is on a REFUSED_LINE). */
export const REFUSED_STATUS = 125;

const REFUSE = `refuse() { printf '${REFUSED_LINE}%s %s\\n' "$1" "$2" >&2; exit ${REFUSED_STATUS}; }`;

/**
 * The variable every process a run starts on the worker carries in its environment, set to
 * the run's own random value: what ends, at the run's end, the processes that left their
 * group (`setsid cmd &`), which no group signal reaches.
 */
export const RUN_MARKER_VARIABLE = 'LORENZ_RUN_MARKER';

/**
 * Runs one command: `$1` merge|split (stderr into stdout, as hooks want it, or apart, as a
 * bridge does), `$2` the cwd, `$3` the workspace root or empty, `$4` the command, `$5` the
 * run's marker (exported before the login shell starts, so the shell and all it starts
 * inherit it from their first instruction). sshd
 * starts every session in a session of its own, so this shell (exec'd, same pid) leads its
 * process group: the pgid it reports first is what a timeout signals.
 *
 * With a root, this is the pure-shell canonicalize guard, run in the shell that then runs
 * the command, so nothing can be swapped between check and use: it walks from the root to
 * the cwd one component at a time with `cd -P`, refusing a symlinked root, a symlinked
 * component, and any step whose physical path (`pwd -P`) leaves the canonical root. The
 * command then runs in the directory the walk holds, whatever happens to the path later.
 */
export const COMMAND_SCRIPT = `
printf '${GROUP_LINE}%s\\n' "$$" >&2
${REFUSE}
kill -0 -- "-$$" 2>/dev/null || refuse ssh_connect "the remote shell does not lead its own process group"
cwd=$2 root=$3
if [ -n "$root" ]; then
  case $cwd in "$root"/*) rel=\${cwd#"$root"/} ;; *) refuse workspace_outside_root "workspace outside root: $cwd" ;; esac
  [ -L "$root" ] && refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $root"
  cd -P -- "$root" 2>/dev/null || refuse invalid_workspace_cwd "invalid_workspace_cwd: workspace root is not a directory: $root"
  canonical_root=$(pwd -P)
  IFS=/ read -r -a parts <<<"$rel"
  for part in "\${parts[@]}"; do
    case $part in '' | .) continue ;; ..) refuse workspace_outside_root "workspace outside root: $cwd" ;; esac
    [ -L "$part" ] && refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $cwd"
    cd -P -- "$part" 2>/dev/null || refuse invalid_workspace_cwd "invalid_workspace_cwd: workspace path does not exist: $cwd"
    case $(pwd -P) in "$canonical_root"/*) ;; *) refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $cwd" ;; esac
  done
  [ "$(pwd -P)" = "$canonical_root" ] && refuse workspace_is_root "refusing to use workspace root as cwd"
else
  cd -- "$cwd" 2>/dev/null || refuse spawn "cannot start bash in $cwd: no such directory"
fi
[ -n "$5" ] && export ${RUN_MARKER_VARIABLE}="$5"
[ "$1" = merge ] && exec 2>&1
exec bash -lc "$4"
`;

/**
 * Ends a process group: SIGTERM, up to \`$2\` polls of 50 ms for it to go, SIGKILL, then a
 * bounded wait for the kernel to take it down. A group already gone is not an error.
 * \`kill -0\` also succeeds for zombies, which linger where PID 1 does not reap orphans
 * (containers), so where /proc exists a member only counts while it is not one.
 */
export const TERMINATE_SCRIPT = `
group=$1 polls=$2
alive() {
  kill -0 -- "-$group" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  local file line state pgrp
  for file in /proc/[0-9]*/stat; do
    read -r line < "$file" 2>/dev/null || continue
    line=\${line##*) }
    state=\${line%% *} line=\${line#* } line=\${line#* } pgrp=\${line%% *}
    [ "$pgrp" = "$group" ] && [ "$state" != Z ] && [ "$state" != X ] && return 0
  done
  return 1
}
kill -TERM -- "-$group" 2>/dev/null || exit 0
i=0
while alive; do
  if [ "$i" -ge "$polls" ]; then kill -KILL -- "-$group" 2>/dev/null; break; fi
  sleep 0.05
  i=$((i + 1))
done
i=0
while alive && [ "$i" -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
`;

/**
 * Ends every process of this user whose environment carries \`${RUN_MARKER_VARIABLE}=$1\`:
 * SIGTERM, up to \`$2\` polls of 50 ms (each one also signalling what appeared since), then
 * SIGKILL until none is left or a bounded wait passes; prints how many were signalled.
 * /proc/<pid>/environ is readable for one's own processes (not for ones made non-dumpable,
 * which are owned by root there and skipped). Without /proc the glob matches nothing and
 * nothing is ended. The marker comes as an argument, so this shell does not carry it.
 */
export const END_MARKED_SCRIPT = `
want="${RUN_MARKER_VARIABLE}=$1" polls=$2
declare -A signalled=()
marked=()
scan() {
  marked=()
  local file pid entry
  for file in /proc/[0-9]*/environ; do
    [ -O "$file" ] || continue
    pid=\${file#/proc/} pid=\${pid%/environ}
    [ "$pid" = "$$" ] && continue
    while IFS= read -r -d '' entry; do
      if [ "$entry" = "$want" ]; then marked+=("$pid"); break; fi
    done 2>/dev/null <"$file"
  done
  [ "\${#marked[@]}" -gt 0 ]
}
terminate_new() {
  local pid
  for pid in "\${marked[@]}"; do
    [ -n "\${signalled[$pid]-}" ] && continue
    signalled[$pid]=1
    kill -TERM "$pid" 2>/dev/null
  done
}
i=0
while scan && [ "$i" -lt "$polls" ]; do
  terminate_new
  sleep 0.05
  i=$((i + 1))
done
i=0
while scan && [ "$i" -lt 40 ]; do
  terminate_new
  kill -KILL "\${marked[@]}" 2>/dev/null
  sleep 0.05
  i=$((i + 1))
done
echo "\${#signalled[@]}"
`;

/** lstat-like: one word for what is at \`$1\`. */
export const PATH_KIND_SCRIPT = `
if [ -L "$1" ]; then echo symlink
elif [ -d "$1" ]; then echo directory
elif [ -f "$1" ]; then echo file
elif [ -e "$1" ]; then echo other
else echo missing
fi
`;

export const ENSURE_DIRECTORY_SCRIPT = `
if [ -d "$1" ]; then echo existed; else mkdir -p -- "$1" && echo created; fi
`;

/** Exit 2: nothing there (ENOENT); directories by \`cd -P\`, anything else by realpath. */
export const REALPATH_SCRIPT = `
if [ -d "$1" ]; then cd -P -- "$1" && pwd -P
elif [ -e "$1" ]; then realpath -- "$1" 2>/dev/null || readlink -f -- "$1"
else exit 2
fi
`;

export const REMOVE_TREE_SCRIPT = `rm -rf -- "$1"`;
export const REMOVE_EMPTY_DIRECTORY_SCRIPT = `rmdir -- "$1" 2>/dev/null && echo removed || true`;

/**
 * Writes stdin to \`$1\`; with a mode \`$2\`, the file is created private (umask 077) and only
 * then given its mode, so a credential is never readable by others even for a moment.
 */
export const WRITE_FILE_SCRIPT = `
if [ -n "$2" ]; then umask 077; fi
cat > "$1" || exit 1
if [ -n "$2" ]; then chmod "$2" "$1"; fi
`;

/** Exit 3: not a regular file (missing, a symlink, a directory). */
export const READ_FILE_SCRIPT = `
if [ -L "$1" ] || [ ! -f "$1" ]; then exit 3; fi
exec cat -- "$1"
`;

/**
 * Receives a tar stream on stdin into \`$1\` (replaced): \`$2\`, the directory the target must
 * stay within (the workspace), and every directory from it down to the target's parent must
 * not be symlinks, nor the target itself. The walk holds the parent with \`cd -P\`, so what
 * is extracted lands there even if a path is swapped afterwards; \`mkdir\` (no -p) fails on
 * anything planted between the removal and the creation.
 */
export const RECEIVE_TREE_SCRIPT = `
${REFUSE}
target=$1 within=$2
parent=\${target%/*} name=\${target##*/}
case $parent in "$within" | "$within"/*) ;; *) refuse workspace_outside_root "workspace outside root: $target" ;; esac
[ -L "$within" ] && refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $within"
cd -P -- "$within" 2>/dev/null || refuse invalid_workspace_cwd "invalid_workspace_cwd: workspace path does not exist: $within"
rel=\${parent#"$within"}
IFS=/ read -r -a parts <<<"\${rel#/}"
here=$within
for part in "\${parts[@]}"; do
  [ -z "$part" ] && continue
  here=$here/$part
  case $part in . | ..) refuse workspace_outside_root "workspace outside root: $target" ;; esac
  [ -L "$part" ] && refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $here"
  cd -P -- "$part" 2>/dev/null || refuse invalid_workspace_cwd "invalid_workspace_cwd: skills overlay path is not a directory: $here"
done
[ -L "$name" ] && refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $target"
rm -rf -- "$name" && mkdir -- "$name" && cd -P -- "$name" || refuse workspace_unsafe_symlink "unsafe symlink in workspace path: $target"
exec tar -xf - 2>&1
`;

export const HOME_SCRIPT = `printf '%s' "$HOME"`;
