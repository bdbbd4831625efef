/**
 * A build fills a new generation of OUT beside it (`OUT.rbp-next`) while OUT stays the last complete
 * build for everyone else; the buildpacks must still see their work at OUT's own path, so that the
 * absolute paths they write (NODE_HOME=<OUT>/layers/…, a virtualenv's shebangs, node_modules links
 * into a layer) stay true once the generation is switched in, and in every later generation that
 * reuses the layer. Each buildpack process therefore runs in a private mount namespace where the
 * new generation is bind-mounted over OUT (util-linux `unshare` and `mount`):
 * - as root, a mount namespace alone;
 * - as another user (or a root that may not mount, in a container), a user namespace that maps the
 *   user to root so that it may mount, then a nested one that maps it back (util-linux 2.38+), so
 *   that the buildpack runs as the user it is, and the files it makes are the user's.
 * The mount is the process's own: it goes with the process, nothing is left mounted.
 * Where neither can be had (no unshare, user namespaces disabled or refused), the build happens
 * at OUT itself, and rbp says so (out-transaction.ts).
 */
import { spawn } from 'node:child_process';
import { findOnPath } from '../fsx.ts';

/**
 * The shell step inside the namespace: mount, move to the working folder, become the command. The
 * command gets the environment rbp gave it: `cd` would add OLDPWD, so it goes.
 */
const STEP = '"$0" -n --bind -- "$1" "$2" || exit 125; cd -- "$3" || exit 125; unset OLDPWD; shift 3; exec "$@"';

export interface OutNamespace {
  /** How the namespace is made, for the log: `mount namespace` or `user namespace`. */
  kind: string;
  /**
   * The command line that starts `file args` in `cwd` (a path as the process sees it) with `at`
   * shown at `shown`. The process keeps its pid (every step execs), so its process group is the
   * one rbp started.
   */
  wrap(at: string, shown: string, cwd: string, file: string, args: string[]): { file: string; args: string[] };
}

function namespaceOf(unshare: string, mount: string, sh: string, userns: boolean): OutNamespace {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const outer = userns ? ['--user', '--map-root-user', '--mount', '--propagation', 'private'] : ['--mount', '--propagation', 'private'];
  // In the user namespace the process is root until the nested one maps it back to the user.
  const back = userns ? [unshare, '--user', `--map-user=${uid}`, `--map-group=${gid}`, '--'] : [];
  return {
    kind: userns ? 'user namespace' : 'mount namespace',
    wrap: (at, shown, cwd, file, args) => ({ file: unshare, args: [...outer, '--', sh, '-c', STEP, mount, at, shown, cwd, ...back, file, ...args] }),
  };
}

/**
 * Whether a buildpack process can be shown `at` at `shown` here: the namespace is made once for
 * real, and the process in it checks that `shown` is `at` (same device and inode). Resolves to the
 * way that works, or why none does. Asynchronous: the probe's processes (unshare, sh, mount, sh)
 * start and end while rbp copies the app and detects (out-transaction.ts), not on its way.
 */
export async function probeOutNamespace(at: string, shown: string, pathVar = process.env.PATH): Promise<{ ns?: OutNamespace; why: string }> {
  const unshare = findOnPath('unshare', pathVar);
  const mount = findOnPath('mount', pathVar);
  const sh = findOnPath('sh', '/bin:/usr/bin') ?? findOnPath('sh', pathVar);
  if (!unshare || !mount || !sh) return { why: `no ${!unshare ? 'unshare' : !mount ? 'mount' : 'sh'} on PATH (util-linux)` };
  const tries = process.getuid?.() === 0 ? [false, true] : [true];
  const why: string[] = [];
  for (const userns of tries) {
    const ns = namespaceOf(unshare, mount, sh, userns);
    const { file, args } = ns.wrap(at, shown, shown, sh, ['-c', '[ "$1" -ef "$2" ]', 'probe', '.', at]);
    const r = await run(file, args);
    if (r.code === 0) return { ns, why: '' };
    const said =
      r.stderr
        .trim()
        .split('\n')[0]
        ?.replace(/^unshare: /, '') || (r.error ? r.error.message : `exit ${r.code ?? r.signal}`);
    why.push(`${ns.kind}: ${said}${hintFor(userns, said)}`);
  }
  return { why: why.join('; ') };
}

/**
 * Runs `file args` to its end (10 s at most): its exit and what it wrote on stderr. Node.js's own
 * spawn, not execa: a warm build loads execa for nothing else (scripts/build.mjs LAZY).
 */
function run(file: string, args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (stderr += d));
    child.once('error', (error) => resolve({ code: null, signal: null, stderr, error }));
    child.once('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** What the kernel's terse refusals mean here, for the in-place log line. */
function hintFor(userns: boolean, said: string): string {
  if (said.includes('Operation not permitted')) {
    return userns
      ? " (user namespaces refused to this user: a container's seccomp profile, or sysctl kernel.unprivileged_userns_clone=0)"
      : ' (no CAP_SYS_ADMIN, as in many containers)';
  }
  if (said.includes('No space left on device')) return ' (user namespaces turned off or at their limit: sysctl user.max_user_namespaces)';
  return '';
}
