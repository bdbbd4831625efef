/**
 * The launch entrypoint: runs under the installed Node.js (its layer's bin/ is on the launch PATH).
 * Plans the start command from what the build decided and the run-time environment; the launch
 * (lib/launch/entry.ts) runs prestart before and poststart after the start script, as npm would.
 */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runLaunch } from '../../../lib/launch/entry.ts';
import { nodeRuntime, type NodeDecision } from './launch-plan.ts';

// Node.js apps read PORT (contract, node rule 1): the runtime has no port variable of its own.
void runLaunch(() => nodeRuntime(readDecision<NodeDecision>()));
