/**
 * Private git dependencies over SSH (contract, node rule 10), for real: an OpenSSH server started on
 * loopback serves a bare git repository holding `git-greeting` to one key only. The key reaches the
 * build as a binding of type ssh-key (SERVICE_BINDING_ROOT, see buildpacks/node/src/ssh-key.ts);
 * fixtures/node-git-ssh, pointed at that repository, is built and served. Without the binding the
 * build fails with node/ssh-key/refused. The private key is never in the log, the output or the cache.
 * Needs sshd (apt-get install openssh-server) and root (for sshd's privilege separation); skipped
 * with a warning otherwise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { requirement } from '../helpers/requirement.ts';
import { cacheFrom, httpChecks, seedCache, serve } from './driver.ts';

const SSHD = '/usr/sbin/sshd';
const sshd_ = requirement(fs.existsSync(SSHD) && process.getuid?.() === 0, {
  what: `${SSHD}, run as root`,
  how: 'apt-get install openssh-server; sshd’s privilege separation needs root',
  who: 'git-ssh.test.ts',
});

let work: string;
let seed: string;
let sshd: ChildProcess | undefined;
let sshdLog = '';
let repoUrl: string;
let keyBody: string;
let bindings: string;

async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const net = await import('node:net');
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (sshd?.exitCode !== null) throw new Error(`sshd exited:\n${sshdLog}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sshd did not listen within ${timeoutMs}ms:\n${sshdLog}`);
}

/** sshd on 127.0.0.1:<port> accepting one client key; a bare repository holding git-greeting. */
async function startGitServer(): Promise<void> {
  const dir = path.join(work, 'sshd');
  fs.mkdirSync(dir, { recursive: true });
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'rbp-test-deploy-key', '-f', path.join(dir, 'client_key')]);
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_key')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      '',
    ].join('\n'),
  );
  // sshd's privilege separation directory (the Debian package creates it at boot, not at install).
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  sshd = spawn(SSHD, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: ['ignore', 'pipe', 'pipe'] });
  sshd.stdout!.on('data', (d: Buffer | string) => (sshdLog += d.toString()));
  sshd.stderr!.on('data', (d: Buffer | string) => (sshdLog += d.toString()));
  await waitForPort(port);

  const src = path.join(work, 'greeting-src');
  fs.mkdirSync(src);
  fs.writeFileSync(path.join(src, 'package.json'), JSON.stringify({ name: 'git-greeting', version: '1.0.0', main: 'index.js', license: 'MIT' }));
  fs.writeFileSync(path.join(src, 'index.js'), 'module.exports = (name) => `hello ${name} from git-greeting over ssh`;\n');
  const git = (args: string[], cwd: string) =>
    execa('git', args, {
      cwd,
      env: { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    });
  await git(['init', '-q', '-b', 'main'], src);
  await git(['add', '.'], src);
  await git(['commit', '-q', '-m', 'greeting'], src);
  const bare = path.join(work, 'greeting.git');
  await git(['clone', '-q', '--bare', src, bare], work);
  repoUrl = `git+ssh://${os.userInfo().username}@127.0.0.1:${port}${bare}`;

  const key = fs.readFileSync(path.join(dir, 'client_key'), 'utf8');
  keyBody = key.split('\n')[1]!; // a line of the key's body: what must never be copied anywhere
  bindings = path.join(work, 'bindings');
  fs.mkdirSync(path.join(bindings, 'git-deploy'), { recursive: true });
  fs.writeFileSync(path.join(bindings, 'git-deploy', 'type'), 'ssh-key\n');
  fs.writeFileSync(path.join(bindings, 'git-deploy', 'ssh-privatekey'), key, { mode: 0o644 }); // ssh would refuse this mode: the buildpack copies it
}

beforeAll(async () => {
  if (sshd_.skip) return;
  sshd_.value();
  work = tmpDir('rbp-node-gitssh-');
  [seed] = await Promise.all([seedCache(work), startGitServer()]);
}, 300_000);

afterAll(async () => {
  if (sshd?.exitCode === null) {
    const gone = new Promise((r) => sshd!.once('exit', r));
    sshd.kill('SIGTERM');
    await gone;
  }
  if (work) await fs.promises.rm(work, { recursive: true, force: true });
}, 60_000);

function appWithGitDependency(): string {
  const app = copyFixture('node-git-ssh');
  const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'));
  pkg.dependencies['git-greeting'] = repoUrl;
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg, null, 2));
  return app;
}

describe('fixtures/node-git-ssh: a git dependency over SSH with a private key', () => {
  it.skipIf(sshd_.skip)('the ssh-key binding lets npm fetch it; the app serves it; the key is kept nowhere', async () => {
    const app = appWithGitDependency();
    const dir = path.join(work, 'with-key');
    const out = path.join(dir, 'out');
    const cache = await cacheFrom(seed, path.join(dir, 'cache'));
    const r = await rbp(['build', app, '--out', out, '--type', 'node', '--cache', cache, '--binding', path.join(bindings, 'git-deploy')]);
    expect(r.exitCode, `${r.all}\nsshd:\n${sshdLog}`).toBe(0);
    expect(r.all).toContain('git over SSH uses the private key of binding git-deploy (type ssh-key), for the install only');
    expect(sshdLog).toMatch(/Accepted publickey for \S+ from 127\.0\.0\.1/);
    expect(fs.readFileSync(path.join(out, 'workspace', 'node_modules', 'git-greeting', 'index.js'), 'utf8')).toContain('over ssh');

    expect(r.all).not.toContain(keyBody);
    const hits = await execa('grep', ['-rlaF', '-e', keyBody, out, cache, app], { reject: false });
    expect([0, 1], hits.stderr).toContain(hits.exitCode);
    expect(hits.stdout).toBe('');
    // Nothing was written to the build user's ~/.ssh (the host key went to a throw-away known_hosts).
    expect(
      fs.existsSync(path.join(os.homedir(), '.ssh', 'known_hosts')) &&
        fs.readFileSync(path.join(os.homedir(), '.ssh', 'known_hosts'), 'utf8').includes('127.0.0.1'),
    ).toBe(false);

    const served = await serve(out, {}, (p) => httpChecks(p, [{ path: '/', status: 200, contains: 'hello visitor from git-greeting over ssh' }]));
    expect(served.signal, served.output).toBeNull();
  });

  it.skipIf(sshd_.skip)('without the binding: fails with node/ssh-key/refused, saying how to add a key', async () => {
    const app = appWithGitDependency();
    const dir = path.join(work, 'without-key');
    const cache = await cacheFrom(seed, path.join(dir, 'cache'));
    const r = await rbp(['build', app, '--out', path.join(dir, 'out'), '--type', 'node', '--cache', cache], { env: { HOME: dir } });
    expect(r.exitCode, r.all).not.toBe(0);
    expect(r.all).toContain('! ERROR A git dependency over SSH needs a private key, and the build has none');
    expect(r.all).toContain('holding a file "type" with "ssh-key" and the key in "ssh-privatekey"');
    expect(r.all).toContain('(error id: node/ssh-key/refused)');
    expect(r.all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  });
});
