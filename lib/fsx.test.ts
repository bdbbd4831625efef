import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkTree } from './fsx.ts';

describe('linkTree', () => {
  it('gives every file a second name (same inode, nothing copied), folders made anew, symlinks as written', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-fsx-'));
    const from = path.join(root, 'vendor');
    fs.mkdirSync(path.join(from, 'pkg/src'), { recursive: true });
    fs.writeFileSync(path.join(from, 'autoload.php'), '<?php');
    fs.writeFileSync(path.join(from, 'pkg/src/A.php'), '<?php class A {}');
    fs.chmodSync(path.join(from, 'pkg'), 0o750);
    fs.mkdirSync(path.join(from, 'bin'));
    fs.symlinkSync('../pkg/src/A.php', path.join(from, 'bin/a'));
    const to = path.join(root, 'cache', 'vendor');
    fs.mkdirSync(path.dirname(to));
    linkTree(from, to);
    for (const f of ['autoload.php', 'pkg/src/A.php']) expect(fs.statSync(path.join(to, f)).ino).toBe(fs.statSync(path.join(from, f)).ino);
    expect(fs.statSync(path.join(to, 'pkg')).ino).not.toBe(fs.statSync(path.join(from, 'pkg')).ino);
    expect(fs.statSync(path.join(to, 'pkg')).mode & 0o777).toBe(0o750);
    expect(fs.readlinkSync(path.join(to, 'bin/a'))).toBe('../pkg/src/A.php');
    // Removing one tree leaves the other whole.
    fs.rmSync(from, { recursive: true });
    expect(fs.readFileSync(path.join(to, 'bin/a'), 'utf8')).toBe('<?php class A {}');
  });
});
