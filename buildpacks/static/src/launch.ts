import path from 'node:path';
import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';

runLaunch((env) => {
  const d = readDecision<{ runtime: string; webroot: string }>();
  const port = env.CC_STATIC_PORT ?? env.PORT ?? '8080';
  const root = path.join(process.cwd(), d.webroot);
  return { argv: [env.RBP_TOOL_CADDY ?? 'caddy', 'file-server', '--root', root, '--listen', `:${port}`], env: {}, facts: { runtime: 'static', port } };
});
