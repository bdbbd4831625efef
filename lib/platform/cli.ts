/** The `rbp` command line: detect, build, run, deploy. */
import { RESTART_VARIABLE, restartPolicy } from '../launch/restart.ts';
import fs from 'node:fs';
import path from 'node:path';
import { EXIT, exitCodeFor, PhaseFailure } from '../cnb/exit.ts';
import { errorJson, isUserError, UserError } from '../errors.ts';
import { Logger, type LogLevel } from '../log.ts';
import { DEFAULT_INSTANCE, INSTANCE_SIZES, parseInstance, parseMemory } from '../launch/instance.ts';
import { bpKey } from './detect.ts';
import { collectEnv } from './cli-env.ts';
import { command, commandHelp, COMMANDS, overview, type Command } from './cli-commands.ts';
import { parseFlags, unknownCommand } from './cli-args.ts';
import { buildJson, writeJson } from './cli-json.ts';
import { failureError, phaseError } from './failure.ts';
import { readProjectDescriptor, type ProjectDescriptor } from './project-descriptor.ts';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { detectApp } from './detect.ts';
import { filteredHostEnv, operatorEnv } from './env.ts';
import { rbpInfoPath, readRbpInfo } from './metadata.ts';
import { orderFromGroups, resolveOrder, RUNTIMES, type Order } from './order.ts';
import { writePlatformEnv } from '../cnb/env.ts';
import { isDir } from '../fsx.ts';
import { lockHolder, recover } from './out-transaction.ts';
import { privateTemp, removeOnSignals } from './temp.ts';
import { defaultDeployOut } from './rbp-dirs.ts';
import { markInUse } from './in-use.ts';

// The build, launch and packaging code (execa, tar, ...) is imported by the commands that use it:
// `rbp detect`, which a platform runs on every build, starts without loading it (issue 14).
const buildModule = () => import('./build.ts');
const launcherModule = () => import('./launcher.ts');
const packagingModule = () => import('./cli-package.ts');
const deployModule = () => import('./deploy.ts');

declare const __RBP_VERSION__: string | undefined;

/** Set by the bundler from package.json; read from it when running from source. */
export function rbpVersion(): string {
  if (typeof __RBP_VERSION__ === 'string') return __RBP_VERSION__;
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json');
  return (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version;
}

export function versionLine(): string {
  return `rbp ${rbpVersion()} (node ${process.version}, ${process.platform}-${process.arch})`;
}

let current: Command | undefined;

function usage(msg: string): UserError {
  const c = current;
  return new UserError({
    id: 'platform/usage',
    title: msg,
    rule: c ? `Usage: ${c.synopsis}` : 'Usage: rbp COMMAND [flags], COMMAND one of ' + COMMANDS.map((x) => x.name).join(', ') + '.',
    fix: c ? `See rbp ${c.name} --help for every flag.` : 'See rbp --help.',
  });
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw usage(`expected one ${what}, got ${positionals.length ? positionals.join(' ') : 'none'}`);
  return positionals[0]!;
}

function parsePort(v: string | undefined): number {
  if (v === undefined) return 8080;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new UserError({ id: 'platform/port/invalid', title: 'Invalid port', seen: { what: '--port', value: v }, rule: 'A port is a whole number from 1 to 65535.', fix: 'Use for example --port 8080.' });
  }
  return n;
}

function parseTimeout(v: string | undefined): number {
  if (v === undefined) return 60;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UserError({ id: 'platform/timeout/invalid', title: 'Invalid timeout', seen: { what: '--timeout', value: v }, rule: 'The timeout is a number of seconds greater than 0.', fix: 'Use for example --timeout 120.' });
  }
  return n;
}

export interface Streams {
  stdout: Writable;
  stderr: Writable;
}

/** Which buildpacks: flags first, then project.toml's group, then our own in AUTO_ORDER. */
async function orderOf(values: { type?: string; buildpack?: string[]; order?: string }, project: ProjectDescriptor | undefined): Promise<Order> {
  if (!values.type && !values.buildpack?.length && !values.order && project?.group.length) {
    return await orderFromGroups([project.group], path.dirname(project.file), [], project.file);
  }
  return await resolveOrder({ type: values.type, buildpacks: values.buildpack, orderFile: values.order });
}

