/**
 * The plan stored at build, for a launch with no Node.js to run the planner (a static or PHP image
 * whose run image has none, and whose build saw nothing that needs one): the runtime's launch planned
 * with the build's variables, as the data the launch's sh carries out (plan-data.ts), with the name
 * and value of every variable the plan read. The launch (sh/rbp-launch.sh) uses it while those keep
 * their value; otherwise it stops with one error saying what to set at build.
 *
 * The port is the one thing the stored plan leaves to the launch: the platform picks it (rbp run
 * --port, RBP_PUBLIC_PORT in an image on the host network). The plan names the port's variables in
 * the order the port plan reads them (ports.ts portChain) and stands a reference in for the port;
 * the app's folder and the layers' are references too, so the file names no folder of the build.
 * The build's own configuration (RBP_*, CNB_*) is not the launch's: the plan is made without it.
 */
import { isSecretName, renderUserError } from '../errors.ts';
import { planData, shQuote } from './plan-data.ts';
import { planLaunch, type RuntimeLaunch } from './plan.ts';
import { portChain, PUBLIC_PORT } from './ports.ts';
import { MIDDLEWARE_SECRETS } from './request-flow/activation.ts';

export const STORED_PLAN_FILE = 'stored-plan.sh';

/** A number no port can be: where the plan holds it, the launch puts its port. */
const PORT_REF = 1_357_924_680;

export type StoredPlan = { ok: true; text: string; reads: string[]; argv0: string } | { ok: false; why: string };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The error the launch gives when the stored plan does not hold, as the text around what changed. */
function needsNode(): [string, string] {
  const mark = '\u0001value\u0001';
  const text = renderUserError({
    id: 'launch/stored-plan/changed',
    title: 'This launch needs a Node.js to plan it, and the image has none',
    seen: { what: 'what changed since the build', value: mark, where: 'the launch environment' },
    rule: "Without a Node.js the launch follows the plan its build stored, made with the build's variables: it holds while every variable the plan read keeps its value at build (the port aside). The build saw nothing that needed a Node.js at launch, so it put none in the image.",
    fix: 'Set the same variables at build and build again, or give the launch a Node.js: RBP_LAUNCHER_NODE naming one, in the launch environment.',
  });
  const [before, after] = text.split(JSON.stringify(mark));
  return [before!, after ?? ''];
}

/** The runtime's launch planned with the build's variables, as the stored plan's file; or why it cannot be. */
export async function storePlan(runtime: RuntimeLaunch, build: { env: NodeJS.ProcessEnv; appDir: string; layersDir: string }): Promise<StoredPlan> {
  const portVars = portChain(runtime.portVariable);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(build.env)) if (v !== undefined && !/^(RBP|CNB)_/.test(k) && !portVars.includes(k)) base[k] = v;
  const reads = new Set<string>();
  // A plan that lists the whole environment depends on all of it: nothing could be recorded.
  const listed = { whole: false };
  const env = new Proxy(base, {
    get: (t, k) => (typeof k === 'string' && reads.add(k), Reflect.get(t, k) as string | undefined),
    has: (t, k) => (typeof k === 'string' && reads.add(k), Reflect.has(t, k)),
    ownKeys: (t) => ((listed.whole = true), Reflect.ownKeys(t)),
  });
  const plan = await planLaunch(runtime, env, build.appDir, build.layersDir, { port: PORT_REF });
  if (listed.whole) return { ok: false, why: 'the plan reads the whole environment' };
  if (plan.requestFlow) return { ok: false, why: 'a request flow runs in front of the app' };
  const names = [...reads].filter((k) => !portVars.includes(k)).sort();
  const odd = names.find((k) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  if (odd !== undefined) return { ok: false, why: `the plan reads ${JSON.stringify(odd)}, which sh cannot name` };
  const secret = names.find((k) => (isSecretName(k) || k in MIDDLEWARE_SECRETS) && base[k] !== undefined);
  if (secret) return { ok: false, why: `the plan depends on ${secret}, a secret the launcher layer may not hold` };
  const clash = names.find((k) => base[k]?.includes(String(PORT_REF)));
  if (clash) return { ok: false, why: `${clash} holds the number the stored plan stands in for the port` };
  const refs: [RegExp, string][] = [
    // A folder, not the start of another name beside it.
    [new RegExp(`${escape(build.layersDir)}(?![\\w.-])`, 'g'), `'"$rbp_layers"'`],
    [new RegExp(`${escape(build.appDir)}(?![\\w.-])`, 'g'), `'"$rbp_app"'`],
    [new RegExp(String(PORT_REF), 'g'), `'"$rbp_port"'`],
  ];
  const word = (text: string) => refs.reduce((w, [re, ref]) => w.replace(re, ref), shQuote(text));
  const [before, after] = needsNode();
  const text = [
    '# The launch plan stored at build (lib/launch/stored-plan.ts), for a launch with no Node.js.',
    `rbp_reads=${shQuote(names.join(' '))}`,
    ...names.map((k) => `rbp_at_build_${k}=${base[k] === undefined ? '$rbp_unset' : shQuote(base[k])}`),
    `rbp_port_vars=${shQuote(portVars.join(' '))} rbp_port=${PUBLIC_PORT}`,
    `rbp_needs_node_before=${shQuote(before)}`,
    `rbp_needs_node_after=${shQuote(after)}`,
    `rbp_plan=${shQuote(planData(plan, word).join('\n'))}`,
    '',
  ].join('\n');
  return { ok: true, text, reads: names, argv0: plan.argv[0]! };
}
