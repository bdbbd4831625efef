import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUserError, type UserError } from '../../lib/errors.ts';
import { planChain } from '../../lib/launch/request-flow/chain.ts';
import { tmpDir } from '../helpers/rbp.ts';

const CUSTOM = 'node mw.mjs @@LISTEN_PORT@@ @@FORWARD_PORT@@';

function app(withVcl = false): string {
  const dir = tmpDir('rbp-chain-');
  if (withVcl) {
    fs.mkdirSync(path.join(dir, '.rbp'));
    fs.writeFileSync(path.join(dir, '.rbp', 'cache.vcl'), 'vcl 4.1;\n');
  }
  return dir;
}

function rendered(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return renderUserError((e as UserError).data);
  }
  throw new Error('no error');
}

describe('activation by presence', () => {
  it('nothing active: no chain', () => {
    expect(planChain({}, app())).toEqual({ block: false, middlewares: [], skipped: [] });
  });
  it('each middleware by its variable or file', () => {
    expect(planChain({ ACCESSPROXY_CHALLENGE_SECRET: 's' }, app()).middlewares).toEqual(['accessproxy']);
    expect(planChain({ CC_REDIRECTOR_PROJECT_KEY: 'k' }, app()).middlewares).toEqual(['redirector']);
    expect(planChain({}, app(true)).middlewares).toEqual(['cache']);
    const dir = app();
    fs.writeFileSync(path.join(dir, 'my.vcl'), 'vcl 4.1;\n');
    expect(planChain({ CC_CACHE_FILE: 'my.vcl' }, dir).middlewares).toEqual(['cache']);
    expect(planChain({ CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: CUSTOM }, app()).middlewares).toEqual(['custom']);
  });
  it('CC_REQUEST_FLOW_CUSTOM alone does not activate custom', () => {
    expect(planChain({ CC_REQUEST_FLOW_CUSTOM: CUSTOM }, app()).middlewares).toEqual([]);
  });
  it('all active together, default order from the public port inward', () => {
    const env = { ACCESSPROXY_CHALLENGE_SECRET: 's', CC_REDIRECTOR_PROJECT_KEY: 'k', CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: CUSTOM };
    expect(planChain(env, app(true)).middlewares).toEqual(['accessproxy', 'custom', 'redirector', 'cache']);
    expect(planChain({ ...env, CC_REQUEST_FLOW: undefined }, app(true)).middlewares).toEqual(['accessproxy', 'redirector', 'cache']);
  });
});

describe('order', () => {
  const env = { CC_REDIRECTOR_PROJECT_KEY: 'k', CC_REQUEST_FLOW_CUSTOM: CUSTOM };
  it('CC_REQUEST_FLOW sets the order, both ways', () => {
    expect(planChain({ ...env, CC_REQUEST_FLOW: 'redirector,cache' }, app(true)).middlewares).toEqual(['redirector', 'cache']);
    expect(planChain({ ...env, CC_REQUEST_FLOW: 'cache,redirector' }, app(true)).middlewares).toEqual(['cache', 'redirector']);
    expect(planChain({ ...env, CC_REQUEST_FLOW: ' cache , custom ' }, app(true)).middlewares).toEqual(['cache', 'custom', 'redirector']);
  });
  it('active but unnamed middlewares follow the named ones in the default order', () => {
    expect(planChain({ ...env, CC_REQUEST_FLOW: 'custom' }, app(true)).middlewares).toEqual(['custom', 'redirector', 'cache']);
  });
  it('the access proxy is always first', () => {
    expect(planChain({ ...env, ACCESSPROXY_CHALLENGE_SECRET: 's', CC_REQUEST_FLOW: 'cache' }, app(true)).middlewares).toEqual([
      'accessproxy',
      'cache',
      'redirector',
    ]);
  });
  it('block: nothing started, active middlewares reported as skipped', () => {
    expect(planChain({ ...env, CC_REQUEST_FLOW: 'block' }, app(true))).toEqual({ block: true, middlewares: [], skipped: ['redirector', 'cache'] });
  });
});

describe('errors', () => {
  it('a named middleware without its activation', () => {
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'redirector,cache' }, app(true)))).toMatchInlineSnapshot(`
      "! ERROR CC_REQUEST_FLOW names redirector, which is not active
      !
      ! Seen: CC_REQUEST_FLOW: "redirector,cache" (the application environment)
      ! Rule: A middleware in CC_REQUEST_FLOW must be activated: redirector by CC_REDIRECTOR_PROJECT_KEY.
      ! Fix:  Set CC_REDIRECTOR_PROJECT_KEY, or remove redirector from CC_REQUEST_FLOW.
      ! (error id: request-flow/not-active)"
    `);
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'cache' }, app()))).toContain('cache by CC_CACHE_FILE or the file .rbp/cache.vcl');
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'custom' }, app()))).toContain('request-flow/not-active');
  });
  it('an unknown item', () => {
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'cache,varnish' }, app(true)))).toMatchInlineSnapshot(`
      "! ERROR Unknown item in CC_REQUEST_FLOW
      !
      ! Seen: CC_REQUEST_FLOW: "cache,varnish" (the application environment)
      ! Rule: CC_REQUEST_FLOW is a comma-separated list of redirector, cache, custom, or the single value block.
      ! Fix:  Remove or fix "varnish".
      ! (error id: request-flow/unknown-item)"
    `);
  });
  it('block with other items, a duplicate', () => {
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'block,cache' }, app(true)))).toContain('request-flow/block-not-alone');
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'cache,cache' }, app(true)))).toContain('request-flow/duplicate-item');
  });
  it('CC_CACHE_FILE naming a missing file', () => {
    expect(rendered(() => planChain({ CC_CACHE_FILE: 'nope.vcl' }, app()))).toContain('request-flow/cache/file/missing');
  });
  it('a custom command without its placeholders', () => {
    expect(rendered(() => planChain({ CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: 'my-proxy --port @@LISTEN_PORT@@' }, app()))).toMatchInlineSnapshot(`
      "! ERROR The custom middleware command lacks a placeholder
      !
      ! Seen: CC_REQUEST_FLOW_CUSTOM: "my-proxy --port @@LISTEN_PORT@@" (the application environment)
      ! Rule: The custom middleware listens on @@LISTEN_PORT@@ and forwards to @@FORWARD_PORT@@; the launcher replaces both with the ports it allocates.
      ! Fix:  Add @@FORWARD_PORT@@ to the command, e.g. my-proxy --listen @@LISTEN_PORT@@ --to 127.0.0.1:@@FORWARD_PORT@@.
      ! (error id: request-flow/custom/placeholders)"
    `);
  });
});
