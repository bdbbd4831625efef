/**
 * The launch planner of the node runtime (plan.cjs in the launcher layer, run by rbp-launch on the
 * runtime's own Node.js): plans the start command from what the build decided and the launch
 * environment; the launch runs prestart before and poststart after the start script, as npm would.
 */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runPlanner } from '../../../lib/launch/planner.ts';
import { nodeRuntime, type NodeDecision } from './launch-plan.ts';

// Node.js apps read PORT (contract, node rule 1): the runtime has no port variable of its own.
void runPlanner(() => nodeRuntime(readDecision<NodeDecision>()));