export async function main(argv: string[], streams: Streams = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const dd = argv.indexOf('--');
  const passthrough = dd === -1 ? [] : argv.slice(dd + 1);
  const [cmd, ...rest] = dd === -1 ? argv : argv.slice(0, dd);
  current = undefined;
  // Asked before the flags are read: a command line that does not parse still answers in JSON.
  const json = rest.includes('--json');
  // Until the flags are read, errors go to stderr at the normal level.
  let log = new Logger({ out: streams.stdout, err: streams.stderr, color: undefined });
  try {
    if (cmd === '--version' || cmd === '-V') return (streams.stdout.write(`${versionLine()}\n`), 0);
    if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
      const sub = cmd === 'help' ? rest[0] : undefined;
      const c = sub ? command(sub) : undefined;
      if (sub && !c) throw unknownCommand(sub);
      // No command at all is a usage error: the overview goes to stderr.
      (cmd === undefined ? streams.stderr : streams.stdout).write(`${c ? commandHelp(c) : overview(rbpVersion())}\n`);
      return cmd === undefined ? EXIT.usage : 0;
    }
    const c = command(cmd);
    if (!c) throw unknownCommand(cmd);
    current = c;
    const { values, positionals } = parseFlags(c, rest);
    const str = (k: string) => values[k] as string | undefined;
    const list = (k: string) => values[k] as string[] | undefined;
    if (values.help) return (streams.stdout.write(`${commandHelp(c)}\n`), 0);
    if (values.quiet && values.verbose) throw usage('--quiet and --verbose cannot be used together');
    const level: LogLevel = values.quiet ? 'quiet' : values.verbose ? 'verbose' : 'normal';
    // rbp's RBP_* variables reach the buildpacks (operatorEnv): with --verbose they log debug lines
    // too. --quiet is not passed on: rbp holds their output itself, to show it if the build fails.
    if (level === 'verbose') process.env.RBP_LOG_LEVEL = level;
    // With --json, stdout carries the JSON alone and the log goes to stderr.
    log = new Logger({ out: values.json ? streams.stderr : streams.stdout, err: streams.stderr, level });

    switch (cmd) {
      case 'version':
        streams.stdout.write(`${versionLine()}\n`);
        return 0;
      case 'detect': {
        const app = one(positionals, 'APP directory');
        if (!isDir(app)) {
          throw new UserError({ id: 'platform/app/not-found', title: 'Application directory not found', seen: { what: 'APP', value: app }, rule: 'rbp detect takes the directory of the application source.', fix: 'Give the path of an existing directory.' });
        }
        const project = readProjectDescriptor(path.resolve(app), str('descriptor'));
        if (project) log.debug(`project descriptor ${project.file} (schema ${project.schema}): ${Object.keys(project.env).length} variable(s), ${project.group.length} buildpack(s)`);
        const env = collectEnv(list('env-file'), list('env'), project?.env);
        const order = await orderOf({ type: str('type'), buildpack: list('buildpack'), order: str('order') }, project);
        removeOnSignals();
        const tmp = privateTemp('rbp-platform-');
        const platformDir = tmp.dir;
        try {
          writePlatformEnv(platformDir, env);
          log.section('Detect');
          const r = await detectApp(order, path.resolve(app), project?.filter, { base: filteredHostEnv(), user: env, operator: operatorEnv(), platformDir }, log);
          if (r.group) {
            log.info(`group: ${r.group.map(bpKey).join(', ')}`);
            for (const e of r.entries ?? []) log.detail(`plan: ${e.requires.map((q) => q.name).join(', ')} ← ${e.providers.map((p) => p.descriptor.buildpack.id).join(', ')}`);
          } else log.fail(r.code === EXIT.detectError ? 'detection failed with a buildpack error' : 'no buildpack group passed detection');
          if (values.json) {
            writeJson(streams.stdout, {
              exitCode: r.code,
              passed: Boolean(r.group),
              group: (r.group ?? []).map((g) => ({ id: g.descriptor.buildpack.id, version: g.descriptor.buildpack.version })),
              plan: (r.entries ?? []).map((e) => ({ requires: e.requires.map((q) => q.name), providers: e.providers.map((p) => p.descriptor.buildpack.id) })),
              ...(r.code !== 0 ? { error: errorJson(failureError(r.code, r.code === EXIT.detectError ? 'detection failed with a buildpack error' : 'no buildpack group passed detection')) } : {}),
            });
          }
          if (r.code !== 0) log.flushHeld();
          return r.code;
        } finally {
          tmp.remove();
        }
      }
      case 'build':
      case 'deploy': {
        const app = one(positionals, 'APP directory');
        const out = str('out') ?? (cmd === 'deploy' ? defaultDeployOut(app) : undefined);
        if (!out) throw usage('rbp build needs --out OUT');
        const instance = parseInstance(str('instance') ?? DEFAULT_INSTANCE);
        const project = readProjectDescriptor(path.resolve(app), str('descriptor'));
        if (project) log.debug(`project descriptor ${project.file} (schema ${project.schema}): ${Object.keys(project.env).length} variable(s), ${project.group.length} buildpack(s)`);
        const userEnv = collectEnv(list('env-file'), list('env'), project?.env);
        const port = parsePort(str('port'));
        const timeoutMs = parseTimeout(str('timeout')) * 1000;
        const restart = restartPolicy(str('restart') ?? 'on-failure', '--restart');
        const tags = imageTags(list('tag'), str('image'));
        const order = await orderOf({ type: str('type'), buildpack: list('buildpack'), order: str('order') }, project);
        // --image DIR writes an OCI layout; --image REF --publish pushes to a registry (the layout
        // then lives beside OUT, in OUT.rbp-image, so that the next build reuses its layers).
        const imageArg = str('image');
        if (values.publish && !imageArg) throw usage('--publish goes with --image REF, the name the image is pushed to');
        // A bad name is refused before any work.
        const imageRef = values.publish ? (await packagingModule()).parseImageRef(imageArg!, '--image', { push: true }) : undefined;
        const imageDir = imageArg ? (imageRef ? `${path.resolve(out)}.rbp-image` : path.resolve(imageArg)) : undefined;
        let prepared: import('../package/app-image.ts').PreparedImage | undefined;
        const writeImage = async (from: string) => {
          log.section('Image');
          const { prepareAppImage, pushImages, referenceLauncher, runImageLayout } = await packagingModule();
          prepared = await log.step(`writing the app image ${imageDir}`, () => prepareAppImage({ out, from, image: imageDir!, tags, runImage: runImageLayout(str('run-image')), launcher: referenceLauncher(), log }));
          if (imageRef) await pushImages([{ layout: prepared.staged, tag: tags?.[0] ?? 'latest', ref: imageRef }], log);
        };
        const { build } = await buildModule();
        const r = await build({
          appDir: app,
          outDir: out,
          order,
          cacheDir: str('cache'),
          clearCache: Boolean(values['clear-cache']),
          userEnv,
          bindings: list('binding'),
          task: str('task'),
          ...(project?.filter ? { appFilter: project.filter } : {}),
          instance,
          instanceMemory: INSTANCE_SIZES[instance]!,
          forImage: Boolean(imageArg),
          ...(imageDir ? { beforeCommit: writeImage } : {}),
          log,
        });
        if (r.code !== 0) log.flushHeld();
        let image: string | undefined;
        if (prepared && r.code === 0) {
          prepared.commit();
          image = imageRef ? imageArg : imageDir;
        } else prepared?.abort();
        const result = buildJson(r, out, image);
        if (r.code !== 0 || cmd === 'build') {
          if (values.json) writeJson(streams.stdout, result);
          return r.code;
        }
        const { deploy } = await deployModule();
        const appOut = values.json ? streams.stderr : streams.stdout;
        return await deploy({ out, port, userEnv, instance, restart, check: Boolean(values.check), timeoutMs, log, appOut, appErr: streams.stderr }, (d) => {
          if (values.json) writeJson(streams.stdout, { ...result, exitCode: d.error ? EXIT.healthCheckFailed : 0, deploy: { deployed: d.deployed, url: d.url, process: d.process, healthCheck: d.healthCheck }, ...(d.error ? { error: errorJson(d.error) } : {}) });
        });
      }
      case 'run': {
        const out = one(positionals, 'OUT directory');
        // A build killed with SIGKILL: its buildpack is stopped, and an OUT it left incomplete (in
        // place, or between the two renames of a switch without renameat2) is made whole again.
        const recovered = recover(out);
        if (recovered) log.warn(recovered);
        const builder = lockHolder(out);
        if (builder !== undefined && !fs.existsSync(rbpInfoPath(path.resolve(out)))) {
          throw new UserError({
            id: 'platform/out/building',
            title: 'A build into OUT is running',
            seen: { what: 'OUT', value: out, where: `process ${builder}` },
            rule: 'rbp run starts the complete build OUT holds, and OUT holds none until this build ends (the first build of OUT, or one made in place where no mount namespace can be had).',
            fix: `Wait for process ${builder} to finish, then run again.`,
          });
        }
        const info = readRbpInfo(path.resolve(out));
        const instance = parseInstance(str('instance') ?? info?.instance ?? DEFAULT_INSTANCE);
        const memory = str('memory') ? parseMemory(str('memory')!) : INSTANCE_SIZES[instance]!;
        const restart = restartPolicy(str('restart') ?? 'no', '--restart');
        const userEnv = collectEnv(list('env-file'), list('env'));
        const { checkListenPort, dryRun, execInstead, planLaunch, start } = await launcherModule();
        const plan = planLaunch({ outDir: out, processType: str('process'), port: parsePort(str('port')), userEnv, instance, memory, args: passthrough, dryRun: Boolean(values['dry-run']) });
        // Unset means no: a process that is not ours sees the environment the lifecycle would give it.
        if (restart !== 'no') plan.env[RESTART_VARIABLE] = restart;
        warnMissingBuildEnv(info?.['env-names'], userEnv, log);
        if (values['dry-run']) {
          writeJson(streams.stdout, dryRun(plan));
          return 0;
        }
        if (values.json) throw usage('--json goes with --dry-run: a running process prints its own output');
        await checkListenPort(plan, parsePort(str('port')));
        // rbp prune keeps an OUT a running app uses (the mark stays true across execve: same pid).
        markInUse(out);
        execInstead(plan);
        return await start(plan).exited;
      }
      case 'package': {
        if (positionals.length) throw usage(`rbp package takes no positional argument, got ${positionals.join(' ')}`);
        if (!str('out') && !str('publish')) throw usage('rbp package needs --out DIR or --publish REF');
        const { packageOurs, publishPackages } = await packagingModule();
        return await withScratch(str('out'), 'rbp-package-', async (dir) => {
          log.section('Package');
          const files = await log.step(`writing the buildpackages into ${dir}`, () => packageOurs(dir, log));
          if (str('publish')) {
            log.section('Publish');
            await publishPackages(files, str('publish')!, log);
          }
          return 0;
        });
      }
      case 'builder': {
        if (positionals.length) throw usage(`rbp builder takes no positional argument, got ${positionals.join(' ')}`);
        if (!str('out') && !str('publish')) throw usage('rbp builder needs --out DIR or --publish REF');
        const { builderInstructions, builderNames, LAYOUT_TAGS, pushImages, referenceLauncher, runImageLayout, writeBuilder } = await packagingModule();
        const lifecycleDir = path.dirname(referenceLauncher());
        const lifecycleVersion = path.basename(lifecycleDir);
        // Names first: a bad one is refused before any work.
        const names = builderNames({ builder: str('publish'), runImageName: str('run-image-name'), lifecycleVersion });
        return await withScratch(str('out'), 'rbp-builder-', async (dir) => {
          log.section('Builder');
          const out = str('out') ? dir : path.join(dir, 'builder');
          await log.step(`writing the builder ${out}`, () => writeBuilder({ out, runImage: runImageLayout(str('run-image')), lifecycleDir, lifecycleVersion, node: process.execPath, names, log }));
          if (str('publish')) {
            log.section('Publish');
            // The builder last: when it is there, what it names is there too.
            await pushImages((['run', 'build', 'lifecycle', 'builder'] as const).map((k) => ({ layout: out, tag: LAYOUT_TAGS[k], ref: names[k] })), log);
          } else for (const l of builderInstructions(out, names)) log.info(l);
          return 0;
        });
      }
      case 'prune': {
        if (positionals.length) throw usage(`rbp prune takes no positional argument, got ${positionals.join(' ')}`);
        const { prune } = await import('./cli-prune.ts');
        return prune({ dryRun: Boolean(values['dry-run']), caches: Boolean(values.caches), json: Boolean(values.json), log, stdout: streams.stdout });
      }
      default:
        throw usage(`unknown command ${JSON.stringify(cmd)}`);
    }
  } catch (e) {
    const shown = e instanceof PhaseFailure ? e.shown : e;
    if (isUserError(shown) || e instanceof PhaseFailure) log.flushHeld();
    if (isUserError(shown)) log.error(shown.data);
    else if (e instanceof PhaseFailure) log.fail(e.message);
    else throw e;
    // Under --json a failure is data too: its id, message and fix, on stdout.
    if (json) writeJson(streams.stdout, { exitCode: exitCodeFor(e, 'rbp'), error: errorJson(isUserError(shown) ? shown.data : phaseError(e as PhaseFailure)) });
    return exitCodeFor(e, 'rbp');
  }
}

