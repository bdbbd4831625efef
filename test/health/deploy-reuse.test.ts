/**
 * rbp deploy reuses the build OUT holds when nothing changed since it was made (lib/platform/
 * build-reuse.ts), and builds again, saying why, when anything it was made from changed:
 * the app's files, its variables, the buildpacks, the options, or OUT itself (an app that wrote into
 * its workspace gets a fresh one, as from an image). Real deploys through the test's node-server
 * buildpack (a real Node.js HTTP server), each answering its health check.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appWith, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, BUILDPACKS } from '../lifecycle/helpers.ts';

const SERVER = "require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '0.0.0.0');\n";
const NOTHING_CHANGED = /- nothing changed since the build of \S+: the app's files, its variables, the buildpacks, rbp and the build options are the same/;

/** A deploy target: an app, its OUT, a port; `deploy` runs `rbp deploy --check` with more flags. */
async function target(files: Record<string, string> = { 'package.json': '{ "private": true }\n', 'server.js': SERVER }, buildpack = bp('node-server')) {
  const app = appWith(files);
  const out = path.join(tmpDir('rbp-reuse-'), 'out');
  const port = await freePort();
  const deploy = async (...extra: string[]) => {
    const r = await rbp(['deploy', app, '--buildpack', buildpack, '--out', out, '--port', String(port), '--check', ...extra]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    // (under --json the log is on stderr)
    expect(r.stdout + r.stderr).toContain(`- deployed: http://127.0.0.1:${port}/ answers`);
    return { ...r, reused: NOTHING_CHANGED.test(r.stdout), built: r.stdout.includes('## Detect') };
  };
  return { app, out, port, deploy };
}

describe('rbp deploy: the last build is reused when nothing changed', () => {
  it('a second deploy of the same app runs no detect, restore, build or export, and the app answers', async () => {
    const t = await target();
    const first = await t.deploy();
    expect(first.built).toBe(true);
    expect(first.reused).toBe(false);
    const again = await t.deploy();
    expect(again.reused, again.stdout).toBe(true);
    expect(again.built).toBe(false);
    expect(again.stdout).not.toMatch(/## (Restore|Export)/);
    expect(again.stdout).toContain('- reused as it is: group test/node-server@0.0.1 (rbp deploy --rebuild builds again)');
    expect(again.stdout).toMatch(/- time: check \d+ms/);
  });

  it('--json says which build was reused', async () => {
    const t = await target();
    await t.deploy();
    const r = await t.deploy('--json');
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ exitCode: 0, group: [{ id: 'test/node-server', version: '0.0.1' }], deploy: { deployed: true } });
    expect(Date.parse(doc.reused.builtAt)).toBeGreaterThan(Date.now() - 600_000);
    expect(doc.timings.check).toBeGreaterThanOrEqual(0);
  });

  it('--rebuild and --clear-cache build again', async () => {
    const t = await target();
    await t.deploy();
    for (const flag of ['--rebuild', '--clear-cache']) {
      const r = await t.deploy(flag);
      expect(r.built, `${flag}: ${r.stdout}`).toBe(true);
      expect(r.reused).toBe(false);
    }
    // --rebuild's build is recorded too: the next deploy reuses it.
    expect((await t.deploy()).reused).toBe(true);
  });

  it('an OUT that rbp build made is built again by the first deploy (only a deploy records what it built from)', async () => {
    const t = await target();
    const b = await rbp(['build', t.app, '--buildpack', bp('node-server'), '--out', t.out]);
    expect(b.exitCode, b.stderr).toBe(0);
    expect(fs.existsSync(path.join(t.out, '.rbp-reuse.json'))).toBe(false);
    const r = await t.deploy();
    expect(r.built).toBe(true);
    expect(r.stdout).not.toContain('- building:');
  });
});

