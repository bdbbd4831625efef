import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUserError, UserError } from '../../../lib/errors.ts';
import { memoryTempRoot } from '../../../lib/memory-temp.ts';
import { bindingRoot, gitSshCommand, sshKeyBindings, withSshKeys } from './ssh-key.ts';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----';

function bindings(entries: Record<string, Record<string, string>>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bindings-'));
  for (const [name, files] of Object.entries(entries)) {
    fs.mkdirSync(path.join(root, name));
    for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(root, name, f), v);
  }
  return root;
}

describe('SSH keys for git dependencies (contract, node rule 10)', () => {
  it('finds the bindings of type ssh-key under SERVICE_BINDING_ROOT, else <platform>/bindings', () => {
    expect(bindingRoot({ SERVICE_BINDING_ROOT: '/b' }, '/platform')).toBe('/b');
    expect(bindingRoot({}, '/platform')).toBe('/platform/bindings');
    const root = bindings({
      'b-deploy': { type: 'ssh-key\n', 'ssh-privatekey': KEY, known_hosts: 'git.example.com ssh-ed25519 AAAA\n' },
      'a-npmrc': { type: 'npmrc', '.npmrc': 'x' },
      'a-key': { type: 'ssh-key', 'ssh-privatekey': KEY },
    });
    expect(sshKeyBindings(root).map((b) => [b.name, b.knownHosts ? 'known_hosts' : '-'])).toEqual([
      ['a-key', '-'],
      ['b-deploy', 'known_hosts'],
    ]);
    expect(sshKeyBindings(path.join(root, 'none'))).toEqual([]);
  });

  it('refuses a binding without a private key, never showing what it holds', () => {
    const root = bindings({ deploy: { type: 'ssh-key', 'ssh-privatekey': 'ssh-ed25519 AAAAC3-public-key-by-mistake' } });
    let err: UserError | undefined;
    try {
      sshKeyBindings(root);
    } catch (e) {
      err = e as UserError;
    }
    expect(err?.data.id).toBe('node/ssh-key/invalid');
    const text = renderUserError(err!.data).replaceAll(root, '<root>');
    expect(text).not.toContain('AAAAC3');
    expect(text).toMatchInlineSnapshot(`
      "! ERROR The ssh-key binding deploy holds no private key
      !
      ! Seen: binding deploy: "ssh-privatekey is not a PEM/OpenSSH private key" (<root>/deploy)
      ! Rule: A binding of type ssh-key holds a private SSH key in its ssh-privatekey file (and optionally known_hosts).
      ! Fix:  Put the private key (-----BEGIN OPENSSH PRIVATE KEY----- ...) in <root>/deploy/ssh-privatekey, or remove the binding.
      ! (error id: node/ssh-key/invalid)"
    `);
  });

  it('gives the install a GIT_SSH_COMMAND using a 0600 copy of the key outside the app, in memory, deleted afterwards', async () => {
    const root = bindings({ deploy: { type: 'ssh-key', 'ssh-privatekey': KEY, known_hosts: 'git.example.com ssh-ed25519 AAAA' } });
    let seen: { cmd: string; key: string; mode: number; dirMode: number; knownHosts: string } | undefined;
    let dir = '';
    let dirFs = '';
    await withSshKeys(sshKeyBindings(root), async (env) => {
      const cmd = env.GIT_SSH_COMMAND!;
      const key = /-i '([^']+)'/.exec(cmd)![1]!;
      const kh = /UserKnownHostsFile='([^']+)'/.exec(cmd)![1]!;
      dir = path.dirname(key);
      dirFs = execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
      seen = {
        cmd,
        key: fs.readFileSync(key, 'utf8'),
        mode: fs.statSync(key).mode & 0o777,
        dirMode: fs.statSync(dir).mode & 0o777,
        knownHosts: fs.readFileSync(kh, 'utf8'),
      };
    });
    expect(seen!.cmd).toMatch(/^ssh -i '\/[^']+\/key-0' -o IdentitiesOnly=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile='[^']+\/known_hosts'$/);
    // On a memory-backed file system (this machine has one: test/reliability/secrets.test.ts), named with the pid for rbp's sweep.
    expect(path.basename(dir).startsWith(`rbp-ssh-${process.pid}-`)).toBe(true);
    expect(path.dirname(dir)).toBe(memoryTempRoot().dir);
    expect(dirFs).toBe('tmpfs');
    expect(seen!.key).toBe(`${KEY}\n`);
    expect(seen!.mode).toBe(0o600);
    expect(seen!.dirMode).toBe(0o700);
    expect(seen!.knownHosts).toBe('git.example.com ssh-ed25519 AAAA\n');
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('deletes the key even when the install fails; no binding, no variable', async () => {
    const root = bindings({ deploy: { type: 'ssh-key', 'ssh-privatekey': KEY } });
    let dir = '';
    await expect(
      withSshKeys(sshKeyBindings(root), async (env) => {
        dir = path.dirname(/-i '([^']+)'/.exec(env.GIT_SSH_COMMAND!)![1]!);
        throw new Error('install failed');
      }),
    ).rejects.toThrow('install failed');
    expect(fs.existsSync(dir)).toBe(false);
    await withSshKeys([], async (env) => expect(env).toEqual({}));
  });

  it('quotes paths for the shell git runs the command with', () => {
    expect(gitSshCommand(["/tmp/it's/k"], '/tmp/kh')).toBe(
      `ssh -i '/tmp/it'\\''s/k' -o IdentitiesOnly=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile='/tmp/kh'`,
    );
  });
});
