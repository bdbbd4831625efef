/**
 * Private SSH keys for git dependencies (contract, node rule 10 and "Authentication" 5: "a private
 * SSH key can be added to the application").
 *
 * The key comes in a CNB service binding, not a variable (which every process environment, the
 * app's too, would see): any directory under `$SERVICE_BINDING_ROOT` (else `<platform>/bindings`)
 * whose `type` file says `ssh-key`, holding the key in `ssh-privatekey` (as a Kubernetes
 * `kubernetes.io/ssh-auth` secret does) and optionally `known_hosts`; several bindings, several keys.
 *
 * The key is copied (0600, in a 0700 directory on a memory-backed file system where there is one,
 * lib/memory-temp.ts) and `GIT_SSH_COMMAND` points ssh at it for the install only; the copy is
 * deleted when the install ends, and one left by a killed build is swept by the next rbp (the
 * folder's name carries the pid). Host keys: the binding's `known_hosts` when it has one, else the
 * first key a host shows is accepted (`accept-new`) into a throw-away file, never ~/.ssh.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';
import { memoryTempRoot } from '../../../lib/memory-temp.ts';

export const SSH_KEY_BINDING_TYPE = 'ssh-key';
export const SSH_KEY_FILE = 'ssh-privatekey';
/** The prefix of the key copies' folder (rbp sweeps those of dead processes). */
export const SSH_TEMP_PREFIX = 'rbp-ssh-';

export interface SshKeyBinding {
  name: string;
  dir: string;
  knownHosts?: string;
}

/** `$SERVICE_BINDING_ROOT`, else `<platform>/bindings` (CNB platform spec). */
export function bindingRoot(env: Record<string, string | undefined>, platformDir: string): string {
  return env.SERVICE_BINDING_ROOT?.trim() || path.join(platformDir, 'bindings');
}

/** The bindings of type `ssh-key`, sorted by name; each checked to hold a private key. */
export function sshKeyBindings(root: string): SshKeyBinding[] {
  let names: string[];
  try {
    names = fs.readdirSync(root).sort();
  } catch {
    return [];
  }
  const out: SshKeyBinding[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    let type: string;
    try {
      type = fs.readFileSync(path.join(dir, 'type'), 'utf8').trim();
    } catch {
      continue;
    }
    if (type !== SSH_KEY_BINDING_TYPE) continue;
    const keyFile = path.join(dir, SSH_KEY_FILE);
    const key = fs.existsSync(keyFile) ? fs.readFileSync(keyFile, 'utf8') : undefined;
    if (!key || !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) {
      // The content is a secret: only say whether the file is there.
      const value = key === undefined ? `no ${SSH_KEY_FILE} file` : `${SSH_KEY_FILE} is not a PEM/OpenSSH private key`;
      throw new UserError({
        id: 'node/ssh-key/invalid',
        title: `The ssh-key binding ${name} holds no private key`,
        seen: { what: `binding ${name}`, value, where: dir },
        rule: `A binding of type ${SSH_KEY_BINDING_TYPE} holds a private SSH key in its ${SSH_KEY_FILE} file (and optionally known_hosts).`,
        fix: `Put the private key (-----BEGIN OPENSSH PRIVATE KEY----- ...) in ${path.join(dir, SSH_KEY_FILE)}, or remove the binding.`,
      });
    }
    const kh = path.join(dir, 'known_hosts');
    out.push({ name, dir, ...(fs.existsSync(kh) ? { knownHosts: kh } : {}) });
  }
  return out;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The ssh command git runs: only our keys, and host keys checked against our known_hosts file. */
export function gitSshCommand(keyFiles: string[], knownHosts: string): string {
  const options = ['IdentitiesOnly=yes', 'StrictHostKeyChecking=accept-new', `UserKnownHostsFile=${quote(knownHosts)}`];
  return ['ssh', ...keyFiles.flatMap((k) => ['-i', quote(k)]), ...options.flatMap((o) => ['-o', o])].join(' ');
}

/**
 * Runs `fn` with `GIT_SSH_COMMAND` set to use copies of the bindings' keys, then deletes the copies.
 * Without bindings, `fn` gets no variable.
 */
export async function withSshKeys<T>(bindings: SshKeyBinding[], fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  if (bindings.length === 0) return fn({});
  const dir = fs.mkdtempSync(path.join(memoryTempRoot().dir, `${SSH_TEMP_PREFIX}${process.pid}-`));
  try {
    fs.chmodSync(dir, 0o700);
    const keys = bindings.map((b, i) => {
      const file = path.join(dir, `key-${i}`);
      // OpenSSH refuses a key file without its final newline, and one others may read.
      const key = fs.readFileSync(path.join(b.dir, SSH_KEY_FILE), 'utf8');
      fs.writeFileSync(file, key.endsWith('\n') ? key : `${key}\n`, { mode: 0o600 });
      return file;
    });
    const knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, bindings.map((b) => (b.knownHosts ? fs.readFileSync(b.knownHosts, 'utf8').replace(/\n?$/, '\n') : '')).join(''), {
      mode: 0o600,
    });
    return await fn({ GIT_SSH_COMMAND: gitSshCommand(keys, knownHosts) });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What git prints when ssh could not log in, or could not trust the host. */
export function sshRefused(output: string): boolean {
  return /Permission denied \(publickey|Host key verification failed|Could not read from remote repository/.test(output);
}

export function sshRefusedError(bindings: SshKeyBinding[], root: string, command: string): UserError {
  const none = bindings.length === 0;
  return new UserError({
    id: 'node/ssh-key/refused',
    title: none
      ? 'A git dependency over SSH needs a private key, and the build has none'
      : `The git host refused the SSH key of binding ${bindings.map((b) => b.name).join(', ')}`,
    seen: { what: 'bindings of type ssh-key', value: none ? 'none' : bindings.map((b) => b.name).join(', '), where: root },
    rule: `Private git dependencies are fetched with a private SSH key, given to the build as a binding of type ${SSH_KEY_BINDING_TYPE} (file ${SSH_KEY_FILE}, optionally known_hosts).`,
    fix: none
      ? `Add a binding directory under ${root} holding a file "type" with "${SSH_KEY_BINDING_TYPE}" and the key in "${SSH_KEY_FILE}"; give its public key read access to the repository.`
      : "Give the key's public half read access to the repository (a deploy key), and check the binding's known_hosts if it has one.",
    details: [`command: ${command}`],
  });
}
