/** bin/launch: serves the site as the build decided and the run environment says. */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runLaunch } from '../../../lib/launch/entry.ts';
import { staticLaunch, type StaticDecision } from './server.ts';

// The same launch the build wrote the direct launch script from; the decision is read inside the
// launch's error handling, where a missing one is its user error.
void runLaunch(() => staticLaunch(readDecision<StaticDecision>()));
