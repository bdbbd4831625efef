/**
 * rbp run on one build made of two shell buildpacks: process selection and arguments, launch env
 * (suffixes, per-process dirs, user and operator variables), exec.d on fd 3, working-dir, exit
 * status and signal forwarding, --dry-run, and --task.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { RBP, rbp, tmpDir } from '../helpers/rbp.ts';
import { bpArgs, launchToml, passWith, scriptedApp } from './helpers.ts';

const VARS = [
  'PATH',
  'P',
  'D',
  'O',
  'NOD',
  'WEB_ONLY',
  'WORKER_ONLY',
  'BUILD_ONLY',
  'LEAK',
  'FROM_EXECD',
  'EXECD_SAW_O',
  'WEB_EXECD',
  'PORT',
  'RBP_TEST_OPERATOR',
  'TEST_HOST_ONLY',
];

/** Layer `rt` of buildpack a: a `greet` program on PATH, env files of every kind, exec.d programs. */
const buildA = [
  'L="$CNB_LAYERS_DIR/rt"',
  'mkdir -p "$L/bin" "$L/env" "$L/env.launch/web" "$L/env.launch/worker" "$L/env.build" "$L/exec.d/web"',
  `cat > "$L/bin/greet" <<'SH'\n#!/bin/sh\necho "argv: $*"\nfor v in ${VARS.join(' ')}; do eval "echo \\"$v=[\\\${$v-unset}]\\""; done\nSH`,
  'printf x > "$L/env/P.append"; printf : > "$L/env/P.delim"',
  'printf layer > "$L/env.launch/D.default"',
  'printf layer > "$L/env.launch/O.override"',
  'printf b > "$L/env.launch/NOD.append"',
  'printf yes > "$L/env.launch/web/WEB_ONLY"',
  'printf yes > "$L/env.launch/worker/WORKER_ONLY"',
  'printf yes > "$L/env.build/BUILD_ONLY"',
  `cat > "$L/exec.d/10-set" <<'SH'\n#!/bin/sh\necho "exec.d ran"\nprintf 'FROM_EXECD = "execd"\\nEXECD_SAW_O = "%s"\\n' "$O" >&3\nSH`,
  `cat > "$L/exec.d/web/20-web" <<'SH'\n#!/bin/sh\nprintf 'WEB_EXECD = "yes"\\n' >&3\nSH`,
  'mkdir -p "$L/exec.d/bad" && printf "#!/bin/sh\\nexit 3\\n" > "$L/exec.d/bad/30-fail"',
  'chmod +x "$L/bin/greet" "$L/exec.d/10-set" "$L/exec.d/web/20-web" "$L/exec.d/bad/30-fail"',
  'printf "[types]\\nlaunch = true\\n" > "$L.toml"',
  // layer aa (before rt): its PATH.prepend is applied after rt's bin at launch (roots first)
  'mkdir -p "$CNB_LAYERS_DIR/aa/env" && printf /from-aa > "$CNB_LAYERS_DIR/aa/env/PATH.prepend" && printf : > "$CNB_LAYERS_DIR/aa/env/PATH.delim"',
  'printf "[types]\\nlaunch = true\\n" > "$CNB_LAYERS_DIR/aa.toml"',
  // a build-only layer: its env must never reach the app
  'mkdir -p "$CNB_LAYERS_DIR/tools/env" && printf 1 > "$CNB_LAYERS_DIR/tools/env/LEAK" && printf "[types]\\nbuild = true\\n" > "$CNB_LAYERS_DIR/tools.toml"',
  launchToml('[[processes]]\ntype = "web"\ncommand = ["false"]\ndefault = true'),
].join('\n');

