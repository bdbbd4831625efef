import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfig } from './config.ts';
import { findIndex as findIndexIn } from '../../../lib/app-path.ts';
import { chooseWebroot, INDEX_FILES } from './webroot.ts';

const findIndex = (d: string) => findIndexIn(d, INDEX_FILES);

const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-webroot-'));

describe('chooseWebroot (contract, static rules 2 and 3)', () => {
  it('CC_WEBROOT wins over the auto-build folder, and says so', () => {
    const w = chooseWebroot(readConfig({ CC_WEBROOT: '/docs', CC_STATIC_AUTOBUILD_OUTDIR: 'site' }, appDir), appDir, true);
    expect(w).toEqual({ rel: 'docs', abs: path.join(appDir, 'docs'), why: 'CC_WEBROOT is set (it wins over the auto-build folder)' });
  });

  it('CC_WEBROOT may point inside the auto-build folder', () => {
    const w = chooseWebroot(readConfig({ CC_WEBROOT: '/cc_static_autobuilt/en' }, appDir), appDir, true);
    expect(w.rel).toBe('cc_static_autobuilt/en');
    expect(w.why).toContain('CC_WEBROOT');
  });

  it('without CC_WEBROOT, an auto-build serves its output folder (CC_STATIC_AUTOBUILD_OUTDIR or the default)', () => {
    expect(chooseWebroot(readConfig({}, appDir), appDir, true)).toEqual({
      rel: 'cc_static_autobuilt',
      abs: path.join(appDir, 'cc_static_autobuilt'),
      why: 'the auto-build output folder',
    });
    expect(chooseWebroot(readConfig({ CC_STATIC_AUTOBUILD_OUTDIR: '/site' }, appDir), appDir, true).rel).toBe('site');
  });

  it('without CC_WEBROOT nor auto-build, the project root; CC_WEBROOT alone is used as is', () => {
    expect(chooseWebroot(readConfig({}, appDir), appDir, false)).toEqual({ rel: '', abs: appDir, why: 'the default, the project root' });
    expect(chooseWebroot(readConfig({ CC_WEBROOT: 'public' }, appDir), appDir, false)).toMatchObject({ rel: 'public', why: 'CC_WEBROOT is set' });
  });
});

describe('findIndex', () => {
  it('finds index.html before index.htm, and ignores a folder of that name', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-index-'));
    expect(findIndex(d)).toBeUndefined();
    fs.mkdirSync(path.join(d, 'index.html'));
    expect(findIndex(d)).toBeUndefined();
    fs.writeFileSync(path.join(d, 'index.htm'), '');
    expect(findIndex(d)).toBe('index.htm');
    fs.rmdirSync(path.join(d, 'index.html'));
    fs.writeFileSync(path.join(d, 'index.html'), '');
    expect(findIndex(d)).toBe('index.html');
  });
});
