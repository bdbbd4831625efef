/**
 * CC_REQUEST_FLOW=block (contract, "Request flow" rule 4): the launch entrypoint itself answers 403
 * to every request on the public port, with a small in-process HTTP server, while the app keeps
 * running behind it on its own port.
 */
import http from 'node:http';
import { FAILURE_STATUS } from './middlewares.ts';
import type { Exit, Handle, Member } from '../supervisor.ts';

/** CC_REQUEST_FLOW=block: the launcher itself answers 403 on the public port. */
export function blockMember(port: number): Member {
  return {
    name: 'public access block',
    shown: `403 to every request on port ${port}`,
    listen: port,
    status: () => FAILURE_STATUS.block,
    start(): Handle {
      const server = http.createServer((_req, res) => {
        res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Forbidden: public access to this application is blocked.\n');
      });
      const exited = new Promise<Exit>((resolve) => {
        server.once('error', (error) => resolve({ code: null, signal: null, error }));
        server.once('close', () => resolve({ code: 0, signal: null }));
      });
      server.listen(port);
      return {
        exited,
        signal: () => {
          server.close();
          server.closeAllConnections();
        },
      };
    },
  };
}
