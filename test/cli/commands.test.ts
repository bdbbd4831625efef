/**
 * rbp as a command line, end to end with the small scripted buildpacks: --version, per-command
 * --help covering every flag, results on stdout and errors on stderr, --json, --quiet/--verbose,
 * project.toml, --env-file read by rbp itself, and no stack trace on a closed pipe.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../lib/platform/cli-commands.ts';
import { RBP, ROOT, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, bpArgs, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';

const out = () => path.join(tmpDir('rbp-out-'), 'out');
const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Buildpack a: passes, writes one launch layer and a default `web` process that prints its env var. */
const webApp = (files: Record<string, string> = {}, extra = '') =>
  scriptedApp(
    {
      'a/detect': passWith(),
      'a/build': [
        'mkdir -p "$CNB_LAYERS_DIR/web" && echo hi > "$CNB_LAYERS_DIR/web/f"',
        `printf '[types]\\nlaunch = true\\n' > "$CNB_LAYERS_DIR/web.toml"`,
        'echo "build saw FROM_PROJECT=$(cat "$CNB_PLATFORM_DIR/env/FROM_PROJECT" 2>/dev/null) files=$(ls | tr "\\n" " ")"',
        extra,
        launchToml('[[processes]]\ntype = "web"\ncommand = ["sh", "-c", "echo web"]\ndefault = true'),
      ].join('\n'),
    },
    files,
  );

describe('version and help', () => {
  it('rbp --version and rbp version print the package version on stdout', async () => {
    for (const args of [['--version'], ['version']]) {
      const r = await rbp(args);
      expect(r.exitCode).toBe(0);
      expect(r.stdout.trim()).toBe(`rbp ${version} (node ${process.version}, ${process.platform}-${process.arch})`);
      expect(r.stderr).toBe('');
    }
  });

  it.each(COMMANDS.map((c) => c.name))('rbp %s --help describes every flag the command accepts', async (name) => {
    const r = await rbp([name, '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const c = COMMANDS.find((x) => x.name === name)!;
    expect(r.stdout).toContain(c.synopsis);
    for (const f of c.flags) {
      // The flag and its description on one line.
      const line = r.stdout.split('\n').find((l) => new RegExp(`--${f.name}\\b`).test(l) && l.includes(f.help));
      expect(line, `--${f.name} described in rbp ${name} --help`).toBeDefined();
    }
    // A flag the help does not list is refused: help and parser come from one table.
    const bogus = await rbp([name, '--not-a-flag']);
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toContain(`See rbp ${name} --help for its flags.`);
  });

  it("rbp help COMMAND is that command's help; rbp --help the overview", async () => {
    expect((await rbp(['help', 'run'])).stdout).toContain('--dry-run');
    const all = await rbp(['--help']);
    expect(all.exitCode).toBe(0);
    for (const c of COMMANDS) expect(all.stdout).toContain(`  ${c.name} `);
  });
});

describe('stdout for results, stderr for errors, --json', () => {
  it('detect --json prints the group and plan on stdout alone, the log on stderr', async () => {
    const app = scriptedApp({ 'a/detect': passWith('[[provides]]\nname = "x"\n[[requires]]\nname = "x"') });
    const r = await rbp(['detect', app, '--json', ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      exitCode: 0,
      passed: true,
      group: [{ id: 'test/a', version: '0.0.1' }],
      plan: [{ requires: ['x'], providers: ['test/a'] }],
    });
    expect(r.stderr).toContain('## Detect');
  });

  it('a failed detect says so on stderr, with exit 20, and --json says passed: false', async () => {
    const app = scriptedApp({});
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(20);
    expect(r.stderr).toContain('ERROR: no buildpack group passed detection');
    expect(r.stdout).not.toContain('ERROR');
    const j = await rbp(['detect', app, '--json', ...bpArgs('a')]);
    expect(JSON.parse(j.stdout)).toMatchObject({ exitCode: 20, passed: false, group: [] });
  });

  it('build --json gives the summary: group, layers with their states, timings, OUT and image', async () => {
    const app = webApp();
    const o = out();
    const first = await rbp(['build', app, '--out', o, '--json', ...bpArgs('a')]);
    expect(first.exitCode).toBe(0);
    const s = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(s).toMatchObject({
      exitCode: 0,
      out: o,
      group: [{ id: 'test/a', version: '0.0.1' }],
      layers: [{ buildpack: 'test/a', name: 'web', state: 'created', launch: true, cache: false }],
      image: null,
    });
    expect(Object.keys(s.timings as object)).toEqual(['detect', 'restore', 'build', 'export']);
    expect(first.stderr).toContain('## Summary');
  });

  it('a failed build: the error on stderr, exit 51', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'echo "compiling"; exit 3' });
    const r = await rbp(['build', app, '--out', out(), ...bpArgs('a')]);
    expect(r.exitCode).toBe(51);
    expect(r.stderr).toContain('ERROR: test/a@0.0.1 failed (exit 3)');
    expect(r.stdout).not.toContain('ERROR');
  });

  it('no stack trace when stdout is a closed pipe (rbp run --dry-run | head)', async () => {
    const app = webApp();
    const o = out();
    expect((await rbp(['build', app, '--out', o, '--quiet', ...bpArgs('a')])).exitCode).toBe(0);
    // A dry run far larger than a pipe's buffer, so head exits while rbp still writes.
    const envFile = path.join(tmpDir(), 'big.env');
    fs.writeFileSync(envFile, `BIG=${'x'.repeat(512 * 1024)}\n`);
    const r = await execa('bash', ['-c', `node "${RBP}" run "${o}" --dry-run --env-file "${envFile}" | head -c 20; echo "status=\${PIPESTATUS[0]}" >&2`], {
      reject: false,
    });
    expect(r.stdout).toBe('{\n  "process": "web"');
    expect(r.stderr).not.toMatch(/EPIPE|\n\s+at |internal error/);
    expect(r.stderr).toContain('status=0');
  });
});

