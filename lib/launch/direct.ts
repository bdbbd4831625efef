/**
 * The direct launch (issue "On a real CNB platform", item 4, and "Speed to the limit", item 2): a
 * static site or a PHP app starts its server with no Node.js in front of it, and needs no Node.js
 * in its image.
 *
 * At build, the runtime plans its command once with the build's variables, the port and the app folder
 * left as references. That plan becomes the shell form of the launch plan (shell.ts), written as a
 * POSIX sh script, the launch process: at run time it checks the few things only the run environment
 * can say, reads the port and the restart policy by the rules the Node.js launcher follows (the port
 * chain of ports.ts, the declarations of lib/config rendered in sh), and execs the server, or
 * supervises it when RBP_RESTART=on-failure. What the script cannot do itself goes to the Node.js
 * launcher (entry.ts), when the image has one:
 * - a request-flow middleware or the block (the launcher plans the chain, then hands a chain of
 *   processes to its shell form, shell-chain.ts, and serves the block itself);
 * - a dry run (RBP_DRY_RUN=1, `rbp run --dry-run`): the launcher prints the plan, told by the script
 *   (RBP_DIRECT_LAUNCH) whether it would have started the server itself (`exec`) or supervised it;
 * - a launch variable that is not valid (the launcher reports it as the variable's user error);
 * - a variable the command depends on (CC_RUN_COMMAND, CC_STATIC_FLAGS...) that differs from its
 *   value at build: the build recorded every variable the plan read, and only those.
 * The image carries a Node.js for the launcher only when the build saw a reason for one (a request
 * flow, a command that needs supervising) or the operator named the run image's (RBP_LAUNCHER_NODE);
 * without one, those cases are one clear error that says what to set at build.
 */
import { raw } from '../config/read.ts';
import { invalidLines, renderedAround, SH_READ_HELPERS, shQuote, shRead } from '../config/shell.ts';
import { isSecretName, renderUserError } from '../errors.ts';
import { KEEPS_CHILDREN_WHY, shellKeepsChildren } from './exec.ts';
import { planEnv, superviseReason, type RuntimeLaunch, type RuntimePlan } from './plan.ts';
import { portChain, PUBLIC_PORT } from './ports.ts';
import { ACTIVATING_VARIABLES, CACHE_VCL, MIDDLEWARE_SECRETS } from './request-flow/activation.ts';
import { MEMORY_LINES, runEnvLines } from './run-env.ts';
import { exportLines, staticSettings, SUPERVISOR_LIB } from './shell.ts';

/** Set by the script for the Node.js launcher: `exec` or `supervise` when it would start the server itself, else why not. */
export const DIRECT_LAUNCH_VARIABLE = 'RBP_DIRECT_LAUNCH';
export const DIRECT_EXEC = 'exec';
export const DIRECT_SUPERVISE = 'supervise';
/** The Node.js launcher, beside the script in the launcher layer's bin/. */
export const NODE_LAUNCHER_FILE = 'launch.cjs';

/**
 * Stand-ins the runtime's plan carries through to its argv and env: the script splices its own
 * values in. The port is a number no port can be; a plan whose inputs hold its digits is not written
 * as a script (planDirect).
 */
const PORT_REF = 1_357_924_680;
const APP_REF = '/\u0000app\u0000';
const SERVER_REF = '/\u0000server\u0000';

export type DirectPlan = { ok: true; argv0: string; script: (node: string | undefined) => string; reads: string[] } | { ok: false; why: string };

/**
 * The runtime's command planned with the build's variables, as a script; or why the launch always
 * needs the Node.js launcher. A user error in the plan (CC_STATIC_FLAGS with shell syntax) is thrown:
 * it fails the build, not the launch.
 */