const buildB =
  'mkdir -p tools && printf "#!/bin/sh\\npwd\\n" > tools/where && chmod +x tools/where\n' +
  launchToml(`[[processes]]
type = "web"
command = ["greet", "web"]
args = ["default-arg"]
default = true

[[processes]]
type = "worker"
command = ["greet", "worker"]
args = ["w-arg"]

[[processes]]
type = "status"
command = ["sh", "-c", "exit 5"]

[[processes]]
type = "wd"
command = ["pwd"]
working-dir = "sub"

[[processes]]
type = "bad"
command = ["true"]

[[processes]]
type = "rel"
command = ["./tools/where"]
working-dir = "sub"

[[processes]]
type = "sig"
command = ["sh", "-c", "trap '[ -n \\"$STUBBORN\\" ] || { echo trapped > \\"$MARKER\\"; exit 7; }' TERM; touch \\"$READY\\"; while :; do sleep 0.05; done"]`);

let out: string;

beforeAll(async () => {
  const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': passWith(), 'a/build': buildA, 'b/build': buildB }, { 'sub/.keep': '' });
  out = path.join(tmpDir('rbp-out-'), 'out');
  const r = await rbp(['build', app, '--out', out, ...bpArgs('a', 'b')]);
  if (r.exitCode !== 0) throw new Error(r.all);
});

/** Values of the VARS lines greet printed. */
function vars(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^(\w+)=\[(.*)\]$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('exported processes', () => {
  it('metadata.toml: processes sorted by type, later buildpack wins a type, default from the last default', () => {
    const md = parse(fs.readFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), 'utf8')) as {
      'buildpack-default-process-type': string;
      processes: { type: string; 'buildpack-id': string; direct: boolean }[];
    };
    expect(md['buildpack-default-process-type']).toBe('web');
    expect(md.processes.map((p) => p.type)).toEqual(['bad', 'rel', 'sig', 'status', 'wd', 'web', 'worker']);
    expect(md.processes.find((p) => p.type === 'web')).toMatchObject({ 'buildpack-id': 'test/b', direct: true });
  });

  it('only launch layers are in OUT', () => {
    expect(fs.readdirSync(path.join(out, 'layers', 'test_a')).sort()).toEqual(['aa', 'aa.toml', 'rt', 'rt.toml']);
  });
});

