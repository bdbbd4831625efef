/**
 * The direct launch (issue "On a real CNB platform", item 4, and "Speed to the limit", item 2): a
 * static site or a PHP app with nothing to supervise starts its server with no Node.js in front of it,
 * and needs no Node.js in its image.
 *
 * At build, the runtime plans its command once with the build's variables, the port and the app folder
 * left as references (PORT_REF, APP_REF). That plan becomes a POSIX sh script, the launch process:
 * at run time it checks the few things only the run environment can say, fills in the port and execs
 * the server. What the script cannot do itself goes to the Node.js launcher (entry.ts), when the image
 * has one:
 * - a request-flow middleware or the block (the launcher starts and watches them);
 * - a restart policy (RBP_RESTART, `rbp run --restart`, `rbp deploy`);
 * - a dry run (RBP_DRY_RUN=1, `rbp run --dry-run`): the launcher prints the plan, told by the script
 *   (RBP_DIRECT_LAUNCH) whether it would have started the server itself;
 * - a port variable that is not a port (the launcher reports it as the variable's user error);
 * - a variable the command depends on (CC_RUN_COMMAND, CC_STATIC_FLAGS...) that differs from its
 *   value at build: the build recorded every variable the plan read, and only those.
 * The image carries a Node.js for the launcher only when the build saw a reason for one (a request
 * flow, a command that needs supervising) or the operator named the run image's (RBP_LAUNCHER_NODE);
 * without one, those cases are one clear error that says what to set at build.
 */
import { invalid, raw, spec } from '../config/read.ts';
import { isSecretName, renderUserError } from '../errors.ts';
import { portEnv, type LaunchContext, type RuntimeLaunch } from './context.ts';
import type { Plan } from './entry.ts';
import { shellKeepsChildren } from './exec.ts';
import { CACHE_VCL, MIDDLEWARE_SECRETS } from './request-flow/activation.ts';
import { PUBLIC_PORT } from './ports.ts';
import { underInit } from './pid1.ts';

/** Set by the script for the Node.js launcher: `exec` when it would start the server itself, else why not. */
export const DIRECT_LAUNCH_VARIABLE = 'RBP_DIRECT_LAUNCH';
export const DIRECT_EXEC = 'exec';
/** The Node.js launcher, beside the script in the launcher layer's bin/. */
export const NODE_LAUNCHER_FILE = 'launch.cjs';

// Stand-ins the runtime's plan carries through to its argv and env: never in a real value.
const PORT_REF = '\u0000port\u0000';
const APP_REF = '/\u0000app\u0000';
const SERVER_REF = '/\u0000server\u0000';

/** The variables whose presence activates the request flow; the script hands over when one is set. */
const FLOW_VARIABLES: Array<[string, string]> = [
  ['ACCESSPROXY_CHALLENGE_SECRET', 'ACCESSPROXY_CHALLENGE_SECRET activates the access proxy'],
  ['CC_REDIRECTOR_PROJECT_KEY', 'CC_REDIRECTOR_PROJECT_KEY activates the redirection proxy'],
  ['CC_CACHE_FILE', 'CC_CACHE_FILE activates the cache proxy'],
  ['CC_REQUEST_FLOW', 'CC_REQUEST_FLOW sets a request flow'],
];

export type DirectPlan =
  | { ok: true; argv0: string; script: (node: string | undefined) => string; reads: string[] }
  | { ok: false; why: string };

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
  const ctx: LaunchContext = { env, appDir: APP_REF, port: PORT_REF };
  const planned = runtime.plan(ctx);
  if (planned instanceof Promise) return { ok: false, why: 'the runtime plans its command asynchronously' };
  const plan: Plan = planned;
  if (plan.supervise) return { ok: false, why: plan.supervise };
  if (shellKeepsChildren(plan.argv)) return { ok: false, why: 'the shell command does not end in exec: only the supervisor stops its whole process group' };
  const secret = [...reads].find((k) => isSecretName(k) || k in MIDDLEWARE_SECRETS);
  if (secret) return { ok: false, why: `the command depends on ${secret}, a secret the launch script may not record` };
  const inputs = [...reads].sort().map((name) => [name, raw(buildEnv, name) ?? ''] as const);
  const argv0 = plan.argv[0]!.replace(SERVER_REF, runtime.serverOverride?.builtPath ?? '').replace(APP_REF, '<app>');
  return { ok: true, argv0, reads: inputs.map(([n]) => n), script: (node) => script(runtime, plan, inputs, node) };
}

