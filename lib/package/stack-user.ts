/**
 * The CNB user of rbp's stack (1000:1000, `cnb`, home /home/cnb): the build user of the builder, and
 * the owner of what an app image's /layers and /workspace hold, as the lifecycle's exporter writes
 * them. The creator looks the user up (Go's user.LookupId): Docker and Kubernetes, unlike podman,
 * add no /etc/passwd line for an unknown user, so the images carry their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import type { ReadImage } from './oci-layout.ts';

export const CNB_USER = { name: 'cnb', uid: 1000, gid: 1000, home: '/home/cnb' } as const;

/** The text of each of `files` (`etc/passwd`) in the image's merged file system; absent ones are left out. */
export async function readImageFiles(image: ReadImage, files: string[]): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const removed = new Set<string>();
  // From the top layer down: the first layer that holds (or whites out) a file decides it.
  for (const layer of [...image.layerFiles].reverse()) {
    const here: Record<string, string> = {};
    await tar.t({
      file: layer,
      onReadEntry: (entry) => {
        const name = entry.path.replace(/^\.?\//, '');
        const dir = path.posix.dirname(name);
        const base = path.posix.basename(name);
        if (base.startsWith('.wh.')) {
          const target = path.posix.join(dir, base.slice('.wh.'.length));
          if (files.includes(target) && !(target in found)) removed.add(target);
        }
        if (!files.includes(name) || name in found || removed.has(name) || entry.type !== 'File') {
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => (here[name] = Buffer.concat(chunks).toString('utf8')));
      },
    });
    Object.assign(found, here);
    if (files.every((f) => f in found || removed.has(f))) break;
  }
  return found;
}

/** passwd and group with the CNB user and group added when the image has no entry for their ids. */
export function withCnbUser(passwd: string, group: string): { passwd?: string; group?: string } {
  const hasId = (text: string, id: number) => text.split('\n').some((l) => l.split(':')[2] === String(id));
  const add = (text: string, line: string) => `${text}${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`;
  return {
    ...(hasId(passwd, CNB_USER.uid) ? {} : { passwd: add(passwd, `${CNB_USER.name}:x:${CNB_USER.uid}:${CNB_USER.gid}:CNB user:${CNB_USER.home}:/bin/sh`) }),
    ...(hasId(group, CNB_USER.gid) ? {} : { group: add(group, `${CNB_USER.name}:x:${CNB_USER.gid}:`) }),
  };
}

/**
 * Stages the layer that gives an image the CNB user, under `root`: etc/passwd, etc/group (when they
 * change) and the user's home. Returns undefined when the image already has both entries.
 */
export async function stageCnbUser(image: ReadImage, root: string): Promise<string | undefined> {
  const files = await readImageFiles(image, ['etc/passwd', 'etc/group']);
  const changed = withCnbUser(files['etc/passwd'] ?? '', files['etc/group'] ?? '');
  if (!changed.passwd && !changed.group) return undefined;
  fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
  if (changed.passwd) fs.writeFileSync(path.join(root, 'etc', 'passwd'), changed.passwd, { mode: 0o644 });
  if (changed.group) fs.writeFileSync(path.join(root, 'etc', 'group'), changed.group, { mode: 0o644 });
  fs.mkdirSync(path.join(root, CNB_USER.home.slice(1)), { recursive: true });
  return root;
}

/** Layer entries owned by the CNB user: its home. */
export const cnbHomeOwner = (rel: string) =>
  rel === CNB_USER.home.slice(1) || rel.startsWith(`${CNB_USER.home.slice(1)}/`) ? { uid: CNB_USER.uid, gid: CNB_USER.gid } : undefined;
