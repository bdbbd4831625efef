/**
 * Unpacking a verified artifact into a directory: tar.gz by the system `tar` when there is one (much
 * faster on big trees), else by the `tar` package; tar.xz through the system `xz` (the `tar` package
 * has no xz decoder) into the same extractor; zip with the system `unzip`. A single-binary artifact
 * ("none") is copied to its `bin` path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { execa } from 'execa';
import * as tar from 'tar';
import { writeFailureCode } from '../disk.ts';
import { UserError } from '../errors.ts';
import type { DependencySpec } from './catalog.ts';
import { operatorVariable } from './operator.ts';
import { findOnPath } from '../fsx.ts';

export type UnpackSpec = Pick<DependencySpec, 'id' | 'version' | 'archive' | 'stripComponents' | 'bin'>;

/** Whether `name` is an executable on PATH. */
export function commandExists(name: string, pathVar: string = process.env.PATH ?? ''): boolean {
  return findOnPath(name, pathVar) !== undefined;
}

function requireCommand(name: string, spec: UnpackSpec): void {
  if (commandExists(name)) return;
  throw new UserError({
    id: 'deps/unpack-tool-missing',
    title: `${spec.id} ${spec.version} is a ${spec.archive} archive and \`${name}\` is not installed`,
    seen: { what: 'PATH', value: process.env.PATH ?? '' },
    rule: `${spec.archive} archives are unpacked with \`${name}\` from the build image`,
    fix: `add ${name} to the build image, or provide ${spec.id} with ${operatorVariable(spec.id)}=<path>`,
  });
}

/** Moves what lies `strip` levels below `from` into `to`, as tar's --strip-components would. */
function moveStripped(from: string, to: string, strip: number): void {
  let level = [from];
  for (let i = 0; i < strip; i++) {
    level = level.flatMap((d) =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(d, e.name)),
    );
  }
  for (const dir of level) {
    for (const name of fs.readdirSync(dir)) {
      const target = path.join(to, name);
      if (fs.existsSync(target)) fs.cpSync(path.join(dir, name), target, { recursive: true, force: true, verbatimSymlinks: true });
      else fs.renameSync(path.join(dir, name), target);
    }
  }
}

/**
 * Unpacks, turning a broken archive (one whose checksum matched but whose contents are damaged: a
 * bad mirror entry or a publisher's mistake) into one clear error instead of the unpacker's trace.
 */
export async function unpack(file: string, dest: string, spec: UnpackSpec): Promise<void> {
  try {
    await unpackArchive(file, dest, spec);
  } catch (e) {
    // A full or read-only disk is no damaged archive: the caller names the folder (lib/disk.ts).
    if (e instanceof UserError || writeFailureCode(e)) throw e;
    const text = String((e as { stderr?: unknown }).stderr || (e as Error).message || e);
    throw new UserError({
      id: 'deps/unpack-failed',
      title: `${spec.id} ${spec.version} could not be unpacked`,
      seen: { what: `${spec.id} ${spec.version} (${spec.archive})`, where: path.basename(file) },
      rule: 'A downloaded tool is a valid archive of its kind; this one matched its checksum but does not unpack, so the source (mirror or publisher) holds a damaged file.',
      fix: `Replace the file at its source (RBP_DEPENDENCY_MIRROR, if set), or provide ${spec.id} with ${operatorVariable(spec.id)}=<path>.`,
      details: text
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .slice(0, 5),
    });
  }
}

/** The `tar` package, where a file it cannot write is an error (it would warn and go on without the file). */
async function tarExtract(cwd: string, strip: number, run: (options: tar.TarOptionsWithAliasesAsyncNoFile) => Promise<unknown>): Promise<void> {
  let failed: Error | undefined;
  const onwarn = (_code: string, _message: string, data: unknown) => {
    if (data instanceof Error && writeFailureCode(data)) failed ??= data;
  };
  await run({ cwd, strip, preserveOwner: false, onwarn });
  if (failed) throw failed;
}

/** The children speak the C locale: their messages are read (writeFailureCode). */
const C_LOCALE = { stdin: 'ignore', env: { LC_ALL: 'C' } } as const;

async function unpackArchive(file: string, dest: string, spec: UnpackSpec): Promise<void> {
  fs.mkdirSync(dest, { recursive: true });
  const strip = spec.stripComponents;
  switch (spec.archive) {
    case 'tar.gz':
      if (commandExists('tar')) {
        // --no-same-owner: as root, GNU tar would otherwise keep the archive's uid/gid (node-tar's preserveOwner: false).
        await execa('tar', ['-xzf', file, '-C', dest, `--strip-components=${strip}`, '--no-same-owner'], C_LOCALE);
        return;
      }
      await tarExtract(dest, strip, (options) => tar.x({ ...options, file }));
      return;
    case 'tar.xz': {
      requireCommand('xz', spec);
      // stdout streams into the extractor; stderr is kept for the error message.
      const xz = execa('xz', ['-dc', file], { ...C_LOCALE, buffer: { stdout: false } });
      await tarExtract(dest, strip, (options) => Promise.all([pipeline(xz.stdout, tar.x(options)), xz]));
      return;
    }
    case 'zip': {
      requireCommand('unzip', spec);
      const tmp = fs.mkdtempSync(path.join(dest, '.unzip-'));
      try {
        await execa('unzip', ['-q', '-o', file, '-d', tmp], C_LOCALE);
        moveStripped(tmp, dest, strip);
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
      return;
    }
    case 'none': {
      const target = path.join(dest, spec.bin);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(file, target);
      fs.chmodSync(target, 0o755);
      return;
    }
  }
}
