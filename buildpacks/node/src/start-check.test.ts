import { describe, expect, it } from 'vitest';
import { scriptFile } from './start-check.ts';

describe('scriptFile: the file a start command runs', () => {
  it('skips flags, variables and exec', () => {
    expect(scriptFile('node dist/index.js')).toBe('dist/index.js');
    expect(scriptFile('NODE_ENV=production node --enable-source-maps -r dotenv/config .output/server/index.mjs')).toBe('.output/server/index.mjs');
    expect(scriptFile('exec node server.js')).toBe('server.js');
    expect(scriptFile('npm run build && node build/app.cjs')).toBe('build/app.cjs');
  });
  it('says nothing for commands that run no file', () => {
    expect(scriptFile('next start')).toBeUndefined();
    expect(scriptFile('node -e "1"')).toBeUndefined();
    expect(scriptFile('bun run start')).toBeUndefined();
  });
});
