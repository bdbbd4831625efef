/**
 * The static fixtures whose test.json says all that is checked, through the one driver
 * (test/helpers/fixture-driver.ts): every server path of rule 5 with the contract's servers, run
 * for real: Static Web Server 2.42.0 (installed by the buildpack from a mirror holding the real
 * binary, see helpers.ts) and Caddy 2.11.2 (RBP_TOOL_CADDY, from the tool cache); the exact command
 * lines, the build cache content of rule 4, and the pages served.
 */
import path from 'node:path';
import { fixtureSuite } from '../helpers/fixture-driver.ts';
import { contractCaddy, swsMirror, swsTool } from './helpers.ts';

const caddy = contractCaddy('static fixtures (Caddy)');
const sws = swsTool('static fixtures (Static Web Server)');
let mirror: string;

fixtureSuite(
  [
    'static-index-html',
    'static-webroot-htm',
    'static-build-command',
    'static-caddyfile',
    'static-caddy-forced',
    'static-caddyfile-invalid',
    'static-paketo-web-root',
  ],
  {
    type: 'static',
    ...(caddy.skip || sws.skip ? { skip: "the contract's Static Web Server and Caddy are needed (see the reason above)" } : {}),
    setup: async () => {
      mirror = await swsMirror(sws.path());
    },
    // The operator's tools of this machine are left out: Static Web Server comes through the installer.
    operatorEnv: () => ({
      ...Object.fromEntries(
        Object.keys(process.env)
          .filter((k) => k.startsWith('RBP_TOOL_'))
          .map((k) => [k, '']),
      ),
      RBP_DEPENDENCY_MIRROR: mirror,
      RBP_TOOL_CADDY: caddy.path(),
    }),
    launchVars: (out) => ({ sws: path.join(out, 'layers', 'rbp_static', 'static-web-server', 'bin', 'static-web-server'), caddy: caddy.path() }),
  },
);
