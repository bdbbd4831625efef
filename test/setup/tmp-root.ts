/**
 * One temporary folder per test run (vitest globalSetup): TMPDIR points into it for the run, so every
 * folder a test, rbp or a tool makes with os.tmpdir() lands there, and it is removed when the run ends.
 * The reference-lifecycle and builder tests leave hundreds of MB each; without this they pile up in /tmp.
 * The name is lowercase hex: podman refuses image paths with capitals (test/package/podman.ts).
 * The run's builds share one download cache there too.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = path.join(os.tmpdir(), `rbp-tests-${crypto.randomBytes(6).toString('hex')}`);
  fs.mkdirSync(root, { mode: 0o755 });
  // Tests run as root and chown some folders to the build user 1000 (podman), who must reach them.
  fs.chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  // The shared download cache of the run's builds (lib/deps/download-cache.ts): each tool version is
  // downloaded once per run, never into the machine's own ~/.cache/rbp/downloads.
  process.env.RBP_DOWNLOAD_CACHE = path.join(root, 'downloads');
  // rbp's own folders (deploy OUTs, its records of OUTs for rbp prune): the run's, not the machine's.
  process.env.XDG_CACHE_HOME = path.join(root, 'xdg-cache');
  return () => {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