describe('--quiet and --verbose', () => {
  it('--quiet prints nothing for a good build, and the held log on stderr for a failed one', async () => {
    const good = await rbp(['build', webApp(), '--out', out(), '--quiet', ...bpArgs('a')]);
    expect(good.exitCode).toBe(0);
    expect(good.stdout).toBe('');
    expect(good.stderr).toBe('');
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'echo "compiling step 1"; exit 3' });
    const bad = await rbp(['build', app, '--out', out(), '-q', ...bpArgs('a')]);
    expect(bad.exitCode).toBe(51);
    expect(bad.stdout).toBe('');
    // The held log first, then the error.
    expect(bad.stderr).toMatch(/compiling step 1[\s\S]*ERROR: test\/a@0\.0\.1 failed \(exit 3\)/);
  });

  it('--verbose adds debug lines and hands RBP_LOG_LEVEL=verbose to the buildpacks; not with --quiet', async () => {
    const app = webApp({ 'project.toml': '[_]\nschema-version = "0.2"\n' }, 'echo "level=$RBP_LOG_LEVEL"');
    const r = await rbp(['build', app, '--out', out(), '--verbose', ...bpArgs('a')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`. project descriptor ${path.join(app, 'project.toml')} (schema 0.2)`);
    expect(r.stdout).toContain('level=verbose');
    const normal = await rbp(['build', app, '--out', out(), ...bpArgs('a')]);
    expect(normal.stdout).not.toContain('. project descriptor');
    expect((await rbp(['detect', app, '-q', '-v'])).stderr).toContain('--quiet and --verbose cannot be used together');
  });
});

