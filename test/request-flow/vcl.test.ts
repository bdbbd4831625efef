import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { renderUserError, type UserError } from '../../lib/errors.ts';
import { Logger } from '../../lib/log.ts';
import { cacheVcl } from '../../lib/launch/request-flow/activation.ts';
import { checkVcl } from '../../lib/launch/request-flow/vcl.ts';
import { describeNeeding, varnishdRequirement } from '../helpers/requirement.ts';
import { FIXTURES, tmpDir } from '../helpers/rbp.ts';

const varnishd = varnishdRequirement('the VCL checks with Varnish’s compiler');

function logger(): { log: Logger; text: () => string } {
  let text = '';
  const out = new Writable({
    write: (c: Buffer, _e, cb) => {
      text += c.toString();
      cb();
    },
  });
  return { log: new Logger({ out, color: false }), text: () => text };
}

function vclApp(body: string): string {
  const dir = tmpDir('rbp-vcl-');
  fs.mkdirSync(path.join(dir, '.rbp'));
  fs.writeFileSync(path.join(dir, '.rbp', 'cache.vcl'), body);
  return dir;
}

describeNeeding(varnishd, 'checkVcl with Varnish’s own compiler', () => {
  it('accepts the fixture VCL and logs the check', () => {
    const { log, text } = logger();
    checkVcl(cacheVcl({}, path.join(FIXTURES, 'flow-app-cache'))!, log);
    expect(text()).toMatch(/Checking the cache configuration \.rbp\/cache\.vcl with varnishd -C\n {2}- valid \([\d.]+m?s\)/);
  });
  it('rejects a syntax error with the compiler’s message', () => {
    const { log } = logger();
    let err: UserError | undefined;
    try {
      checkVcl(cacheVcl({}, path.join(FIXTURES, 'flow-app-badvcl'))!, log);
    } catch (e) {
      err = e as UserError;
    }
    expect(err?.id).toBe('request-flow/cache/vcl');
    const text = renderUserError(err!.data);
    expect(text).toContain("Expected ';' got '}'");
    expect(text).toContain('! Seen: .rbp/cache.vcl: ".rbp/cache.vcl"');
    expect(text).not.toContain('Could not delete');
  });
  it('rejects a VCL that declares its own default backend', () => {
    const dir = vclApp('vcl 4.1;\nbackend default { .host = "127.0.0.1"; .port = "8080"; }\n');
    expect(() => checkVcl(cacheVcl({}, dir)!, logger().log)).toThrow(/Varnish rejects/);
    try {
      checkVcl(cacheVcl({}, dir)!, logger().log);
    } catch (e) {
      expect((e as UserError).data.details?.join('\n')).toContain('Only one default director possible');
    }
  });
});

describe('checkVcl without varnishd', () => {
  it('warns that it cannot check (the launch needs varnishd)', () => {
    const { log, text } = logger();
    checkVcl(cacheVcl({}, path.join(FIXTURES, 'flow-app-badvcl'))!, log, { RBP_TOOL_VARNISHD: '/nonexistent/varnishd' });
    expect(text()).toContain('! WARNING Cannot check .rbp/cache.vcl: varnishd is not installed here, or RBP_TOOL_VARNISHD is not an executable.');
  });
});
