/**
 * Ports between middlewares: the OS picks free loopback ports. All are held open until every one is
 * picked, so they differ from each other, and from the ports the plan already uses.
 */
import net from 'node:net';

function hold(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

export async function allocatePorts(count: number, exclude: readonly number[]): Promise<number[]> {
  const held: net.Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const s = await hold();
      held.push(s);
      const { port } = s.address() as net.AddressInfo;
      if (!exclude.includes(port)) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
  return ports;
}

/** Whether the port can be bound on all interfaces right now. */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
  });
}