describe('process selection and arguments', () => {
  it('runs the default process with its args; the command is found on the launch PATH', async () => {
    const r = await rbp(['run', out, '--port', '18123']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('argv: web default-arg');
    expect(vars(r.stdout).PORT).toBe('18123');
  });

  it('--process picks another type', async () => {
    const r = await rbp(['run', out, '--process', 'worker']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('argv: worker w-arg');
  });

  it('user args after -- replace args, they do not append', async () => {
    const r = await rbp(['run', out, '--', 'x', 'y z']);
    expect(r.stdout).toContain('argv: web x y z');
    expect(r.stdout).not.toContain('default-arg');
  });

  // The process's own output, after what the exec.d program printed.
  const processOutput = (stdout: string) => stdout.replace(/^exec\.d ran\n/, '').trim();

  it('working-dir is relative to the app', async () => {
    const r = await rbp(['run', out, '--process', 'wd']);
    expect(processOutput(r.stdout)).toBe(path.join(out, 'workspace', 'sub'));
  });

  it('a relative command is found from the app, then runs in working-dir', async () => {
    const r = await rbp(['run', out, '--process', 'rel']);
    expect(r.exitCode).toBe(0);
    expect(processOutput(r.stdout)).toBe(path.join(out, 'workspace', 'sub'));
  });

  it("exits with the process's status", async () => {
    expect((await rbp(['run', out, '--process', 'status'])).exitCode).toBe(5);
  });

  it('an unknown process type is a launch error naming the known ones', async () => {
    const r = await rbp(['run', out, '--process', 'nope']);
    expect(r.exitCode).toBe(82);
    expect(r.stderr).toMatchInlineSnapshot(`
      "! ERROR Cannot launch the application
      !
      ! Seen: --process: "nope"
      ! Rule: The process must be one the build declared: bad, rel, sig, status, wd, web, worker.
      ! Fix:  Use one of those types.
      ! (error id: platform/launch/process)"
    `);
  });
});

describe('launch environment', () => {
  it('suffixes over user variables: append with .delim, empty default delimiter, .default loses, .override wins', async () => {
    const r = await rbp(['run', out, '--env', 'P=user', '--env', 'D=user', '--env', 'O=user', '--env', 'NOD=a']);
    const v = vars(r.stdout);
    expect(v.P).toBe('user:x');
    expect(v.D).toBe('user');
    expect(v.O).toBe('layer');
    expect(v.NOD).toBe('ab');
  });

  it("a buildpack's layer roots all come before its layers' env files", async () => {
    const v = vars((await rbp(['run', out])).stdout);
    expect(v.PATH).toMatch(new RegExp(`^/from-aa:${path.join(out, 'layers', 'test_a', 'rt', 'bin')}:`));
  });

  it('.default applies when the user sets nothing', async () => {
    const v = vars((await rbp(['run', out])).stdout);
    expect(v.D).toBe('layer');
    expect(v.P).toBe('x');
    expect(v.NOD).toBe('b');
  });

  it('env.launch/<process>/ applies to that process only, whichever buildpack declared it', async () => {
    const web = vars((await rbp(['run', out])).stdout);
    expect(web.WEB_ONLY).toBe('yes');
    expect(web.WORKER_ONLY).toBe('unset');
    const worker = vars((await rbp(['run', out, '--process', 'worker'])).stdout);
    expect(worker.WEB_ONLY).toBe('unset');
    expect(worker.WORKER_ONLY).toBe('yes');
  });

  it('env.build/ and build-only layers never reach the app', async () => {
    const v = vars((await rbp(['run', out])).stdout);
    expect(v.BUILD_ONLY).toBe('unset');
    expect(v.LEAK).toBe('unset');
  });

  it('RBP_* operator variables reach the app; other host variables do not', async () => {
    const v = vars((await rbp(['run', out], { env: { RBP_TEST_OPERATOR: 'op', TEST_HOST_ONLY: 'host' } })).stdout);
    expect(v.RBP_TEST_OPERATOR).toBe('op');
    expect(v.TEST_HOST_ONLY).toBe('unset');
  });

  it('exec.d programs write variables to fd 3, see the env built so far, and exec.d/<process>/ runs for that process only', async () => {
    const web = await rbp(['run', out]);
    // What it prints goes to the launcher's stdout, as with the lifecycle's launcher.
    expect(web.stdout).toMatch(/^exec\.d ran\n/);
    expect(web.stderr).not.toContain('exec.d ran');
    expect(vars(web.stdout)).toMatchObject({ FROM_EXECD: 'execd', EXECD_SAW_O: 'layer', WEB_EXECD: 'yes' });
    const worker = vars((await rbp(['run', out, '--process', 'worker'])).stdout);
    expect(worker.FROM_EXECD).toBe('execd');
    expect(worker.WEB_EXECD).toBe('unset');
  });
});

describe('exec.d failures', () => {
  it('an exec.d program that fails stops the launch before the process starts (82)', async () => {
    const r = await rbp(['run', out, '--process', 'bad']);
    expect(r.exitCode).toBe(82);
    expect(r.stderr).toContain('! Rule: An exec.d program must exit 0.');
    expect(r.stderr).toContain('it exited 3');
  });
});

describe('--dry-run', () => {
  it('prints argv, cwd and env as JSON with secrets redacted, and starts nothing', async () => {
    const r = await rbp([
      'run',
      out,
      '--dry-run',
      '--port',
      '18124',
      '--env',
      'NPM_TOKEN=tok-123',
      '--env',
      'CC_REDIRECTOR_PROJECT_KEY=key-456',
      '--env',
      'DB_URL=postgres://u:pw-789@db/x',
      '--env',
      'PLAIN=visible',
      '--',
      'a1',
    ]);
    expect(r.exitCode).toBe(0);
    const plan = JSON.parse(r.stdout) as { process: string; argv: string[]; cwd: string; env: Record<string, string> };
    expect(plan.process).toBe('web');
    expect(plan.argv).toEqual([path.join(out, 'layers', 'test_a', 'rt', 'bin', 'greet'), 'web', 'a1']);
    expect(plan.cwd).toBe(path.join(out, 'workspace'));
    expect(plan.env).toMatchObject({
      NPM_TOKEN: '***',
      CC_REDIRECTOR_PROJECT_KEY: '***',
      DB_URL: 'postgres://u:***@db/x',
      PLAIN: 'visible',
      PORT: '18124',
      FROM_EXECD: 'execd',
    });
    expect(r.stdout).not.toMatch(/tok-123|key-456|pw-789/);
    expect(r.stdout).not.toContain('argv: ');
    // exec.d ran for the plan's env; what it printed went to stderr, so stdout is the JSON alone.
    expect(r.stderr).toContain('exec.d ran');
  });
});

/** Waits up to 10 s for the process to write `file` (its sign that it is ready). */
async function untilExists(file: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!fs.existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(fs.existsSync(file)).toBe(true);
}

describe('signals', () => {
  it('SIGTERM to rbp run reaches the process, and rbp exits with its status', async () => {
    const dir = tmpDir('rbp-sig-');
    const marker = path.join(dir, 'marker');
    const ready = path.join(dir, 'ready');
    const child = execa('node', [RBP, 'run', out, '--process', 'sig', '--env', `MARKER=${marker}`, '--env', `READY=${ready}`], { reject: false });
    await untilExists(ready);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(7);
    expect(fs.readFileSync(marker, 'utf8')).toBe('trapped\n');
  });

  it('a process that ignores SIGTERM is killed once the grace period (RBP_STOP_TIMEOUT + 5 s) is over', async () => {
    const dir = tmpDir('rbp-sig-');
    const ready = path.join(dir, 'ready');
    const child = execa(
      'node',
      [RBP, 'run', out, '--process', 'sig', '--env', `MARKER=${path.join(dir, 'marker')}`, '--env', `READY=${ready}`, '--env', 'STUBBORN=1'],
      {
        reject: false,
        all: true,
        env: { RBP_STOP_TIMEOUT: '1' },
        // execa's own SIGKILL after 5 s would end rbp before its grace period does.
        forceKillAfterDelay: false,
      },
    );
    await untilExists(ready);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(137);
    expect(r.all).toContain('! rbp: process sig still running 6 s after SIGTERM: SIGKILL');
    expect(fs.existsSync(path.join(dir, 'marker'))).toBe(false);
  }, 60_000);
});

describe('--task', () => {
  it('makes process task the default; rbp run runs it once, without PORT', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': launchToml('[[processes]]\ntype = "web"\ncommand = ["false"]\ndefault = true') });
    const taskOut = path.join(tmpDir('rbp-out-'), 'out');
    const count = path.join(path.dirname(taskOut), 'count');
    const b = await rbp(['build', app, '--out', taskOut, ...bpArgs('a'), '--task', `echo run >> ${count}; echo "PORT=[\${PORT-unset}] args=[$*]"; exit 4`]);
    expect(b.exitCode).toBe(0);
    const md = parse(fs.readFileSync(path.join(taskOut, 'layers', 'config', 'metadata.toml'), 'utf8')) as { 'buildpack-default-process-type': string };
    expect(md['buildpack-default-process-type']).toBe('task');
    const r = await rbp(['run', taskOut, '--port', '18125']);
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain('PORT=[unset]');
    expect(fs.readFileSync(count, 'utf8')).toBe('run\n');
    // the web process is still there
    expect((await rbp(['run', taskOut, '--process', 'web'])).exitCode).toBe(1);
  });
});