describe('project.toml', () => {
  it('schema 0.2: [[io.buildpacks.build.env]] (flags win), exclude, and buildpacks by uri', async () => {
    const project = [
      '[_]',
      'schema-version = "0.2"',
      '[io.buildpacks]',
      'exclude = ["*.log", "secret/"]',
      '[[io.buildpacks.group]]',
      `uri = "${path.relative(path.join(tmpDir(), 'x'), bp('a')).replace(/^/, '')}"`,
      '[[io.buildpacks.build.env]]',
      'name = "FROM_PROJECT"',
      'value = "from-project"',
    ];
    const app = webApp({ 'debug.log': 'x', 'secret/k': 'x', 'keep.txt': 'x' });
    // The uri is relative to project.toml.
    project[5] = `uri = "${path.relative(app, bp('a'))}"`;
    fs.writeFileSync(path.join(app, 'project.toml'), `${project.join('\n')}\n`);
    const o = out();
    const r = await rbp(['build', app, '--out', o]); // no --buildpack: the descriptor's group
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('group: test/a@0.0.1');
    expect(r.stdout).toContain('build saw FROM_PROJECT=from-project');
    expect(fs.existsSync(path.join(o, 'workspace', 'keep.txt'))).toBe(true);
    expect(fs.existsSync(path.join(o, 'workspace', 'debug.log'))).toBe(false);
    expect(fs.existsSync(path.join(o, 'workspace', 'secret'))).toBe(false);
    const flag = await rbp(['build', app, '--out', out(), '--env', 'FROM_PROJECT=from-flag']);
    expect(flag.stdout).toContain('build saw FROM_PROJECT=from-flag');
  });

  it('schema 0.1: [build] include and [[build.env]]; --descriptor names another file', async () => {
    const app = webApp({ 'src/index.js': 'x', 'other.txt': 'x' });
    const desc = path.join(tmpDir(), 'p.toml');
    fs.writeFileSync(desc, '[project]\nid = "x"\n[build]\ninclude = ["src/", ".bp/"]\n[[build.env]]\nname = "FROM_PROJECT"\nvalue = "v01"\n');
    const o = out();
    const r = await rbp(['build', app, '--out', o, '--descriptor', desc, ...bpArgs('a')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('build saw FROM_PROJECT=v01');
    expect(fs.existsSync(path.join(o, 'workspace', 'src', 'index.js'))).toBe(true);
    expect(fs.existsSync(path.join(o, 'workspace', 'other.txt'))).toBe(false);
  });

  it('refuses include with exclude, and a bad env name, without echoing values', async () => {
    const app = webApp({ 'project.toml': '[build]\ninclude = ["a"]\nexclude = ["b"]\n' });
    const r = await rbp(['detect', app, ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('A project descriptor may have include or exclude, not both');
    fs.writeFileSync(path.join(app, 'project.toml'), '[[build.env]]\nname = "BAD-NAME"\nvalue = "s3cret-value"\n');
    const bad = await rbp(['detect', app, ...bpArgs('a')]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('Seen: [[build.env]] name: "BAD-NAME"');
    expect(bad.all).not.toContain('s3cret-value');
    fs.writeFileSync(path.join(app, 'project.toml'), '[[build.env]]\nname = "OK"\nvalue = "s3cret-value\n');
    const broken = await rbp(['detect', app, ...bpArgs('a')]);
    expect(broken.stderr).toContain('platform/project-toml/invalid');
    expect(broken.all).not.toContain('s3cret-value');
  });
});

describe('--env-file and --env on the command line', () => {
  it("rbp reads --env-file itself: its variables are the app's, never rbp's own settings", async () => {
    const app = webApp({}, 'echo "app_level=$(cat "$CNB_PLATFORM_DIR/env/RBP_LOG_LEVEL")"');
    const f = path.join(tmpDir(), 'app.env');
    fs.writeFileSync(f, 'RBP_LOG_LEVEL="verbose" # for the app\nMULTI="a\nb"\n');
    const r = await rbp(['build', app, '--out', out(), '--env-file', f, ...bpArgs('a')]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('app_level=verbose');
    // Had the file been loaded into rbp's environment (as node --env-file would), rbp would log at debug level.
    expect(r.stdout).not.toContain('  . ');
  });

  it("a missing --env-file is rbp's own clear error, through the installed bin too (Node.js 20 must not read it)", async () => {
    const missing = path.join(tmpDir(), 'nope.env');
    const r = await rbp(['detect', scriptedApp({}), '--env-file', missing, ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('(error id: platform/env-file/not-found)');
    expect(r.all).not.toContain('node: ');
    // As `rbp ...` runs it: through the bundle's shebang.
    const bin = await execa(RBP, ['detect', scriptedApp({}), '--env-file', missing, ...bpArgs('a')], { reject: false, all: true, env: { NO_COLOR: '1' } });
    expect(bin.exitCode).toBe(2);
    expect(bin.all).toContain('(error id: platform/env-file/not-found)');
  });

  it('an error about --env-file or --env shows no value', async () => {
    const f = path.join(tmpDir(), 'k.env');
    fs.writeFileSync(f, 'KEY=-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n');
    const r = await rbp(['detect', scriptedApp({}), '--env-file', f, ...bpArgs('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${f}:2`);
    expect(r.all).not.toContain('MIIEvQ');
    const c = await rbp(['detect', scriptedApp({}), '--env', 'API_TOKEN:tok-very-secret', ...bpArgs('a')]);
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toContain('"API_TOKEN"');
    expect(c.all).not.toContain('tok-very-secret');
  });
});
