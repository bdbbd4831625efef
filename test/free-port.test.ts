/** freePort (test/helpers/rbp.ts): each test worker hands out ports of its own range, never a busy one. */
import net from 'node:net';
import { expect, it } from 'vitest';
import { freePort } from './helpers/rbp.ts';

it('hands out this worker’s own ports in turn, below the kernel’s ephemeral ones, and skips a busy one', async () => {
  // As freePort reads it: RBP_TEST_PORT_SLOT moves the whole run (two slots of workers each).
  const slot = Number(process.env.RBP_TEST_PORT_SLOT ?? 0) || 0;
  const worker = (Math.max(0, Number(process.env.VITEST_POOL_ID ?? 1) - 1) + slot * 2) % 24;
  const [a, b] = [await freePort(), await freePort()];
  for (const p of [a, b]) {
    expect(p).toBeGreaterThanOrEqual(20_000 + worker * 500);
    expect(p).toBeLessThan(20_000 + (worker + 1) * 500);
  }
  expect(b).not.toBe(a);
  // The next one in turn is taken by someone else: it is skipped.
  const busy = net.createServer();
  const next = b + 1 < 20_000 + (worker + 1) * 500 ? b + 1 : 20_000 + worker * 500;
  await new Promise<void>((resolve) => busy.listen(next, '0.0.0.0', resolve));
  try {
    const c = await freePort();
    expect(c).not.toBe(next);
    expect([a, b]).not.toContain(c);
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
  }
});
