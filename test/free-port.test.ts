/** freePort (test/helpers/rbp.ts): each test worker hands out ports of its own range, never a busy one. */
import net from 'node:net';
import { expect, it } from 'vitest';
import { freePort, workerPorts } from './helpers/rbp.ts';

it('hands out this worker’s own ports in turn, below the kernel’s ephemeral ones, and skips a busy one', async () => {
  const { base, size } = workerPorts();
  expect(base + size).toBeLessThanOrEqual(32_768);
  const [a, b] = [await freePort(), await freePort()];
  for (const p of [a, b]) {
    expect(p).toBeGreaterThanOrEqual(base);
    expect(p).toBeLessThan(base + size);
  }
  expect(b).not.toBe(a);
  // The next one in turn is taken by someone else: it is skipped.
  const busy = net.createServer();
  const next = b + 1 < base + size ? b + 1 : base;
  await new Promise<void>((resolve) => busy.listen(next, '0.0.0.0', resolve));
  try {
    const c = await freePort();
    expect(c).not.toBe(next);
    expect([a, b]).not.toContain(c);
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
  }
});