export function planDirect(runtime: RuntimeLaunch, buildEnv: NodeJS.ProcessEnv): DirectPlan {
  const reads = new Set<string>();
  const override = runtime.serverOverride?.variable;
  const env = new Proxy(buildEnv, {
    get(target, key) {
      // The server override is read by the script itself, at run time.
      if (key === override) return SERVER_REF;
      if (typeof key === 'string') reads.add(key);
      return target[key as string];
    },
    has(target, key) {
      if (typeof key === 'string') reads.add(key);
      return key in target;
    },
    // A plan that walks the whole environment depends on all of it: nothing could be recorded.
    ownKeys() {
      throw new Error('lib/launch/direct.ts: a runtime plan that lists the whole environment cannot be written as a launch script');
    },
  });
  const planned = runtime.plan({ env, appDir: APP_REF, port: PORT_REF });
  if (planned instanceof Promise) return { ok: false, why: 'the runtime plans its command asynchronously' };
  const plan: RuntimePlan = planned;
  const supervise = superviseReason(plan);
  if (supervise) return { ok: false, why: supervise };
  if (shellKeepsChildren(plan.argv)) return { ok: false, why: KEEPS_CHILDREN_WHY };
  const secret = [...reads].find((k) => isSecretName(k) || k in MIDDLEWARE_SECRETS);
  if (secret) return { ok: false, why: `the command depends on ${secret}, a secret the launch script may not record` };
  const inputs = [...reads].sort().map((name) => [name, raw(buildEnv, name) ?? ''] as const);
  const clash = inputs.find(([, v]) => v.includes(String(PORT_REF)));
  if (clash) return { ok: false, why: `${clash[0]} holds the number the launch script stands in for the port` };
  const argv0 = plan.argv[0]!.replace(SERVER_REF, runtime.serverOverride?.builtPath ?? '').replace(APP_REF, '<app>');
  return { ok: true, argv0, reads: inputs.map(([n]) => n), script: (node) => script(runtime, plan, inputs, node) };
}

/** A word for sh: single-quoted, with the port, app and server references spliced in as variables. */
function word(text: string): string {
  return shQuote(text).replaceAll(APP_REF, `'"$app"'`).replaceAll(String(PORT_REF), `'"$port"'`).replaceAll(SERVER_REF, `'"$server"'`);
}

/**
 * The runtime's refusals (plan.ts), checked first: the variable trimmed, compared in any case, and
 * the error rendered around the value seen.
 */
function refusalLines(runtime: RuntimeLaunch): string[] {
  return (runtime.refusals ?? []).flatMap((r) => {
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- a refusal value is a plain ASCII word (pico)
    const pattern = [...r.value].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c.replace(/[^\w.-]/g, '\\$&'))).join('');
    const [before, after] = renderedAround((value) => renderUserError(r.error(value).data));
    return [`trim "\${${r.variable}-}"`, `case $t in ${pattern}) printf '%s%s%s\\n' ${word(before)} "\\"$t\\"" ${word(after)} >&2; exit 1 ;; esac`];
  });
}

/**
 * The port (ports.ts appPort, without a request flow: the script hands a flow over): the first set
 * variable of the chain, else the public port. RBP_PUBLIC_PORT is read whatever the chain says, as
 * the plan's public port is.
 */
function portLines(portVariable: string | undefined): string[] {
  const [own] = portChain(portVariable).filter((v) => v !== 'RBP_PUBLIC_PORT');
  return [
    `# The port: ${portChain(portVariable).join(', else ')}, else ${PUBLIC_PORT} (lib/launch/ports.ts).`,
    ...shRead('RBP_PUBLIC_PORT', 'port'),
    ...(own ? [`trim "\${${own}-}"`, `if [ -n "$t" ]; then`, ...shRead(own, 'port').map((l) => `  ${l}`), 'fi'] : []),
  ];
}