/** A word for sh: single-quoted, with the port and app references spliced in as variables. */
function word(text: string): string {
  const quoted = `'${text.replaceAll("'", `'\\''`)}'`;
  return quoted.replaceAll(APP_REF, `'"$app"'`).replaceAll(PORT_REF, `'"$port"'`).replaceAll(SERVER_REF, `'"$server"'`);
}

/**
 * The runtime's refusals (context.ts), checked first: the variable trimmed, compared in any case, and
 * the error rendered around the value seen.
 */
function refusalLines(runtime: RuntimeLaunch): string[] {
  return (runtime.refusals ?? []).flatMap((r) => {
    const pattern = [...r.value].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c.replace(/[^\w.-]/g, '\\$&'))).join('');
    const [before, after] = renderedAround((value) => renderUserError(r.error(value).data));
    return [`trim "\${${r.variable}-}"`, `case $t in ${pattern}) printf '%s%s%s\\n' ${word(before)} "\\"$t\\"" ${word(after)} >&2; exit 1 ;; esac`];
  });
}

/** renderUserError's block for `value`, as sh printf arguments: the text around the value. */
function renderedAround(render: (value: string) => string): [string, string] {
  const mark = '\u0001value\u0001';
  const [before, after] = render(mark).split(JSON.stringify(mark));
  return [before!, after ?? ''];
}

function script(runtime: RuntimeLaunch, plan: Plan, inputs: ReadonlyArray<readonly [string, string]>, node: string | undefined): string {
  const portVar = runtime.portVariable;
  const env = { ...portEnv(PORT_REF, portVar, false), ...plan.env };
  const lines: string[] = [
    '#!/bin/sh',
    '# The launch process, written at build by lib/launch/direct.ts: it starts the server itself when',
    '# nothing needs the Node.js launcher, and hands over to that launcher otherwise.',
    `node=${node ? word(node) : "''"}`,
    '# Whitespace only counts as unset (lib/config).',
    "set_() { case ${1-} in *[![:space:]]*) return 0 ;; *) return 1 ;; esac; }",
    'trim() { t=${1-}; t=${t#"${t%%[![:space:]]*}"}; t=${t%"${t##*[![:space:]]}"}; }',
    'why=',
    'hand() { [ -n "$why" ] || why=$1; }',
    'bad=',
    ...refusalLines(runtime),
    ...FLOW_VARIABLES.map(([v, why]) => `set_ "\${${v}-}" && hand ${word(why)}`),
    `{ [ -e ${CACHE_VCL} ] || [ -L ${CACHE_VCL} ]; } && hand ${word(`${CACHE_VCL} activates the cache proxy`)}`,
    'trim "${RBP_RESTART-}"',
    `case $t in '' | no) ;; *) hand "RBP_RESTART=$t: the Node.js launcher restarts a crashed app" ;; esac`,
    '# The variables the command was planned with, as they were at build.',
    ...inputs.map(([name, value]) => `trim "\${${name}-}"; [ "$t" = ${word(value)} ] || hand ${word(`${name} differs from its value at build, which the command was planned with`)}`),
    `# The port: ${portVar ? `${portVar}, else ` : ''}the public port RBP_PUBLIC_PORT, else ${PUBLIC_PORT} (lib/launch/ports.ts).`,
    'var=',
    ...(portVar ? [`trim "\${${portVar}-}"; [ -n "$t" ] && var=${portVar}`] : []),
    '[ -n "$var" ] || { trim "${RBP_PUBLIC_PORT-}"; [ -n "$t" ] && var=RBP_PUBLIC_PORT; }',
    `port=\${t:-${PUBLIC_PORT}}`,
    'case $port in',
    "  *[!0-9]* | '' | ??????*) bad=$var ;;",
    '  *) [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || bad=$var ;;',
    'esac',
    '[ -z "$bad" ] || hand "$bad is not a port"',
    ...(runtime.serverOverride
      ? [
          `# The run image's own server, when the operator names one (${runtime.serverOverride.variable}); else the built one.`,
          `trim "\${${runtime.serverOverride.variable}-}"; server=\${t:-${word(runtime.serverOverride.builtPath)}}`,
        ]
      : []),
    'if [ "${RBP_DRY_RUN-}" != 1 ] && [ -z "$why" ]; then',
    '  app=$(pwd -P)',
    ...Object.entries(env).map(([k, v]) => `  ${k}=${word(v)}; export ${k}`),
    `  echo ${word(`- exec ${plan.argv[0]} (the launch script starts it directly: nothing to supervise)`)}`,
    '  # PID 1 (an app image): the server runs under the minimal init, which forwards stop signals (pid1.ts).',
    `  [ "$$" != 1 ] || exec ${underInit(plan.argv).map(word).join(' ')}`,
    `  exec ${plan.argv.map(word).join(' ')}`,
    'fi',
    '[ "${RBP_DRY_RUN-}" = 1 ] && [ -z "$why" ] && why=exec',
    `if [ -n "$node" ] && [ -x "$node" ]; then`,
    `  ${DIRECT_LAUNCH_VARIABLE}=$why; export ${DIRECT_LAUNCH_VARIABLE}`,
    `  exec "$node" "\${0%/*}/${NODE_LAUNCHER_FILE}" "$@"`,
    'fi',
  ];
  // No Node.js: the port error as the variable's own user error, else what needs the launcher.
  for (const v of [portVar, 'RBP_PUBLIC_PORT'].filter((x): x is string => !!x)) {
    const [before, after] = renderedAround((value) => renderUserError(invalid(spec(v), value).data));
    lines.push(`if [ "$bad" = ${v} ]; then printf '%s%s%s\\n' ${word(before)} "\\"$port\\"" ${word(after)} >&2; exit 1; fi`);
  }
  const [before, after] = renderedAround((value) =>
    renderUserError({
      id: 'launch/direct/needs-node',
      title: 'This launch needs the Node.js launcher, and the image has no Node.js',
      seen: { what: 'what needs the launcher', value, where: 'the launch environment' },
      rule: 'The launch script starts the server itself when nothing needs supervising: no request flow, no restart policy, no dry run, and the variables its command was planned with unchanged since the build. The build saw none of these, so it put no Node.js in the image.',
      fix: 'Set the same variables at build and rebuild (the build then adds the Node.js launcher), or name a Node.js of the run image with RBP_LAUNCHER_NODE at build.',
    }),
  );
  lines.push(`printf '%s%s%s\\n' ${word(before)} "\\"$why\\"" ${word(after)} >&2`, 'exit 1', '');
  return lines.join('\n');
}
