import { describe, expect, it } from 'vitest';
import { librariesPhrase } from '../../lib/deps/operator-copy.js';

describe('the log line of an operator tool copied into an image', () => {
  it('names one library, or counts many and names the first three', () => {
    expect(librariesPhrase([])).toBe('');
    expect(librariesPhrase(['libphp.so'])).toBe(' and libphp.so');
    expect(librariesPhrase(['a.so', 'b.so'])).toBe(' and 2 libraries it loads (a.so, b.so)');
    expect(librariesPhrase(['a.so', 'b.so', 'c.so', 'd.so', 'e.so'])).toBe(' and 5 libraries it loads (a.so, b.so, c.so, …)');
  });
});
