import { describe, expect, it } from 'vitest';
import { maskedLines, maskSecrets, secretValues } from './mask.ts';

const env = { NPM_TOKEN: 'npm_TOKENVALUE123', CC_NPM_BASIC_AUTH: 'alice:s3cretpw', GITHUB_TOKEN: 'ghp_abcdef', CC_WEBROOT: '/public', SHORT_TOKEN: 'abc' };

describe('masking secrets in tool output', () => {
  it('hides the values of secret variables, the Base64 of CC_NPM_BASIC_AUTH and URL credentials', () => {
    const b64 = Buffer.from('alice:s3cretpw').toString('base64');
    const text = `token npm_TOKENVALUE123, auth ${b64}, pair alice:s3cretpw, gh ghp_abcdef, root /public, https://bob:pw@host/x?token=t1`;
    expect(maskSecrets(text, env)).toBe('token ***, auth ***, pair ***, gh ***, root /public, https://bob:***@host/x?token=***');
  });

  it('leaves values too short to be secrets (they would mask ordinary words)', () => {
    expect(secretValues(env)).not.toContain('abc');
    expect(maskSecrets('abc', env)).toBe('abc');
  });

  it('masks a secret split across two chunks, by emitting whole lines only', () => {
    const shown: string[] = [];
    const w = maskedLines(env, (t) => shown.push(t));
    w.write(Buffer.from('first npm_TOKEN'));
    w.write(Buffer.from('VALUE123 line\nsecond'));
    w.write('\u00e9'.slice(0, 1));
    w.end();
    expect(shown.join('')).toBe('first *** line\nsecond\u00e9');
    expect(shown.join('')).not.toContain('TOKENVALUE');
  });
});
