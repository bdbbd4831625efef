import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';
import { serverPlan, STATIC_PORT_VARIABLE, type StaticDecision } from './server.ts';

// The decision is read inside the plan, where a missing one is the launch's user error.
runLaunch({ portVariable: STATIC_PORT_VARIABLE, plan: (ctx) => serverPlan(readDecision<StaticDecision>(), ctx) });