describe('rbp deploy builds again, saying why, when anything the build was made from changed', () => {
  const why = (stdout: string) => /^- building: (.*)$/m.exec(stdout)?.[1];

  it("the app's files: one rewritten with the same size, one added", async () => {
    const t = await target();
    await t.deploy();
    const file = path.join(t.app, 'server.js');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace("'ok'", "'OK'"));
    // Its time set apart from the build's, as an edit a second later would leave it.
    const later = new Date(Date.now() - 1000);
    fs.utimesSync(file, later, later);
    const r = await t.deploy();
    expect(r.built).toBe(true);
    expect(why(r.stdout)).toBe("the app's files changed since the last build");
    expect((await t.deploy()).reused).toBe(true);
    fs.writeFileSync(path.join(t.app, 'notes.txt'), 'x');
    expect(why((await t.deploy()).stdout)).toBe("the app's files changed since the last build");
  });

  it('a file whose time is too recent (or ahead of the clock) is not trusted: no reuse', async () => {
    const t = await target();
    await t.deploy();
    const ahead = new Date(Date.now() + 3_600_000);
    fs.utimesSync(path.join(t.app, 'package.json'), ahead, ahead);
    expect(why((await t.deploy()).stdout)).toBe("the app's files changed since the last build");
    expect(why((await t.deploy()).stdout)).toBe("the app's files changed since the last build");
  });

  it('project.toml excludes a file: changing it does not make a build', async () => {
    const t = await target({
      'package.json': '{ "private": true }\n',
      'server.js': SERVER,
      'project.toml': '[_]\nschema-version = "0.2"\n\n[io.buildpacks]\nexclude = ["notes"]\n',
      'notes/todo.txt': 'a',
    });
    await t.deploy();
    fs.writeFileSync(path.join(t.app, 'notes', 'todo.txt'), 'b and more');
    expect((await t.deploy()).reused).toBe(true);
  });

  it("the app's variables (their values are not stored)", async () => {
    const t = await target();
    await t.deploy('--env', 'API_TOKEN=s3cr3t-value-1');
    expect((await t.deploy('--env', 'API_TOKEN=s3cr3t-value-1')).reused).toBe(true);
    expect(fs.readFileSync(path.join(t.out, '.rbp-reuse.json'), 'utf8')).not.toContain('s3cr3t');
    const r = await t.deploy('--env', 'API_TOKEN=s3cr3t-value-2');
    expect(why(r.stdout)).toBe("the app's variables changed since the last build");
    expect(why((await t.deploy()).stdout)).toBe("the app's variables changed since the last build");
  });

  it('the options: the instance size', async () => {
    const t = await target();
    await t.deploy();
    expect(why((await t.deploy('--instance', 'M')).stdout)).toBe('rbp, its build environment, the bindings or the build options changed since the last build');
  });

  it("a binding's files", async () => {
    const t = await target();
    const binding = path.join(tmpDir('rbp-reuse-binding-'), 'db');
    fs.mkdirSync(binding);
    fs.writeFileSync(path.join(binding, 'type'), 'postgresql');
    fs.writeFileSync(path.join(binding, 'password'), 'one');
    await t.deploy('--binding', binding);
    expect((await t.deploy('--binding', binding)).reused).toBe(true);
    fs.writeFileSync(path.join(binding, 'password'), 'two, longer');
    expect(why((await t.deploy('--binding', binding)).stdout)).toBe(
      'rbp, its build environment, the bindings or the build options changed since the last build',
    );
  });

  it('the buildpack: a file of its folder changed', async () => {
    const own = path.join(tmpDir('rbp-reuse-bp-'), 'node-server');
    fs.cpSync(bp('node-server'), own, { recursive: true });
    const t = await target(undefined, own);
    await t.deploy();
    fs.appendFileSync(path.join(own, 'bin', 'build'), '\n# changed\n');
    const r = await t.deploy();
    expect(why(r.stdout)).toBe('the buildpacks changed since the last build');
  });

  it('OUT: the app wrote into its workspace while it ran: the next deploy gives it a fresh one', async () => {
    const t = await target({
      'package.json': '{ "private": true }\n',
      'server.js': `require('node:fs').appendFileSync('ran.txt', 'x');\n${SERVER}`,
    });
    await t.deploy();
    const r = await t.deploy();
    expect(why(r.stdout)).toMatch(/^OUT changed after its build \(the app wrote into its workspace/);
    // Written once, by this deploy's start, into the new build's workspace.
    expect(fs.readFileSync(path.join(t.out, 'workspace', 'ran.txt'), 'utf8')).toBe('x');
  });

  it('OUT: a file of the workspace rewritten in place, with the same size', async () => {
    const t = await target();
    await t.deploy();
    const file = path.join(t.out, 'workspace', 'server.js');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace("'ok'", "'OK'"));
    expect(why((await t.deploy()).stdout)).toMatch(/^OUT changed after its build/);
  });

  it('OUT: a file added to a folder of its layers', async () => {
    const t = await target();
    await t.deploy();
    fs.writeFileSync(path.join(t.out, 'layers', 'config', 'added-by-hand'), 'x');
    expect(why((await t.deploy()).stdout)).toMatch(/^OUT changed after its build/);
  });
});

// The fixture app the http-server tests use: still served from a reused build.
it('a reused build of fixtures/buildpacks/apps/http-server answers on its health-check paths', async () => {
  const app = path.join(BUILDPACKS, 'apps', 'http-server');
  const out = path.join(tmpDir('rbp-reuse-'), 'out');
  const port = await freePort();
  const args = ['deploy', app, '--buildpack', bp('node-server'), '--out', out, '--port', String(port), '--check', '--env', 'CC_HEALTH_CHECK_PATH=/ok'];
  expect((await rbp(args)).exitCode).toBe(0);
  const r = await rbp(args);
  expect(r.exitCode, r.stdout).toBe(0);
  expect(r.stdout).toMatch(NOTHING_CHANGED);
  expect(r.stdout).toContain('Response from GET /ok is 200');
});
