/**
 * Backing services a fixture's HTTP checks need (test.json `services`): the real Debian servers,
 * started on a free port of this test worker for one case and stopped by their pid. The app finds
 * them through `<NAME>_HOST` and `<NAME>_PORT` in its run environment (REDIS_HOST, REDIS_PORT).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { findOnPath } from '../../lib/fsx.ts';
import { freePort } from './rbp.ts';
import { settledFlag } from './settled.ts';

export const SERVICES = {
  redis: { command: 'redis-server', env: 'REDIS', argv: (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'] },
  // As root memcached needs a user to become.
  memcached: {
    command: 'memcached',
    env: 'MEMCACHED',
    argv: (port: number) => ['-l', '127.0.0.1', '-p', String(port), '-U', '0', ...(process.getuid?.() === 0 ? ['-u', 'nobody'] : [])],
  },
} as const;

export type ServiceName = keyof typeof SERVICES;

export interface RunningService {
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The Debian packages of the service commands this machine lacks (decided when tests are registered). */
export function missingServices(names: readonly ServiceName[]): string[] {
  return names.filter((n) => !findOnPath(SERVICES[n].command, process.env.PATH)).map((n) => SERVICES[n].command);
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts `name` on a free port and waits until it accepts connections. */
export async function startService(name: ServiceName): Promise<RunningService> {
  const svc = SERVICES[name];
  const port = await freePort();
  const child: ChildProcess = spawn(svc.command, svc.argv(port), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer | string) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer | string) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ended = settledFlag(exited);
  const stop = async () => {
    if (!ended() && child.pid) child.kill('SIGTERM');
    await exited;
  };
  for (let i = 0; i < 100; i++) {
    if (await accepting(port)) return { env: { [`${svc.env}_HOST`]: '127.0.0.1', [`${svc.env}_PORT`]: String(port) }, stop };
    if (ended()) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`${svc.command} did not listen on ${port}:\n${output}`);
}