/** Runs `fn` in `dir` when given (made if needed), else in a private temporary folder removed after. */
async function withScratch<T>(dir: string | undefined, prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  if (dir) {
    fs.mkdirSync(path.resolve(dir), { recursive: true });
    return fn(path.resolve(dir));
  }
  removeOnSignals();
  const tmp = privateTemp(prefix);
  try {
    return await fn(tmp.dir);
  } finally {
    tmp.remove();
  }
}

/**
 * Variables given to `rbp build --env` that this run does not set: the app was built with them and
 * may need them at run time too. Names only: values may be secrets.
 */
export function missingBuildEnv(names: string[] | undefined, userEnv: Record<string, string>): string[] {
  return (names ?? []).filter((n) => !(n in userEnv));
}

function warnMissingBuildEnv(names: string[] | undefined, userEnv: Record<string, string>, log: Logger): void {
  const missing = missingBuildEnv(names, userEnv);
  if (missing.length) log.warn(`set at build (rbp build --env) but not for this run: ${missing.join(', ')}; give them again with --env NAME=VALUE if the app needs them`);
}

/** `--tag` values: ref names of the --image in its layout (OCI image-layout's ref.name grammar). */
function imageTags(tags: string[] | undefined, image: string | undefined): string[] | undefined {
  if (!tags?.length) return undefined;
  if (!image) {
    const type = tags.find((t) => (RUNTIMES as readonly string[]).includes(t));
    throw new UserError({
      id: 'platform/tag/no-image',
      title: '--tag names an image, and no --image is written',
      seen: { what: '--tag', value: tags.join(' ') },
      rule: '-t/--tag is a name of the app image rbp build --image DIR writes, as pack build --tag.',
      fix: type ? `For the runtime, write --type ${type} (-t is --tag, as in pack). For an image, add --image DIR.` : 'Add --image DIR, or leave --tag out.',
    });
  }
  const component = '[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*';
  const bad = tags.find((t) => !new RegExp(`^${component}(?:/${component})*$`).test(t));
  if (bad !== undefined) {
    throw new UserError({
      id: 'platform/tag/invalid',
      title: 'Invalid image tag',
      seen: { what: '--tag', value: bad },
      rule: 'A tag is letters and digits, separated by one of - . _ : @ + (or --), with / between parts: myapp, myapp:1.2, registry.example.com/team/myapp:latest.',
      fix: 'Write the tag without spaces or other characters, e.g. --tag myapp:1.2.',
    });
  }
  return tags;
}