function script(runtime: RuntimeLaunch, plan: RuntimePlan, inputs: readonly (readonly [string, string])[], node: string | undefined): string {
  const portVar = runtime.portVariable;
  const { env } = planEnv(plan.env, PORT_REF, portVar, false);
  const rules = plan.runEnv ?? [];
  const memory = rules.some((r) => r.kind === 'memory-flag');
  const execNote = `- exec ${plan.argv[0]} (the launch script starts it directly: nothing to supervise)`;
  const lines: string[] = [
    '#!/bin/sh',
    '# The launch process, written at build by lib/launch/direct.ts: it starts the server itself when',
    '# nothing needs the Node.js launcher, and hands over to that launcher otherwise.',
    `node=${node ? word(node) : "''"}`,
    ...SH_READ_HELPERS,
    'why=',
    'hand() { [ -n "$why" ] || why=$1; }',
    'bad=',
    ...refusalLines(runtime),
    ...ACTIVATING_VARIABLES.map(({ variable, why }) => `set_ "\${${variable}-}" && hand ${word(why)}`),
    `{ [ -e ${CACHE_VCL} ] || [ -L ${CACHE_VCL} ]; } && hand ${word(`${CACHE_VCL} activates the cache proxy`)}`,
    "# The restart policy and the supervisor's timeouts (lib/launch/restart.ts, lib/config).",
    ...shRead('RBP_RESTART', 'restart'),
    ...shRead('RBP_RESTART_FIRST_DELAY', 'first_us'),
    ...shRead('RBP_STOP_TIMEOUT', 'stop_us'),
    'max_us=30000000 healthy_us=60000000',
    '# The variables the command was planned with, as they were at build.',
    ...inputs.map(
      ([name, value]) =>
        `trim "\${${name}-}"; [ "$t" = ${word(value)} ] || hand ${word(`${name} differs from its value at build, which the command was planned with`)}`,
    ),
    ...portLines(portVar),
    ...(memory ? ['# The instance memory (lib/launch/instance.ts), for the rules below.', ...shRead('RBP_INSTANCE_MEMORY', 'mem')] : []),
    '[ -z "$bad" ] || hand "$badWhy"',
    ...(runtime.serverOverride
      ? [
          `# The run image's own server, when the operator names one (${runtime.serverOverride.variable}); else the built one.`,
          `trim "\${${runtime.serverOverride.variable}-}"; server=\${t:-${word(runtime.serverOverride.builtPath)}}`,
        ]
      : []),
    SUPERVISOR_LIB,
    // The rules' variables are the plan's too (set at run time, below).
    ...staticSettings({ ...plan, env: { ...env, ...Object.fromEntries(rules.map((r) => [r.name, ''])) }, hooks: plan.hooks ?? {} }, word, execNote),
    `rbp_app() { rbp_do=$1; set -- ${plan.argv.map(word).join(' ')}; "$rbp_do" "$@"; }`,
    // Only once the script starts the app itself: the Node.js launcher it hands over to (a dry run
    // too) derives them from the same environment, and a PATH prefixed twice would show.
    '# The variables the plan derives from the run environment (lib/launch/run-env.ts).',
    'rbp_derive() {',
    ...(memory ? MEMORY_LINES : []).map((l) => `  ${l}`),
    ...runEnvLines(rules, word).map((l) => `  ${l}`),
    '  :',
    '}',
    'if [ -z "$why" ]; then',
    '  app=$(pwd -P)',
    ...exportLines(env, word).map((l) => `  ${l}`),
    '  case ${RBP_DRY_RUN-} in',
    '    1) why=exec; [ "$restart" != on-failure ] || why=supervise ;;',
    '    shell) rbp_derive; rbp_app rbp_account; exit 0 ;;',
    '    *) rbp_derive; rbp_app rbp_start ;;',
    '  esac',
    'fi',
    `if [ -n "$node" ] && [ -x "$node" ]; then`,
    `  ${DIRECT_LAUNCH_VARIABLE}=$why; export ${DIRECT_LAUNCH_VARIABLE}`,
    `  exec "$node" "\${0%/*}/${NODE_LAUNCHER_FILE}" "$@"`,
    'fi',
  ];
  // No Node.js: an invalid variable as its own user error, else what needs the launcher.
  for (const v of ['RBP_RESTART', ...portChain(portVar), ...(memory ? ['RBP_INSTANCE_MEMORY'] : [])]) lines.push(...invalidLines(v));
  const [before, after] = renderedAround((value) =>
    renderUserError({
      id: 'launch/direct/needs-node',
      title: 'This launch needs the Node.js launcher, and the image has no Node.js',
      seen: { what: 'what needs the launcher', value, where: 'the launch environment' },
      rule: 'The launch script starts the server itself, and restarts it (RBP_RESTART), when nothing else needs the Node.js launcher: no request flow, no dry run, and the variables its command was planned with unchanged since the build. The build saw none of these, so it put no Node.js in the image.',
      fix: 'Set the same variables at build and rebuild (the build then adds the Node.js launcher), or name a Node.js of the run image with RBP_LAUNCHER_NODE at build.',
    }),
  );
  lines.push(`printf '%s%s%s\\n' ${word(before)} "\\"$why\\"" ${word(after)} >&2`, 'exit 1', '');
  return lines.join('\n');
}
